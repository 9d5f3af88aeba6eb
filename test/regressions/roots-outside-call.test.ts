// Regression: under `isolation: per-session` a 2025-era HTTP upstream session serves one client
// session, yet a `roots/list` it sent on its GET stream while no call was in flight was answered
// -32603 (`Switchyard cannot route this request to a client`), and a client's
// `notifications/roots/list_changed` reached no upstream (so upstreams were told `roots: {}`,
// never `listChanged`). Found reading the README's "Not yet" list against 2025-11-25
// client/roots (a server may ask for the roots at any time; a client that declared
// `listChanged` tells it of changes). Now the request goes to that client on its own stream (the
// 2025 GET stream, the 2024-11-05 SSE stream) and its answer goes back under the upstream's id;
// the notification reaches the client's own upstream session, which was told `listChanged`.
// Upstreams: a hand-made 2025-06-18 Streamable HTTP server that asks on its GET stream as soon
// as it opens and again after each roots change, and server-everything (Streamable HTTP and
// HTTP+SSE), whose `get-roots-list` tool shows the roots it learned outside any call.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import * as v2 from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fetch2024, serveStdioTransport } from '../helpers/clients.js';
import { gateway } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';
import { listenForTest } from '../helpers/stub-http.js';

/** One session of the stub upstream: what its client declared, its GET stream, what came back. */
interface StubSession {
  caps: Record<string, unknown>;
  clientName: string;
  get?: http.ServerResponse;
  /** Responses the client (through the gateway) POSTed, in order. */
  answers: Array<Record<string, unknown>>;
  /** `notifications/roots/list_changed` received. */
  changes: number;
  asked: number;
}

/**
 * A 2025-06-18 Streamable HTTP server by hand: sessions by `Mcp-Session-Id`; a session whose
 * client declared `roots` is sent `roots/list` (ids `roots-1`, `roots-2`, …) on its GET stream
 * when the stream opens and after each `notifications/roots/list_changed`, never inside a call.
 */
async function rootsAskingUpstream(
  t: { after(fn: () => Promise<void>): void },
  o: { cancelFirst?: boolean; burst?: number } = {},
): Promise<{ url: string; sessions: Map<string, StubSession> }> {
  const sessions = new Map<string, StubSession>();
  const event = (s: StubSession, m: Record<string, unknown>) => s.get!.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...m })}\n\n`);
  const ask = (s: StubSession) => {
    if (!s.get || s.caps.roots === undefined) return;
    const id = `roots-${++s.asked}`;
    event(s, { id, method: 'roots/list' });
    // `cancelFirst`: the first request is taken back at once (basic/utilities/cancellation), and
    // a second one follows.
    if (o.cancelFirst && s.asked === 1) {
      event(s, { method: 'notifications/cancelled', params: { requestId: id, reason: 'no longer needed' } });
      ask(s);
    }
  };
  const json = (res: http.ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      const s = sid === undefined ? undefined : sessions.get(sid);
      if (req.method === 'GET') {
        if (!s) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(': open\n\n');
        s.get = res;
        // `burst`: that many requests at once, when the stream opens.
        for (let i = 1; i < (o.burst ?? 1); i++) ask(s);
        return ask(s);
      }
      if (req.method === 'DELETE') {
        s?.get?.end();
        if (sid !== undefined) sessions.delete(sid);
        return void res.writeHead(200).end();
      }
      const m = JSON.parse(text) as { id?: string | number; method?: string; params?: Record<string, unknown> } & Record<string, unknown>;
      if (m.method === 'initialize') {
        const id = randomUUID();
        const p = m.params as { capabilities: Record<string, unknown>; clientInfo: { name: string } };
        sessions.set(id, { caps: p.capabilities, clientName: p.clientInfo.name, answers: [], changes: 0, asked: 0 });
        const result = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'roots-asking', version: '1.0.0' } };
        return json(res, { jsonrpc: '2.0', id: m.id, result }, { 'mcp-session-id': id });
      }
      if (!s) return void res.writeHead(404).end();
      if (m.method === undefined) {
        s.answers.push(m);
        return void res.writeHead(202).end();
      }
      if (m.id === undefined) {
        res.writeHead(202).end();
        if (m.method === 'notifications/roots/list_changed') {
          s.changes++;
          ask(s);
        }
        return;
      }
      if (m.method === 'tools/list') return json(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } });
      if (m.method === 'ping') return json(res, { jsonrpc: '2.0', id: m.id, result: {} });
      return json(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
    });
  });
  return { url: `${await listenForTest(t, server)}/mcp`, sessions };
}

/** A fetch that offers `version` in `initialize` (the v1 SDK offers 2025-11-25; PEERS.md). */
function fetchAt(version: string): typeof fetch {
  return async (input, init) => {
    if (init?.body && typeof init.body === 'string' && init.body.includes('"initialize"')) {
      const msg = JSON.parse(init.body) as { method?: string; params?: { protocolVersion?: string } };
      if (msg.method === 'initialize' && msg.params) init = { ...init, body: JSON.stringify({ ...msg, params: { ...msg.params, protocolVersion: version } }) };
    }
    return fetch(input, init);
  };
}

/** Waits (bounded) until `done()` holds. */
async function until(done: () => boolean, what: string, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !done();) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** An official v1 client declaring `roots.listChanged` that answers `roots/list` with `roots.now`. */
function rootsClient(name: string): { client: Client; roots: { now: Array<{ uri: string; name: string }> }; asked: () => number } {
  const roots = { now: [{ uri: 'file:///project/a', name: 'a' }] };
  let asked = 0;
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    asked++;
    return { roots: roots.now };
  });
  return { client, roots, asked: () => asked };
}

/** The one stub session opened for client `name`. */
function sessionOf(sessions: Map<string, StubSession>, name: string): StubSession | undefined {
  return [...sessions.values()].find((s) => s.clientName === name);
}

for (const kind of ['streamable-2025-06-18', 'sse-2024-11-05'] as const) {
  test(`${kind} client, per-session 2025 upstream: a roots/list outside any call reaches the client, and its roots changes reach the upstream`, async (t) => {
    const up = await rootsAskingUpstream(t);
    const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-06-18', dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
    const { client, roots, asked } = rootsClient(`roots-${kind}`);
    const transport =
      kind === 'sse-2024-11-05'
        ? new SSEClientTransport(new URL(gw.url), { fetch: fetch2024 })
        : new StreamableHTTPClientTransport(new URL(gw.url), { fetch: fetchAt('2025-06-18') });
    await client.connect(transport);
    t.after(() => client.close());

    // The client's own stream (the GET stream it opens after initialize; the HTTP+SSE stream)
    // opens its upstream session, whose GET stream asks at once. No call is ever made.
    await until(() => (sessionOf(up.sessions, `roots-${kind}`)?.answers.length ?? 0) >= 1, 'the answer to roots-1');
    const own = sessionOf(up.sessions, `roots-${kind}`)!;
    assert.deepEqual(own.answers, [{ jsonrpc: '2.0', id: 'roots-1', result: { roots: [{ uri: 'file:///project/a', name: 'a' }] } }]);
    assert.equal(asked(), 1);
    // The upstream session was told the roots change notice will come, as the client declared it.
    assert.deepEqual(own.caps, { roots: { listChanged: true } });
    // The gateway's own session was told no roots: there is no one client to ask.
    const control = [...up.sessions.values()].filter((s) => s !== own);
    assert.ok(control.length >= 1);
    for (const s of control) assert.equal(s.caps.roots, undefined);

    // A roots change: the notice reaches the client's upstream session, which asks again.
    roots.now = [{ uri: 'file:///project/b', name: 'b' }];
    await client.sendRootsListChanged();
    await until(() => own.answers.length >= 2, 'the answer to roots-2');
    assert.equal(own.changes, 1);
    assert.deepEqual(own.answers[1], { jsonrpc: '2.0', id: 'roots-2', result: { roots: [{ uri: 'file:///project/b', name: 'b' }] } });
    for (const s of control) assert.equal(s.changes, 0);
  });
}

test('official v2 client (its default 2025 handshake), per-session 2025 upstream: a roots/list outside any call reaches it, and its roots changes reach the upstream', async (t) => {
  const up = await rootsAskingUpstream(t);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-06-18' });
  let roots = [{ uri: 'file:///project/v2', name: 'v2' }];
  const client = new v2.Client({ name: 'roots-v2', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler('roots/list', () => ({ roots }));
  await client.connect(new v2.StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());
  await until(() => (sessionOf(up.sessions, 'roots-v2')?.answers.length ?? 0) >= 1, 'the answer to roots-1');
  const own = sessionOf(up.sessions, 'roots-v2')!;
  assert.deepEqual(own.caps, { roots: { listChanged: true } });
  assert.deepEqual(own.answers, [{ jsonrpc: '2.0', id: 'roots-1', result: { roots: [{ uri: 'file:///project/v2', name: 'v2' }] } }]);
  roots = [];
  await client.sendRootsListChanged();
  await until(() => own.answers.length >= 2, 'the answer to roots-2');
  assert.deepEqual(own.answers[1], { jsonrpc: '2.0', id: 'roots-2', result: { roots: [] } });
});

test('stdio front door client, per-session 2025 upstream: a roots/list outside any call is written to stdout, and its roots changes reach the upstream', async (t) => {
  const up = await rootsAskingUpstream(t);
  const { client, roots, asked } = rootsClient('roots-stdio');
  const transport = serveStdioTransport(up.url, '2025-06-18');
  await client.connect(transport);
  t.after(() => client.close());
  // The stdio session's notifications are attached at initialize: its upstream session opens then.
  await until(() => (sessionOf(up.sessions, 'roots-stdio')?.answers.length ?? 0) >= 1, 'the answer to roots-1');
  const own = sessionOf(up.sessions, 'roots-stdio')!;
  assert.deepEqual(own.caps, { roots: { listChanged: true } });
  assert.deepEqual(own.answers, [{ jsonrpc: '2.0', id: 'roots-1', result: { roots: [{ uri: 'file:///project/a', name: 'a' }] } }]);
  roots.now = [];
  await client.sendRootsListChanged();
  await until(() => own.answers.length >= 2, 'the answer to roots-2');
  assert.deepEqual(own.answers[1], { jsonrpc: '2.0', id: 'roots-2', result: { roots: [] } });
  assert.equal(asked(), 2);
});

test('the upstream cancels its roots/list outside a call: the client is told, with the id it saw, and nothing is answered', async (t) => {
  const up = await rootsAskingUpstream(t, { cancelFirst: true });
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-06-18' });
  const cancelled: unknown[] = [];
  let asked = 0;
  const client = new Client({ name: 'roots-cancel', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, (_req, extra) => {
    // The first is never answered: it waits for its cancellation.
    if (++asked > 1) return { roots: [{ uri: 'file:///project/c', name: 'c' }] };
    return new Promise((_resolve, reject) =>
      extra.signal.addEventListener('abort', () => {
        cancelled.push(extra.signal.reason);
        reject(new Error('cancelled'));
      }),
    );
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url), { fetch: fetchAt('2025-06-18') }));
  t.after(() => client.close());
  await until(() => cancelled.length === 1, 'the cancellation at the client');
  assert.deepEqual(cancelled, ['no longer needed']);
  // The request after it is answered; the cancelled one never was (it would have come first).
  const own = () => sessionOf(up.sessions, 'roots-cancel');
  await until(() => (own()?.answers.length ?? 0) >= 1, 'the answer to roots-2');
  assert.deepEqual(own()!.answers, [{ jsonrpc: '2.0', id: 'roots-2', result: { roots: [{ uri: 'file:///project/c', name: 'c' }] } }]);
});

test('bounded as inside a call: 64 outside requests await the client at most, the 65th is refused at once, and each unanswered one times out', async (t) => {
  const up = await rootsAskingUpstream(t, { burst: 65 });
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-06-18', limits: { clientRequestTimeoutMs: 2_000 } });
  let asked = 0;
  const client = new Client({ name: 'roots-silent', version: '1.0.0' }, { capabilities: { roots: {} } });
  // Never answers: every request waits for the gateway to give up.
  client.setRequestHandler(ListRootsRequestSchema, () => {
    asked++;
    return new Promise<never>(() => {});
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url), { fetch: fetchAt('2025-06-18') }));
  t.after(() => client.close());
  const own = () => sessionOf(up.sessions, 'roots-silent');
  await until(() => (own()?.answers.length ?? 0) >= 1, 'the refusal of roots-65');
  assert.deepEqual(own()!.answers, [
    {
      jsonrpc: '2.0',
      id: 'roots-65',
      error: { code: -32000, message: 'Too many requests: the client has too many server requests awaiting its answers: limit 64' },
    },
  ]);
  await until(() => own()!.answers.length >= 65, 'the 64 deadlines');
  assert.equal(asked, 64);
  const late = own()!.answers.slice(1);
  // Each answer is its own POST: they may arrive in any order.
  assert.deepEqual(
    late.map((a) => Number(String(a.id).slice('roots-'.length))).sort((x, y) => x - y),
    Array.from({ length: 64 }, (_, i) => i + 1),
  );
  for (const a of late) assert.deepEqual(a.error, { code: -32000, message: 'Request timed out: client did not answer roots/list' });
});

test('a 2025 client with no GET stream open: the upstream is told why it cannot be asked outside a call', async (t) => {
  const up = await rootsAskingUpstream(t);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-06-18' });
  // A raw client: initialize with roots, then one call (its upstream session opens, with its GET
  // stream, which asks at once); it never opens a GET stream of its own.
  const h = await initSession(gw.url, '2025-06-18', { roots: {} });
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...h, 'mcp-protocol-version': '2025-06-18' });
  assert.equal(r.status, 200);
  await until(() => (sessionOf(up.sessions, 'raw-test')?.answers.length ?? 0) >= 1, 'the answer to roots-1');
  assert.deepEqual(sessionOf(up.sessions, 'raw-test')!.answers, [
    {
      jsonrpc: '2.0',
      id: 'roots-1',
      error: {
        code: -32602,
        message: "Client cannot answer the server's input request: the client session has no stream open to carry a request outside a call",
      },
    },
  ]);
});

test('what stays refused: a shared upstream session and a 2026-07-28 client have no one client to ask, and no roots change reaches them', async (t) => {
  const up = await rootsAskingUpstream(t);
  // A 2026-07-28 client in front of a per-session upstream: its pooled session (by principal and
  // capabilities) may serve several, and 2026-07-28 has no stream for requests outside a call.
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-06-18' });
  const listed = await post(gw.url, modernBody(1, 'tools/list', {}, { roots: {} }), modernHeaders('tools/list'));
  assert.equal(listed.status, 200);
  await until(() => [...up.sessions.values()].some((s) => s.caps.roots !== undefined && s.answers.length >= 1), 'the pooled session refused');
  const pooled = [...up.sessions.values()].find((s) => s.caps.roots !== undefined)!;
  assert.deepEqual(pooled.caps, { roots: {} });
  assert.deepEqual(pooled.answers, [{ jsonrpc: '2.0', id: 'roots-1', error: { code: -32603, message: 'Switchyard cannot route this request to a client' } }]);

  // A shared upstream session: told no roots, so it asks nothing, and a client's change goes nowhere.
  const shared = await rootsAskingUpstream(t);
  const gw2 = await gateway(t, { upstreamUrl: shared.url, upstreamEra: '2025-06-18', isolation: 'shared' });
  const { client } = rootsClient('roots-shared');
  await client.connect(new StreamableHTTPClientTransport(new URL(gw2.url)));
  t.after(() => client.close());
  await client.listTools();
  await client.sendRootsListChanged();
  await client.ping();
  for (const s of shared.sessions.values()) {
    assert.equal(s.caps.roots, undefined);
    assert.equal(s.changes, 0);
  }
});

for (const mode of ['streamableHttp', 'sse'] as const) {
  test(`server-everything over ${mode}, per-session: it learns the client's roots outside any call, and again after a change`, async (t) => {
    const server = await everythingHttp(t, mode);
    const gw = await gateway(t, { upstreamUrl: server.url });
    const { client, roots, asked } = rootsClient(`everything-${mode}`);
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url), { fetch: fetchAt('2025-06-18') }));
    t.after(() => client.close());
    // server-everything asks 350 ms after `notifications/initialized`, on no request of ours.
    await until(() => asked() >= 1, 'the first roots/list');
    // What it keeps is what its tool shows (it stores the answer once it arrives: asked again until then).
    const shows = async (uri: string) => {
      for (const end = Date.now() + 15_000; ;) {
        const text = ((await client.callTool({ name: 'get-roots-list', arguments: {} })).content as Array<{ text: string }>)[0].text;
        if (text.includes(`URI: ${uri}`)) return;
        if (Date.now() > end) assert.fail(`get-roots-list never showed ${uri}: ${text}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await shows('file:///project/a');
    const before = asked();

    roots.now = [{ uri: 'file:///project/b', name: 'b' }];
    await client.sendRootsListChanged();
    // Its handler asks again at once, outside any call.
    await until(() => asked() > before, 'the roots/list after the change');
    await shows('file:///project/b');
  });
}
