// Sessions that span replicas: two gateways in this process share a real Redis and one sealing
// key; a 2025 session, its streams, its server-to-client requests, an HTTP+SSE stream and a
// 2026-07-28 held call are each used through the replica that does not hold them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { modernBody, modernHeaders, openSse, post, send, type SseReader } from '../helpers/http.js';
import { createClusterRedis } from '../../src/cluster/redis.js';
import { recordingLog, startRedis } from '../helpers/redis.js';
import { startReplica, until, type TestReplica } from '../helpers/replicas.js';

const require = createRequire(import.meta.url);
const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } as const;

const init = (version: string, capabilities: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 'cluster-test', version: '1.0.0' } },
});

/** Opens a 2025 session on replica `r`; returns its headers for later requests. */
async function session(r: TestReplica, version: string, capabilities: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const res = await post(r.url, init(version, capabilities), { ...H });
  assert.equal(res.status, 200, res.text);
  const sid = String(res.headers['mcp-session-id']);
  const h = { ...H, 'mcp-session-id': sid, 'mcp-protocol-version': version };
  assert.equal((await post(r.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);
  return h;
}

const progress = (token: string, i: number, n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progress: i, total: n, message: `step ${i} of ${n}`, progressToken: token },
});
const logLine = (i: number) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'demo.slow', data: `step ${i} done` } });

/** Every event of `s` until the server ends it. */
async function rest(s: SseReader): Promise<Array<{ id?: string; data: string; event?: string }>> {
  const out: Array<{ id?: string; data: string; event?: string }> = [];
  let done = false;
  void s.ended.then(() => (done = true));
  for (;;) {
    const ev = await Promise.race([s.next(10_000), s.ended.then(() => undefined)]);
    if (ev) out.push({ ...(ev.id ? { id: ev.id } : {}), data: ev.data, ...(ev.event ? { event: ev.event } : {}) });
    else if (done) return out;
  }
}

test('a 2025 session opened on one replica is served by the other with its id; log level and DELETE reach both', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const h = await session(a, '2025-06-18');
  const sid = h['mcp-session-id'];
  // The id is the sealed state (v1.<kid>.<iv>.<body>): visible ASCII, under 4 KiB, opaque.
  assert.match(sid, /^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
  assert.ok(sid.length < 4096, String(sid.length));
  assert.equal(sid.includes('cluster-test'), false);

  const list = await post(b.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, h);
  assert.equal(list.status, 200);
  assert.equal(list.headers['mcp-session-id'], sid);
  assert.deepEqual(
    (list.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name),
    ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'],
  );

  // logging/setLevel on A changes the session for B too (the level lives in Redis, not in the id).
  assert.deepEqual((await post(a.url, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } }, h)).json, {
    jsonrpc: '2.0',
    id: 2,
    result: {},
  });
  const call = await openSse(
    b.url,
    'POST',
    h,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'slow', arguments: { steps: 2, stepMs: 5 }, _meta: { progressToken: 'p' } },
    }),
  );
  assert.equal(call.status, 200);
  assert.deepEqual(
    (await rest(call)).map((e) => JSON.parse(e.data)),
    [
      progress('p', 1, 2),
      logLine(1),
      progress('p', 2, 2),
      logLine(2),
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Finished 2 steps.' }] } },
    ],
  );

  // DELETE on B ends the session on A as well (2025-11-25 basic/transports#session-management: then 404).
  assert.equal((await send(b.url, 'DELETE', undefined, h)).status, 200);
  const after = await post(a.url, { jsonrpc: '2.0', id: 4, method: 'ping' }, h);
  assert.equal(after.status, 404);
  assert.deepEqual(after.json, { jsonrpc: '2.0', id: 4, error: { code: -32001, message: 'Session not found' } });
});

test('the answer to a server-to-client request, POSTed to the other replica, reaches the replica that asked', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const h = await session(a, '2025-06-18', { elicitation: {} });
  const call = await openSse(
    a.url,
    'POST',
    h,
    JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask', arguments: { question: 'Who?' } } }),
  );
  const ask = JSON.parse((await call.next()).data) as { id: string; method: string };
  assert.equal(ask.method, 'elicitation/create');
  // The id names the replica waiting for the answer.
  assert.equal(ask.id, 'swy-1@replica-a');
  const answered = await post(b.url, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Ada' } } }, h);
  assert.equal(answered.status, 202);
  assert.deepEqual(
    (await rest(call)).map((e) => JSON.parse(e.data)),
    [{ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'Hello, Ada!' }] } }],
  );
  assert.ok(a.records.some((r) => r.msg === 'replica message handled' && r.kind === 's25.response' && r.from === 'replica-b'));
});

test('Last-Event-ID on the other replica replays exactly the missed events, then the rest once the request ends', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const h = await session(a, '2025-11-25');
  const body = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow', arguments: { steps: 6, stepMs: 60 }, _meta: { progressToken: 'r' } } };
  const s = await openSse(a.url, 'POST', h, JSON.stringify(body));
  const priming = await s.next();
  assert.equal(priming.data, '');
  const e1 = await s.next();
  const e2 = await s.next();
  assert.deepEqual([JSON.parse(e1.data), JSON.parse(e2.data)], [progress('r', 1, 6), progress('r', 2, 6)]);
  s.close();

  // Poll from B, as a 2025-11-25 client does when the server closes with `retry`, until the response.
  const seen: Array<{ id?: string; data: string }> = [];
  let last = e2.id!;
  for (let polls = 0; !seen.some((e) => e.data.includes('"result"')); polls++) {
    assert.ok(polls < 200, 'the response within 200 polls');
    const resumed = await openSse(b.url, 'GET', {
      accept: 'text/event-stream',
      'mcp-session-id': h['mcp-session-id'],
      'mcp-protocol-version': '2025-11-25',
      'last-event-id': last,
    });
    assert.equal(resumed.status, 200, resumed.raw());
    const events = (await rest(resumed)).filter((e) => e.data !== '');
    seen.push(...events);
    const withIds = events.filter((e) => e.id !== undefined);
    if (withIds.length > 0) last = withIds[withIds.length - 1].id!;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(
    seen.map((e) => JSON.parse(e.data)),
    [3, 4, 5, 6]
      .map((i) => progress('r', i, 6))
      .concat([{ jsonrpc: '2.0', id: 9, result: { content: [{ type: 'text', text: 'Finished 6 steps.' }] } }] as never[]),
  );
  const ids = [e1.id, e2.id, ...seen.map((e) => e.id)];
  assert.deepEqual(
    ids.map((id) => Number(id!.slice(id!.lastIndexOf('.') + 1))),
    [1, 2, 3, 4, 5, 6, 7],
  );

  // Answered, the request's buffer is kept for a minute (not the request deadline).
  const store = createClusterRedis({ url: redis.url, log: recordingLog().log });
  t.after(() => store.destroy());
  assert.equal(await store.waitUntilUp(10_000), true);
  const streamKey = `swy:ev:${e2.id!.slice(0, e2.id!.lastIndexOf('.'))}`;
  const ttl = Number(await store.command(['PTTL', streamKey]));
  assert.ok(ttl > 0 && ttl <= 60_000, `${streamKey}: ${ttl}`);

  // Another session's event id is an unknown id for this one.
  const other = await session(b, '2025-11-25');
  const foreign = await send(b.url, 'GET', undefined, { accept: 'text/event-stream', 'mcp-session-id': other['mcp-session-id'], 'last-event-id': e2.id! });
  assert.equal(foreign.status, 400);
  assert.deepEqual(foreign.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: unknown Last-Event-ID' } });
});

test('one GET stream per session across replicas: the second one gets 409 until the first is gone', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const h = await session(a, '2025-06-18');
  const g = { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' };
  const first = await openSse(a.url, 'GET', g);
  assert.equal(first.status, 200);
  const second = await send(b.url, 'GET', undefined, g);
  assert.equal(second.status, 409);
  assert.deepEqual(second.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Conflict: only one GET stream is allowed per session' } });
  first.close();
  let third: SseReader | undefined;
  await until(async () => {
    const r = await openSse(b.url, 'GET', g);
    if (r.status === 200) third = r;
    else r.close();
    return r.status === 200;
  }, 'the GET stream on B once A let it go');
  third!.close();
});

// Found 2026-12-06: a GET stream kept nothing while its connection was down, so a client that
// resumed it on another replica missed what was sent meanwhile. The replica that carried it keeps
// buffering (and storing in Redis) until another replica asks for the stream, then stops and
// stores the rest before it answers: the other replica replays exactly those events, once.
test('a GET stream resumed on the other replica replays what its replica kept while disconnected, once; that replica then stops', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const h = await session(a, '2025-11-25');
  const g = { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const uris = [1, 2, 3, 4, 5].map((i) => `demo://items/c${i}`);
  for (const [i, uri] of uris.entries())
    assert.deepEqual((await post(a.url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, h)).json, {
      jsonrpc: '2.0',
      id: 10 + i,
      result: {},
    });
  const touch = async (r: TestReplica, uri: string) =>
    assert.equal((await post(r.url, { jsonrpc: '2.0', id: uri, method: 'tools/call', params: { name: 'touch', arguments: { uri } } }, h)).status, 200);
  const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
  const gets = (r: TestReplica) => r.gw.registry.dialects.get('2025-03-26')!.streamCount();

  const first = await openSse(a.url, 'GET', g);
  t.after(() => first.close());
  assert.equal((await first.next()).data, '');
  await touch(a, uris[0]);
  const e1 = await first.next();
  assert.deepEqual(JSON.parse(e1.data), updated(uris[0]));
  first.close();
  await until(() => gets(a) === 0, 'A to see the GET connection close');
  // Sent while no connection carries the stream: A keeps them, in Redis too.
  await touch(a, uris[1]);
  await touch(a, uris[2]);

  const resumed = await openSse(b.url, 'GET', { ...g, 'last-event-id': e1.id! });
  t.after(() => resumed.close());
  assert.equal(resumed.status, 200, resumed.raw());
  const seen: Array<{ id?: string; data: string }> = [];
  const next = async () => {
    const e = await resumed.next(10_000);
    seen.push({ id: e.id, data: e.data });
    return e;
  };
  const r1 = await next();
  const r2 = await next();
  assert.deepEqual([JSON.parse(r1.data), JSON.parse(r2.data)], [updated(uris[1]), updated(uris[2])]);
  const stream = e1.id!.slice(0, e1.id!.lastIndexOf('.'));
  assert.deepEqual([r1.id, r2.id], [`${stream}.2`, `${stream}.3`]);
  // B's own GET stream follows (its priming event), carrying B's notifications from now on.
  const priming = await next();
  assert.equal(priming.data, '');
  assert.match(priming.id!, /~replica-b~g\d+\.0$/);
  // A no longer carries the stream: what its upstream emits now goes nowhere (A's demo is A's
  // alone), not even into the old stream's buffer in Redis; B's does reach the client, once.
  await touch(a, uris[3]);
  const store = createClusterRedis({ url: redis.url, log: recordingLog().log });
  t.after(() => store.destroy());
  assert.equal(await store.waitUntilUp(10_000), true);
  const newest = (await store.command(['XREVRANGE', `swy:ev:${stream}`, '+', '-', 'COUNT', '1'])) as Array<[string, string[]]>;
  assert.equal(newest[0][0], '0-4', 'event 3 (stored at 0-4) is the old stream’s last');
  await touch(b, uris[4]);
  const r3 = await next();
  assert.deepEqual(JSON.parse(r3.data), updated(uris[4]));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(resumed.raw().split('notifications/resources/updated').length - 1, 3, resumed.raw());
  const ids = [e1.id, ...seen.map((e) => e.id)];
  assert.equal(new Set(ids).size, ids.length, ids.join(','));
});

test('an HTTP+SSE POST that lands on the other replica is carried out by the stream’s replica and answered on its stream', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const stream = await openSse(`${a.origin}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => stream.close());
  const endpoint = await stream.next();
  assert.equal(endpoint.event, 'endpoint');
  const target = new URL(endpoint.data, `${a.origin}/sse`);
  const path = `${target.pathname}${target.search}`;
  const sid = target.searchParams.get('sessionId')!;
  const H24 = { 'content-type': 'application/json' };
  const r1 = await post(`${b.origin}${path}`, init('2024-11-05'), H24);
  assert.equal(r1.status, 202);
  assert.deepEqual(JSON.parse((await stream.next()).data).result.protocolVersion, '2024-11-05');
  assert.equal((await post(`${b.origin}${path}`, { jsonrpc: '2.0', method: 'notifications/initialized' }, H24)).status, 202);
  assert.equal(
    (await post(`${b.origin}${path}`, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: 'via b' } } }, H24)).status,
    202,
  );
  assert.deepEqual(JSON.parse((await stream.next()).data), { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'Echo: via b' }] } });
  assert.equal(a.records.filter((r) => r.msg === 'replica message handled' && r.kind === 'sse.post' && r.from === 'replica-b').length, 3);

  // A session id that is not sealed with the cluster key, or altered, is unknown on every replica.
  const altered = sid.slice(0, -2) + (sid.endsWith('AA') ? 'BB' : 'AA');
  const forged = await post(`${b.origin}/messages?sessionId=${altered}`, { jsonrpc: '2.0', id: 6, method: 'ping' }, H24);
  assert.equal(forged.status, 404);
  // The stream's replica is gone (closed here): POSTs for it fail with the owner-gone error.
  stream.close();
  await until(() => a.gw.registry.httpSse!.sessionCount === 0, 'the stream to close on A');
  const gone = await post(`${b.origin}${path}`, { jsonrpc: '2.0', id: 8, method: 'ping' }, H24);
  assert.equal(gone.status, 404);
  assert.deepEqual(gone.json, { jsonrpc: '2.0', id: 8, error: { code: -32001, message: 'Session not found' } });
});

test('a 2026-07-28 retry for a call held by the other replica is carried out there', async (t) => {
  const redis = await startRedis(t);
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const config = { upstreams: { ev: { command: process.execPath, args: [entry, 'stdio'] } } };
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url, config });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url, config });
  const caps = { elicitation: {} };
  const first = await post(
    a.url,
    modernBody(1, 'tools/call', { name: 'trigger-elicitation-request', arguments: {} }, caps),
    modernHeaders('tools/call', 'trigger-elicitation-request'),
  );
  assert.equal(first.status, 200, first.text);
  const round = (first.json as { result: { resultType: string; requestState: string; inputRequests: Record<string, { method: string }> } }).result;
  assert.equal(round.resultType, 'input_required');
  assert.ok(round.requestState.startsWith('swy2.v1.'), round.requestState);
  const [key] = Object.keys(round.inputRequests);
  assert.equal(round.inputRequests[key].method, 'elicitation/create');
  const retry = await post(
    b.url,
    modernBody(
      2,
      'tools/call',
      {
        name: 'trigger-elicitation-request',
        arguments: {},
        requestState: round.requestState,
        inputResponses: { [key]: { action: 'accept', content: { name: 'Ada', check: true, email: 'ada@example.com', age: 36, score: 1 } } },
      },
      caps,
    ),
    modernHeaders('tools/call', 'trigger-elicitation-request'),
  );
  assert.equal(retry.status, 200, retry.text);
  const result = (retry.json as { result: { content: Array<{ text: string }> } }).result;
  assert.equal(result.content[0].text, '✅ User provided the requested information!');
  assert.ok(a.records.some((r) => r.msg === 'replica message handled' && r.kind === 'call.resume' && r.from === 'replica-b'));
  // The state is single use: the same retry again resumes nothing.
  const again = await post(
    b.url,
    modernBody(3, 'tools/call', { name: 'trigger-elicitation-request', arguments: {}, requestState: round.requestState }, caps),
    modernHeaders('tools/call', 'trigger-elicitation-request'),
  );
  assert.equal((again.json as { error: { code: number } }).error.code, -32602);
});

test('Redis down: session requests fail with a retryable 503, stateless requests go on; back up, new sessions work', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const h = await session(a, '2025-06-18');
  await redis.kill();
  await until(() => a.gw.cluster.status().redis === 'down', 'the replica to see Redis down');
  // Shared by every replica: degraded, not a readiness reason (docs/scaling.md, "Readiness").
  assert.deepEqual(a.gw.cluster.notReady(), []);
  assert.deepEqual(a.gw.cluster.degraded().length, 1);
  assert.match(a.gw.cluster.degraded()[0], /^cluster: redis down/);
  // Once the replica's trust in the session's last admission (1 s) has run out, it fails closed.
  let refused = await post(a.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, h);
  await until(async () => (refused = await post(a.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, h)).status !== 200, 'the admission to expire');
  assert.equal(refused.status, 503);
  assert.equal(refused.headers['retry-after'], '1');
  assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Cluster state store unavailable' } });
  const opening = await post(a.url, init('2025-06-18'), { ...H });
  assert.equal(opening.status, 503);
  // Work that needs no shared state continues.
  const echo = await post(a.url, modernBody(2, 'tools/call', { name: 'echo', arguments: { message: 'still here' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(echo.status, 200);
  assert.deepEqual((echo.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: still here' }]);
  await redis.restart();
  await until(() => a.gw.cluster.status().redis === 'up', 'the replica to reconnect');
  assert.deepEqual(a.gw.cluster.degraded(), []);
  // Redis lost the session's activity (no persistence): the client starts over (404, then initialize).
  assert.equal((await post(a.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, h)).status, 404);
  await session(a, '2025-06-18');
});

test('a cluster without Redis: sealed ids on one replica, and a replica with another key does not open them', async (t) => {
  const a = await startReplica(t, { id: 'solo' });
  const h = await session(a, '2025-06-18');
  assert.equal(a.gw.cluster.status().redis, 'off');
  assert.equal((await post(a.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, h)).status, 200);
  const other = await startReplica(t, { id: 'other', key: Buffer.alloc(32, 7).toString('base64') });
  assert.equal((await post(other.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, h)).status, 404);
});

test('the embedded demo’s own input_required round (2026-07-28) can be answered on another replica: its key comes from the cluster key', async (t) => {
  const redis = await startRedis(t);
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url });
  const caps = { elicitation: {} };
  const first = await post(a.url, modernBody(1, 'tools/call', { name: 'ask', arguments: { question: 'Who?' } }, caps), modernHeaders('tools/call', 'ask'));
  const round = (first.json as { result: { resultType: string; requestState: string } }).result;
  assert.equal(round.resultType, 'input_required');
  const retry = await post(
    b.url,
    modernBody(
      2,
      'tools/call',
      {
        name: 'ask',
        arguments: { question: 'Who?' },
        requestState: round.requestState,
        inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
      },
      caps,
    ),
    modernHeaders('tools/call', 'ask'),
  );
  assert.deepEqual((retry.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Hello, Ada!' }]);
});
