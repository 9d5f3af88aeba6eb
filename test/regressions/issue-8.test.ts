// Regressions from an attack run: each fault through the real HTTP
// front door (the CLI where the fault was reported with it), asserting the status and the whole
// JSON-RPC body.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { Client } from 'undici';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { VERSION } from '../../src/version.js';
import { startCli } from '../helpers/cli.js';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, openSse, post, send, messagesUntilResponse, type SseReader } from '../helpers/http.js';
import { idleConnections, rawRequest } from '../helpers/raw-http.js';

const ALL = ['2026-07-28', '2025-03-26', '2024-11-05'] as const;
const err = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });

/** Waits (bounded: 20 s) until `cond` holds. */
async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 800; i++) {
    if (await cond()) return;
    await sleep(25);
  }
  assert.fail(`never: ${what}`);
}

/** Opens a 2025 session on `url`; returns its id. */
async function session(url: string): Promise<string> {
  return (await initSession(url))['mcp-session-id'];
}

const slowCall = (id: number, steps: number, stepMs: number, progressToken?: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'slow', arguments: { steps, stepMs }, ...(progressToken ? { _meta: { progressToken } } : {}) },
});

test('a malformed Content-Type is 415 with the catalogue error, on every path, and logs no stack', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { dialects: [...ALL] }, records);
  const { port } = gw.http.address();
  const body = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }));
  const want = err(null, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  for (const ct of [';', 'a b', '/', ',application/json', '', 'application/json; charset=utf-8; charset=latin1', 'application/json;;q="']) {
    for (const target of ['/mcp', '/messages?sessionId=x']) {
      const r = await rawRequest(
        port,
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${ct}\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo`,
        body,
      );
      assert.deepEqual([r.status, r.headers['content-type'], r.json], [415, 'application/json', want], `${JSON.stringify(ct)} ${target}`);
    }
  }
  // An unknown path (the fuzz found this one as a 500): fastify checks the Content-Type syntax
  // before routing to the 404, so a malformed one is the same 415 there; a well-formed one is 404.
  for (const [ct, status, why] of [
    [';', 415, want],
    ['a b', 415, want],
    ['application/json; charset=utf-8; charset=latin1', 404, err(null, -32000, 'Not found')],
  ] as const) {
    const r = await rawRequest(port, `POST /nope HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${ct}`, body);
    assert.deepEqual([r.status, r.json], [status, why], ct);
  }
  assert.deepEqual(
    records.filter((r) => (r.level as number) >= 50 || (r.err as { stack?: string } | undefined)?.stack !== undefined),
    [],
  );
});

test('sessionIdleMs=2000 and a 5 s call: a session with work in flight is not idle, its JSON and SSE answers arrive, and it expires once idle', async (t) => {
  const cli = await startCli(t, ['--limit', 'sessionIdleMs=2000']);
  const sid = await session(cli.url);
  const h = { ...H2025, 'mcp-session-id': sid };
  const json = post(cli.url, slowCall(1, 10, 500), h);
  const sse = await openSse(cli.url, 'POST', h, JSON.stringify(slowCall(2, 10, 500, 'p2')));
  t.after(() => sse.close());
  const events = await messagesUntilResponse(sse);
  assert.deepEqual(events.at(-1), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Finished 10 steps.' }] } });
  assert.deepEqual(
    events.slice(0, -1).map((e) => (e.params as { progress: number }).progress),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  const r = await json;
  assert.deepEqual([r.status, r.json], [200, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Finished 10 steps.' }] } }]);
  // Idle now, it expires (watched in the log: a request would keep it alive), then answers 404.
  await until(
    () => cli.records().some((r) => r.msg === 'session closed' && r.sessionId === sessionLogId(sid) && r.reason === 'expired'),
    'the idle session expires',
  );
  const gone = await post(cli.url, { jsonrpc: '2.0', id: 4, method: 'ping' }, h);
  assert.deepEqual([gone.status, gone.json], [404, err(4, -32001, 'Session not found')]);
});

test('a DELETE during a request answers that request with an error, JSON or SSE, never 202 with no body', async (t) => {
  const gw = await gateway(t);
  for (const answer of ['json', 'sse'] as const) {
    const sid = await session(gw.url);
    const h = { ...H2025, 'mcp-session-id': sid };
    let pending: Promise<{ status: number; json: unknown }> | undefined;
    let sse: SseReader | undefined;
    if (answer === 'json') pending = post(gw.url, slowCall(5, 200, 100), h);
    else {
      sse = await openSse(gw.url, 'POST', h, JSON.stringify(slowCall(5, 200, 100, 'p5')));
      t.after(() => sse!.close());
      assert.equal(JSON.parse((await sse.next()).data).method, 'notifications/progress');
    }
    await until(() => gw.executor.inFlight === 1, 'the call runs');
    const del = await send(gw.url, 'DELETE', undefined, { 'mcp-session-id': sid });
    assert.equal(del.status, 200);
    const want = err(5, -32000, 'Session ended before the request completed: deleted');
    if (pending) {
      const r = await pending;
      assert.deepEqual([r.status, r.json], [200, want]);
    } else assert.deepEqual((await messagesUntilResponse(sse!)).at(-1), want);
    await until(() => gw.executor.inFlight === 0, 'the call stops');
    const after = await post(gw.url, { jsonrpc: '2.0', id: 6, method: 'ping' }, h);
    assert.deepEqual([after.status, after.json], [404, err(6, -32001, 'Session not found')]);
  }
});

test('SIGTERM: requests in flight get "shutting down" before their streams close, HTTP+SSE included, then exit 0', async (t) => {
  const cli = await startCli(t, ['--legacy-sse', '--limit', 'shutdownGraceMs=500']);
  // HTTP+SSE: a slow call whose reply would come on the session's stream.
  const legacy = await openSse(`${cli.origin}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => legacy.close());
  const endpoint = new URL((await legacy.next()).data, `${cli.origin}/sse`).href;
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'i8', version: '1' } },
  };
  assert.equal((await post(endpoint, init, { 'content-type': 'application/json' })).status, 202);
  assert.equal(JSON.parse((await legacy.next()).data).id, 0);
  assert.equal((await post(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'content-type': 'application/json' })).status, 202);
  assert.equal((await post(endpoint, slowCall(1, 600, 100, 'p1'), { 'content-type': 'application/json' })).status, 202);
  assert.equal(JSON.parse((await legacy.next()).data).method, 'notifications/progress');
  // 2025: an SSE answer with progress.
  const sid = await session(cli.url);
  const s2025 = await openSse(cli.url, 'POST', { ...H2025, 'mcp-session-id': sid }, JSON.stringify(slowCall(2, 600, 100, 'p2')));
  t.after(() => s2025.close());
  assert.equal(JSON.parse((await s2025.next()).data).method, 'notifications/progress');
  // 2026-07-28: a stateless call with progress.
  const modern = modernBody(3, 'tools/call', { name: 'slow', arguments: { steps: 600, stepMs: 100 }, _meta: { progressToken: 'p3' } });
  const s2026 = await openSse(cli.url, 'POST', modernHeaders('tools/call', 'slow'), JSON.stringify(modern));
  t.after(() => s2026.close());
  assert.equal(JSON.parse((await s2026.next()).data).method, 'notifications/progress');

  const code = cli.stop('SIGTERM');
  const shuttingDown = (id: number) => err(id, -32000, 'Server is shutting down: request aborted');
  // Each stream carries its error response last, then ends.
  assert.deepEqual((await messagesUntilResponse(legacy, 1)).at(-1), shuttingDown(1));
  assert.deepEqual((await messagesUntilResponse(s2025)).at(-1), shuttingDown(2));
  assert.deepEqual((await messagesUntilResponse(s2026)).at(-1), shuttingDown(3));
  assert.equal(await code, 0);
});

test('fractional id literals that round to integers are refused with -32600 and id null', async (t) => {
  const gw = await gateway(t);
  const sid = await session(gw.url);
  const want = err(null, -32600, 'Invalid Request: id must be a string or an integer in the int64 range: a string id is at most 256 bytes');
  for (const literal of ['1.0000000000000001', '-1e-400', '1.0', '1e2']) {
    const modern = JSON.stringify(modernBody(0, 'tools/call', { name: 'echo', arguments: { message: 'x' } })).replace('"id":0', `"id":${literal}`);
    const m = await post(gw.url, modern, modernHeaders('tools/call', 'echo'));
    assert.deepEqual([m.status, m.json], [400, want], `2026 ${literal}`);
    const s = await post(gw.url, `{"jsonrpc":"2.0","id":${literal},"method":"ping"}`, { ...H2025, 'mcp-session-id': sid });
    assert.deepEqual([s.status, s.json], [400, want], `2025 ${literal}`);
  }
});

test('Content-Encoding: gzip, deflate (zlib and raw) and br are decoded within maxBodyBytes; a plain body labelled gzip is not run; other codings are 415 with Accept-Encoding', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, maxBodyBytes: 64 * 1024 } });
  const body = Buffer.from(JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'zipped' } })));
  const h = modernHeaders('tools/call', 'echo');
  const echoed = {
    jsonrpc: '2.0',
    id: 1,
    result: {
      content: [{ type: 'text', text: 'Echo: zipped' }],
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'switchyard-demo', version: VERSION } },
    },
  };
  const call = (coding: string, bytes: Buffer) => send(gw.url, 'POST', bytes as unknown as string, { ...h, 'content-encoding': coding });
  for (const [coding, bytes] of [
    ['gzip', zlib.gzipSync(body)],
    ['x-gzip', zlib.gzipSync(body)],
    ['deflate', zlib.deflateSync(body)],
    ['deflate', zlib.deflateRawSync(body)],
    ['br', zlib.brotliCompressSync(body)],
    ['gzip, br', zlib.brotliCompressSync(zlib.gzipSync(body))],
    ['identity', body],
  ] as const) {
    const r = await call(coding, bytes);
    assert.deepEqual([r.status, r.json], [200, echoed], coding);
  }
  const plain = await call('gzip', body);
  assert.deepEqual([plain.status, plain.json], [400, err(null, -32700, 'Parse error: invalid JSON: body is not valid gzip data')]);
  const zstd = await call('zstd', body);
  assert.deepEqual(
    [zstd.status, zstd.headers['accept-encoding'], zstd.json],
    [415, 'gzip, deflate, br', err(null, -32000, 'Unsupported Media Type: unsupported Content-Encoding: unknown coding "zstd"')],
  );
  // A bomb: 100 KiB of gzip that decodes past maxBodyBytes (64 KiB) is refused, not inflated.
  const bomb = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
  assert.ok(bomb.length < 64 * 1024);
  const big = await call('gzip', bomb);
  assert.deepEqual([big.status, big.json], [413, err(null, -32600, 'Request body exceeds the limit: decoded body over 65536 bytes')]);
});

test('non-canonical Base64 in Mcp-Name and Mcp-Param-* is refused; the canonical form is served', async (t) => {
  const gw = await gateway(t);
  const echo = modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } });
  const bad = await post(gw.url, echo, { ...modernHeaders('tools/call'), 'mcp-name': '=?base64?ZWNobx==?=' });
  assert.deepEqual([bad.status, bad.json], [400, err(1, -32020, 'Header mismatch: Mcp-Name has invalid Base64')]);
  const good = await post(gw.url, echo, { ...modernHeaders('tools/call'), 'mcp-name': '=?base64?ZWNobw==?=' });
  assert.equal(good.status, 200);
  const lookup = modernBody(2, 'tools/call', { name: 'lookup', arguments: { region: 'eu', key: 'k' } });
  const param = await post(gw.url, lookup, { ...modernHeaders('tools/call', 'lookup'), 'mcp-param-region': '=?base64?ZXV=?=' });
  assert.deepEqual([param.status, param.json], [400, err(2, -32020, 'Header mismatch: Mcp-Param-Region has invalid Base64')]);
  const paramOk = await post(gw.url, lookup, { ...modernHeaders('tools/call', 'lookup'), 'mcp-param-region': '=?base64?ZXU=?=' });
  assert.equal(paramOk.status, 200);
});

const DISCOVER = JSON.stringify(modernBody(1, 'server/discover'));
const discoverHead = (port: number) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover`;

test('one address gets maxConnectionsPerAddress connections, the next is closed unread; other addresses are served', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, maxConnectionsPerAddress: 64, firstByteTimeoutMs: 60_000 } });
  const { port } = gw.http.address();
  const sockets = await idleConnections(t, port, 100, '127.0.0.1');
  const received: Buffer[] = [];
  for (const s of sockets) s.on('data', (d: Buffer) => received.push(d));
  await until(() => sockets.filter((s) => s.destroyed || s.readableEnded).length === 36, '36 closed at accept');
  const other = await rawRequest(port, discoverHead(port), DISCOVER, '127.0.0.2');
  assert.equal(other.status, 200);
  const full = await rawRequest(port, discoverHead(port), DISCOVER, '127.0.0.1');
  assert.deepEqual([full.status, full.body], [0, '']);
  assert.equal(sockets.filter((s) => s.destroyed || s.readableEnded).length, 36);
  assert.deepEqual(received, []);
});

test('1,000 idle connections lock no client out: silent ones are closed after firstByteTimeoutMs', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, maxConnections: 1000, maxConnectionsPerAddress: 1000, firstByteTimeoutMs: 500 } });
  const { port } = gw.http.address();
  const sockets = await idleConnections(t, port, 1000, '127.0.0.1');
  // Every slot is taken until the deadline frees them; then a new client is served.
  await until(() => sockets.every((s) => s.destroyed || s.readableEnded), 'idle connections closed by the gateway');
  const r = await rawRequest(port, discoverHead(port), DISCOVER, '127.0.0.2');
  assert.equal(r.status, 200);
});

test('HTTP+SSE sessions at the connection bound get a clear 503, and POSTs still find a connection', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL], limits: { ...DEFAULT_LIMITS, maxConnections: 16 } });
  const base = gw.url.replace(/\/mcp$/, '');
  const streams: SseReader[] = [];
  t.after(() => streams.forEach((s) => s.close()));
  // maxConnections 16 keeps 1/16 (one connection) for POSTs: 15 streams.
  for (let i = 0; i < 15; i++) {
    const s = await openSse(`${base}/sse`, 'GET', { accept: 'text/event-stream' });
    streams.push(s);
    assert.equal(s.status, 200, `stream ${i + 1}`);
    assert.equal((await s.next()).event, 'endpoint');
  }
  // Everything else on the one connection left (an undici pool might open a second one meanwhile).
  const one = new Client(base);
  t.after(() => one.close().catch(() => {}));
  const on = async (path: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string) => {
    const r = await one.request({ path, method, headers, body });
    const text = await r.body.text();
    return { status: r.statusCode, json: text ? (JSON.parse(text) as unknown) : undefined };
  };
  const full = err(null, -32000, 'Too many open streams for the connection bound');
  for (const path of ['/sse', '/mcp']) {
    const refused = await on(path, 'GET', { accept: 'text/event-stream' });
    assert.deepEqual([refused.status, refused.json], [503, full], path);
  }
  const discover = await on('/mcp', 'POST', modernHeaders('server/discover'), JSON.stringify(modernBody(1, 'server/discover')));
  assert.equal(discover.status, 200);
  // Closed connections make room for a new stream.
  await one.close();
  streams.pop()!.close();
  await until(async () => {
    // Until the listener has seen the closes, Node itself may still refuse the connection.
    const s = await openSse(`${base}/sse`, 'GET', { accept: 'text/event-stream' }).catch(() => undefined);
    if (s) streams.push(s);
    return s?.status === 200;
  }, 'room for a stream again');
});
