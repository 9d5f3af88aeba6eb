// The multi-replica acceptance: a real Redis, three real `switchyard` CLI processes (each with its
// own server-everything child) and nginx round robin from deploy/nginx/switchyard.conf, all on
// loopback. Every official client kind works through nginx and is served by more than one
// replica; then one replica is SIGKILLed mid-session.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import * as v2 from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as V1Streamable } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fetch2024, progressOk, type ClientKind } from '../helpers/clients.js';
import { openSse, post, type SseReader } from '../helpers/http.js';
import { deployNginxConfig, freePort, runNginx } from '../helpers/nginx.js';
import { startRedis } from '../helpers/redis.js';
import { spawnReplica, until, type ReplicaProcess } from '../helpers/replicas.js';

const require = createRequire(import.meta.url);
const KINDS = ['v2-2026', 'v2-default', 'v1-streamable', 'v1-sse-2024'] as const satisfies readonly ClientKind[];
type Kind = (typeof KINDS)[number];

/** One HTTP request a client made through nginx, and the replica nginx passed it to. */
interface Hop {
  method: string;
  path: string;
  upstream: string;
  session: string | undefined;
}

interface Recorded {
  kind: Kind;
  hops: Hop[] & { inFlight?: number };
  errors: unknown[];
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(
    p: { name: string; arguments?: Record<string, unknown> },
    o?: { onprogress?: (p: { progress: number }) => void },
  ): Promise<{ content?: Array<{ type: string; text?: string }> }>;
  close(): Promise<void>;
}

/** A fetch that records which replica answered (nginx's `X-Switchyard-Upstream`) and the session id sent; `inFlight` counts the requests not answered yet. */
function recording(hops: Hop[] & { inFlight?: number }, base: typeof fetch = fetch): typeof fetch {
  hops.inFlight = 0;
  return async (input, init) => {
    hops.inFlight!++;
    let res: Response;
    try {
      res = await base(input, init);
    } finally {
      hops.inFlight!--;
    }
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    hops.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      // nginx lists every replica it tried; the last one answered.
      upstream: (res.headers.get('x-switchyard-upstream') ?? '').split(', ').pop()!,
      session: new Headers(init?.headers).get('mcp-session-id') ?? undefined,
    });
    return res;
  };
}

/** One official client of `kind` through `base` (nginx), answering elicitation (and sampling, for the 2024 client). */
async function connect(kind: Kind, base: string): Promise<Recorded> {
  const hops: Hop[] & { inFlight?: number } = [];
  const errors: unknown[] = [];
  if (kind === 'v2-2026' || kind === 'v2-default') {
    const client = new v2.Client(
      { name: `replicas-${kind}`, version: '1.0.0' },
      {
        capabilities: { elicitation: { form: {} } },
        ...(kind === 'v2-2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {}),
      },
    );
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept' as const, content: { name: 'Ada' } }));
    client.onerror = (e) => errors.push(e);
    await client.connect(new v2.StreamableHTTPClientTransport(new URL(`${base}/mcp`), { fetch: recording(hops) }));
    return {
      kind,
      hops,
      errors,
      listTools: () => client.listTools(),
      callTool: (p, o) => client.callTool(p, o),
      close: () => client.close(),
    };
  }
  const client = new V1Client({ name: `replicas-${kind}`, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'sampled by the client' },
    model: 'test-model',
  }));
  client.onerror = (e) => errors.push(e);
  const transport =
    kind === 'v1-sse-2024'
      ? new SSEClientTransport(new URL(`${base}/sse`), { fetch: recording(hops, fetch2024) })
      : new V1Streamable(new URL(`${base}/mcp`), { fetch: recording(hops) });
  await client.connect(transport);
  return {
    kind,
    hops,
    errors,
    listTools: () => client.listTools(),
    callTool: (p, o) => client.callTool(p, undefined, o) as never,
    close: () => client.close(),
  };
}

/** Echo through `c` with a message no other request uses; the result must be that message (nothing misdelivered). */
async function echo(c: Recorded, tag: string): Promise<void> {
  const r = await c.callTool({ name: 'echo', arguments: { message: `${c.kind} ${tag}` } });
  assert.deepEqual(r.content, [{ type: 'text', text: `Echo: ${c.kind} ${tag}` }]);
}

const handled = (r: ReplicaProcess, kind: string) => r.records.filter((x) => x.msg === 'replica message handled' && x.kind === kind).length;

test('three replicas behind nginx without stickiness: every client kind, then one replica SIGKILLed mid-session', { timeout: 90_000 }, async (t) => {
  const redis = await startRedis(t);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-replicas-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'switchyard.json');
  const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const nginxPort = await freePort();
  writeFileSync(
    configFile,
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0, path: '' },
      // nginx forwards the client's Host (nginx's own address), which a loopback bind's default (its own
      // port only) refuses; an entry without a port admits 127.0.0.1 at any port, nginx's and the replicas'.
      allowedHosts: ['127.0.0.1'],
      dialects: { modern: true, streamable: true, legacySse: true },
      // The Redis URL comes from --redis, the key from SWITCHYARD_CLUSTER_KEY, the id from SWITCHYARD_REPLICA_ID.
      cluster: {},
      logLevel: 'debug',
      upstreams: { everything: { command: process.execPath, args: [everything, 'stdio'], path: '/mcp' } },
    }),
  );
  const replicas = await Promise.all(['r1', 'r2', 'r3'].map((id) => spawnReplica(t, { id, configFile, redis: redis.url })));
  const byAddress = new Map(replicas.map((r) => [`127.0.0.1:${r.port}`, r]));
  const { dir: nginxDir, main } = deployNginxConfig(
    t,
    nginxPort,
    replicas.map((r) => r.port),
    'add_header X-Switchyard-Upstream $upstream_addr always;',
  );
  await runNginx(t, main, nginxDir, nginxPort);
  const base = `http://127.0.0.1:${nginxPort}`;
  for (const r of replicas) assert.ok(r.records.some((x) => x.msg === 'cluster replica' && x.replicaId === r.id && x.redis === 'on'));

  // --- every client kind through nginx: list, echo, progress, a server-to-client request ---
  const clients = new Map<Kind, Recorded>();
  for (const kind of KINDS) {
    const c = await connect(kind, base);
    t.after(() => c.close().catch(() => {}));
    clients.set(kind, c);
    const { tools } = await c.listTools();
    for (const name of ['echo', 'trigger-long-running-operation', 'trigger-elicitation-request', 'trigger-sampling-request'])
      assert.ok(
        tools.some((x) => x.name === name),
        `${kind} lists ${name}`,
      );
    for (let i = 0; i < 3; i++) await echo(c, `warm ${i}`);
    const seen: number[] = [];
    const done = await c.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      { onprogress: (p) => seen.push(p.progress) },
    );
    assert.equal(done.content?.[0]?.text, 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.');
    assert.ok(progressOk(kind, seen, 3), `${kind} progress ${JSON.stringify(seen)}`);
    if (kind === 'v1-sse-2024') {
      // elicitation/create does not exist in 2024-11-05; sampling does, and its answer is a POST like any other.
      const sampled = await c.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } });
      assert.match(String(sampled.content?.[0]?.text), /sampled by the client/);
    } else {
      const asked = await c.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      assert.equal(asked.content?.[0]?.text, '✅ User provided the requested information!');
      assert.equal(asked.content?.[1]?.text, 'User inputs:\n- Name: Ada');
    }
    const served = new Set(c.hops.map((h) => h.upstream));
    assert.ok(served.size > 1, `${kind} served by ${[...served].join(', ')}`);
    for (const u of served) assert.ok(byAddress.has(u), `${kind}: ${u} is a replica`);
  }

  // The 2025 clients used one session id, on more than one replica.
  for (const kind of ['v2-default', 'v1-streamable'] as const) {
    const posts = clients.get(kind)!.hops.filter((h) => h.method === 'POST' && h.session !== undefined);
    assert.equal(new Set(posts.map((h) => h.session)).size, 1, `${kind}: one session id`);
    assert.ok(new Set(posts.map((h) => h.upstream)).size > 1, `${kind}: its session served by several replicas`);
  }
  // The HTTP+SSE client's POSTs reached other replicas too; each of those was carried out by the stream's replica.
  const sse = clients.get('v1-sse-2024')!;
  // Its answers to server requests are POSTs whose 202 may come after the call's result.
  await until(() => sse.hops.inFlight === 0, 'the HTTP+SSE client to have its POSTs answered');
  const streamHop = sse.hops.find((h) => h.method === 'GET' && h.path === '/sse')!;
  const owner = byAddress.get(streamHop.upstream)!;
  const ssePosts = sse.hops.filter((h) => h.method === 'POST');
  const forwarded = ssePosts.filter((h) => h.upstream !== streamHop.upstream).length;
  assert.ok(forwarded > 0 && forwarded < ssePosts.length, `${forwarded} of ${ssePosts.length} HTTP+SSE POSTs on other replicas`);
  assert.equal(handled(owner, 'sse.post'), forwarded);
  // The 2026-07-28 retry went to the replica holding the upstream call (consecutive POSTs alternate replicas).
  assert.ok(
    replicas.some((r) => handled(r, 'call.resume') > 0),
    'a held call resumed on its replica',
  );

  // --- a raw 2025-11-25 stream on the replica about to die, read up to its second progress event ---
  const victim = owner;
  const survivors = replicas.filter((r) => r !== victim);
  const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const opened = await post(
    `${victim.origin}/mcp`,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
    H,
  );
  const sh = { ...H, 'mcp-session-id': String(opened.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
  const raw: SseReader = await openSse(
    `${victim.origin}/mcp`,
    'POST',
    sh,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 42,
      method: 'tools/call',
      params: { name: 'trigger-long-running-operation', arguments: { duration: 6, steps: 6 }, _meta: { progressToken: 'k' } },
    }),
  );
  t.after(() => raw.close());
  assert.equal((await raw.next(10_000)).data, '');
  const e1 = await raw.next(10_000);
  const e2 = await raw.next(10_000);
  assert.deepEqual(
    [e1, e2].map((e) => (JSON.parse(e.data) as { params: { progress: number } }).params.progress),
    [1, 2],
  );

  // --- SIGKILL, one second before its next event ---
  const sseErrors = sse.errors.length;
  await victim.kill('SIGKILL');
  await raw.ended;

  // 2025 sessions go on through the other replicas with their existing session ids; nothing is lost or misdelivered.
  const before = new Map((['v2-default', 'v1-streamable'] as const).map((k) => [k, clients.get(k)!.hops.find((h) => h.session)!.session]));
  const marks = new Map([...clients.keys()].map((k) => [k, clients.get(k)!.hops.length]));
  await Promise.all(
    (['v2-2026', 'v2-default', 'v1-streamable'] as const).map(async (k) => {
      for (let i = 0; i < 4; i++) await echo(clients.get(k)!, `after ${i}`);
    }),
  );
  for (const k of ['v2-2026', 'v2-default', 'v1-streamable'] as const) {
    const later = clients.get(k)!.hops.slice(marks.get(k));
    for (const h of later) assert.ok(survivors.some((r) => `127.0.0.1:${r.port}` === h.upstream) || h.upstream === '', `${k}: ${h.upstream} is alive`);
    if (k !== 'v2-2026') for (const h of later.filter((x) => x.method === 'POST')) assert.equal(h.session, before.get(k), `${k}: same session id`);
  }

  // A stream resumed with Last-Event-ID on another replica replays exactly what it missed, then
  // ends with an error for its request (the replica running it is gone).
  const resumed = await openSse(`${base}/mcp`, 'GET', {
    accept: 'text/event-stream',
    'mcp-session-id': sh['mcp-session-id'],
    'mcp-protocol-version': '2025-11-25',
    'last-event-id': e1.id!,
  });
  assert.equal(resumed.status, 200);
  const replay = [await resumed.next(10_000), await resumed.next(10_000)];
  await resumed.ended;
  assert.deepEqual(
    replay.map((e) => ({ id: e.id, data: JSON.parse(e.data) as unknown })),
    [
      { id: e2.id, data: JSON.parse(e2.data) as unknown },
      {
        id: undefined,
        data: {
          jsonrpc: '2.0',
          id: 42,
          error: { code: -32000, message: 'The replica holding this session, stream or call is gone: the replica running this request stopped; reissue it' },
        },
      },
    ],
  );

  // The HTTP+SSE client whose stream was on the killed replica saw it end; its EventSource
  // reconnected through nginx to a live replica, which opened a new session.
  await until(() => sse.errors.length > sseErrors, 'the HTTP+SSE stream to end');
  await until(() => sse.hops.filter((h) => h.method === 'GET' && h.path === '/sse').length > 1, 'the HTTP+SSE client to reconnect');
  const again = sse.hops.filter((h) => h.method === 'GET' && h.path === '/sse')[1];
  assert.ok(
    survivors.some((r) => `127.0.0.1:${r.port}` === again.upstream),
    again.upstream,
  );
  // A fresh HTTP+SSE client works through the survivors.
  const fresh = await connect('v1-sse-2024', base);
  t.after(() => fresh.close().catch(() => {}));
  for (let i = 0; i < 3; i++) await echo(fresh, `fresh ${i}`);
});
