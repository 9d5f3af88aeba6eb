// An upstream that is down: the gateway starts, its mount answers SWY_ERR_UPSTREAM_DOWN with 503
// and Retry-After wherever an HTTP status is still possible (2026-07-28 requests, 2025 initialize,
// HTTP+SSE GET) and in-band otherwise; the aggregate serves its serving members and tells its
// subscribers when members come and go.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { StdioUpstream } from '../../src/upstreams/stdio/index.js';
import { modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { configGateway, freePort, RAW_SERVER, openSession } from '../helpers/ops.js';

const H25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
/** A reconnect backoff of 30 to 60 s: the next attempt is always in the future while the test runs. */
const SLOW_RECONNECT = { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 };

/** Checks a Retry-After against the error's `data.retryAfterMs` and its range; returns the body without that field. */
function withoutRetry(res: { headers: Record<string, unknown>; json: unknown }, path: (j: never) => { data: { retryAfterMs: number } }): unknown {
  const body = structuredClone(res.json) as never;
  const data = path(body).data;
  assert.ok(data.retryAfterMs > 25_000 && data.retryAfterMs <= 60_000, String(data.retryAfterMs));
  assert.equal(res.headers['retry-after'], String(Math.ceil(data.retryAfterMs / 1000)));
  delete (data as { retryAfterMs?: number }).retryAfterMs;
  return body;
}

test('a mount whose upstream is down: 503 with Retry-After for 2026-07-28 requests, 2025 initialize and the HTTP+SSE GET; in-band on an aggregate session', async (t) => {
  const port = await freePort();
  const gw = await configGateway(t, {
    dialects: { legacySse: true },
    limits: SLOW_RECONNECT,
    // Pinned: an era probe retries a refused connection (3 tries, the backoff between them), and at
    // this backoff the start would wait 2 minutes for it; test/regressions/probe-backoff-cap covers those retries.
    upstreams: { demo: { transport: 'embedded' }, late: { url: `http://127.0.0.1:${port}/mcp`, era: '2026-07-28' } },
    aggregate: {},
  });
  const late = gw.mounts.find((m) => m.name === 'late')!.url;
  const health = gw.supervised.get('late')!;
  assert.equal(health.state, 'down');
  assert.equal(health.lastError, `Upstream unavailable: http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  const down = { code: -32000, message: 'Upstream down: late is reconnecting', data: { upstream: 'late' } };

  const modern = await post(late, modernBody(7, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(modern.status, 503);
  assert.deepEqual(
    withoutRetry(modern, (j: { error: { data: { retryAfterMs: number } } }) => j.error),
    { jsonrpc: '2.0', id: 7, error: down },
  );
  const discover = await post(late, modernBody(8, 'server/discover'), modernHeaders('server/discover'));
  assert.equal(discover.status, 503);

  const init = await post(
    late,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H25,
  );
  assert.equal(init.status, 503);
  assert.equal(init.headers['mcp-session-id'], undefined);
  assert.deepEqual(
    withoutRetry(init, (j: { error: { data: { retryAfterMs: number } } }) => j.error),
    { jsonrpc: '2.0', id: 1, error: down },
  );

  const sse = await request(late.replace(/mcp$/, 'sse'), { headers: { accept: 'text/event-stream' } });
  const sseBody = { status: sse.statusCode, headers: sse.headers, json: JSON.parse(await sse.body.text()) as unknown };
  assert.equal(sseBody.status, 503);
  assert.deepEqual(
    withoutRetry(sseBody, (j: { error: { data: { retryAfterMs: number } } }) => j.error),
    { jsonrpc: '2.0', id: null, error: down },
  );

  // The aggregate lists what serves; a call to the down member is answered in-band on the session.
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const { headers: h } = await openSession(agg);
  const list = await post(agg, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, h);
  const names = (list.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name);
  assert.ok(names.length > 0 && names.every((n) => n.startsWith('demo__')), names.join());
  const call = await post(agg, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'late__echo', arguments: {} } }, h);
  assert.equal(call.status, 200);
  assert.deepEqual(
    withoutRetry(call, (j: { error: { data: { retryAfterMs: number } } }) => j.error),
    { jsonrpc: '2.0', id: 3, error: down },
  );
  await request(agg, { method: 'DELETE', headers: h }).then((r) => r.body.dump());
});

test('the aggregate announces list changes as a member goes down and comes back, and lists only what serves', async (t) => {
  const gw = await configGateway(t, {
    upstreams: { demo: { transport: 'embedded' }, kid: { command: process.execPath, args: [RAW_SERVER, 'stdio'] } },
    aggregate: {},
  });
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const { headers: h } = await openSession(agg);
  const tools = async (id: number) =>
    ((await post(agg, { jsonrpc: '2.0', id, method: 'tools/list' }, h)).json as { result: { tools: Array<{ name: string }> } }).result.tools
      .map((x) => x.name)
      .filter((n) => n.startsWith('kid__'));
  assert.deepEqual(await tools(1), ['kid__echo', 'kid__greeting', 'kid__utf8', 'kid__trace', 'kid__connections']);
  const stream = await openSse(agg, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' });
  t.after(() => stream.close());
  assert.equal(stream.status, 200);

  const kid = gw.supervised.get('kid')!;
  const states: string[] = [];
  const back = new Promise<void>((resolve) =>
    kid.onChange((s) => {
      states.push(s);
      if (s === 'up') resolve();
    }),
  );
  process.kill((gw.upstreams.get('kid') as StdioUpstream).pid!, 'SIGKILL');
  // The member serves tools and resources: both lists change as it goes and as it comes back.
  const changes = async () => [JSON.parse((await stream.next()).data), JSON.parse((await stream.next()).data)] as Array<{ method: string }>;
  const both = ['notifications/resources/list_changed', 'notifications/tools/list_changed'];
  const gone = await changes();
  assert.deepEqual(gone.map((m) => m.method).sort(), both);
  for (const m of gone) assert.deepEqual(m, { jsonrpc: '2.0', method: m.method, params: {} });
  await back;
  assert.deepEqual(states, ['down', 'up']);
  const returned = await changes();
  assert.deepEqual(returned.map((m) => m.method).sort(), both);
  for (const m of returned) assert.deepEqual(m, { jsonrpc: '2.0', method: m.method, params: {} });
  assert.deepEqual(await tools(2), ['kid__echo', 'kid__greeting', 'kid__utf8', 'kid__trace', 'kid__connections']);
  await request(agg, { method: 'DELETE', headers: h }).then((r) => r.body.dump());
});
