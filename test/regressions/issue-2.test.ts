// Regressions found while building the first issue. Each names the fault it guards against.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { request } from 'undici';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, openSse, post } from '../helpers/http.js';

test('initialize sent with an Mcp-Method header and no modern _meta opens a 2025 session (mcp-remote 0.15.1 does this)', async (t) => {
  const gw = await gateway(t);
  const r = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcp-remote-fallback-test', version: '0.0.0' } },
    },
    { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-method': 'initialize' },
  );
  assert.equal(r.status, 200);
  assert.match(String(r.headers['mcp-session-id']), /^[0-9a-f-]{36}$/);
  assert.equal((r.json as { result: { protocolVersion: string } }).result.protocolVersion, '2025-11-25');
});

test('ids and progress tokens beyond 2^53 are echoed as exact integer literals, not as marker strings', async (t) => {
  const gw = await gateway(t);
  const body = `{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"stepMs":0},"_meta":{"progressToken":9007199254740993,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`;
  const r = await post(gw.url, body, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'slow',
  });
  assert.equal(r.status, 200);
  assert.ok(r.text.includes('"progressToken":9007199254740993'), r.text);
  assert.ok(r.text.includes('"id":9223372036854775807,'), r.text);
  assert.ok(!r.text.includes('swy-big'), r.text);
});

// --- found by a fresh-clone trial of the first issue ---

const H25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function session25(url: string, caps: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const r = await post(
    url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: caps, clientInfo: { name: 't', version: '1' } } },
    H25,
  );
  return { ...H25, 'mcp-session-id': String(r.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
}

test('a request still running when the shutdown grace period ends gets an error with its id, not a 202', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, shutdownGraceMs: 200 } });
  const h = await session25(gw.url);
  const pending = post(gw.url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow', arguments: { steps: 100, stepMs: 100 } } }, h);
  for (let i = 0; i < 100 && gw.executor.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const closing = gw.close();
  const r = await pending;
  await closing;
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'Server is shutting down: request aborted' } });
});

test('a 2026 request streaming progress when the grace period ends gets the error as its last event', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, shutdownGraceMs: 200 } });
  const s = await openSse(
    gw.url,
    'POST',
    modernHeaders('tools/call', 'slow'),
    JSON.stringify(modernBody(4, 'tools/call', { name: 'slow', arguments: { steps: 100, stepMs: 50 }, _meta: { progressToken: 1 } })),
  );
  await s.next();
  const closing = gw.close();
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 200 && last.id !== 4; i++) last = JSON.parse((await s.next()).data) as Record<string, unknown>;
  await closing;
  assert.deepEqual(last, { jsonrpc: '2.0', id: 4, error: { code: -32000, message: 'Server is shutting down: request aborted' } });
});

test('initialize during shutdown is refused with 503 like any other request', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, shutdownGraceMs: 1_000 } });
  const h = await session25(gw.url);
  const pending = post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { steps: 3, stepMs: 100 } } }, h);
  for (let i = 0; i < 100 && gw.executor.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const closing = gw.close();
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H25,
  );
  assert.equal(r.status, 503);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Server is shutting down' } });
  await pending;
  await closing;
});

test('with requireUpstreams, a stdio child that never answers fails the start within upstreamStartTimeoutMs', async (t) => {
  const started = Date.now();
  await assert.rejects(
    gateway(t, {
      stdio: `"${process.execPath}" -e "setInterval(()=>{},1000)"`,
      limits: { ...DEFAULT_LIMITS, upstreamStartTimeoutMs: 400 },
      requireUpstreams: true,
    }),
    {
      code: 'SWY_ERR_UPSTREAM_UNAVAILABLE',
      message: /^Upstream unavailable: no answer to initialize within 400 ms \(upstream default\)$/,
    },
  );
  assert.ok(Date.now() - started < 5_000);
});

test('with requireUpstreams, a stdio child that exits at start fails the start and is not restarted', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  await assert.rejects(gateway(t, { stdio: `"${process.execPath}" -e "process.exit(3)"`, requireUpstreams: true }, records), {
    code: 'SWY_ERR_UPSTREAM_UNAVAILABLE',
  });
  await new Promise((r) => setTimeout(r, 400));
  assert.ok(!records.some((r) => r.msg === 'upstream restarting'));
});

test('nesting deeper than maxJsonDepth is -32700 before anything serializes it', async (t) => {
  const gw = await gateway(t);
  const deep = '['.repeat(129) + ']'.repeat(129);
  const text = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x', deep: 0 } })).replace('"deep":0', `"deep":${deep}`);
  const r = await post(gw.url, text, modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 400);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: nesting deeper than the limit: limit 128' } });
  const ok = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x', deep: 0 } })).replace(
    '"deep":0',
    `"deep":${'['.repeat(120) + ']'.repeat(120)}`,
  );
  assert.equal((await post(gw.url, ok, modernHeaders('tools/call', 'echo'))).status, 200);
});

test('a body that is not valid UTF-8 is -32700, and a non-UTF-8 charset is 415', async (t) => {
  const gw = await gateway(t);
  const good = Buffer.from(JSON.stringify(modernBody('x', 'tools/call', { name: 'echo', arguments: { message: 'AB' } })));
  const bad = Buffer.from(good);
  bad[good.indexOf('AB')] = 0xff;
  const res = await request(gw.url, { method: 'POST', body: bad, headers: modernHeaders('tools/call', 'echo') });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(await res.body.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON: body is not valid UTF-8' } });
  const latin = await post(gw.url, good.toString(), { ...modernHeaders('tools/call', 'echo'), 'content-type': 'application/json; charset=iso-8859-1' });
  assert.equal(latin.status, 415);
});

test('an HTTP+SSE session must initialize before other requests', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const base = gw.url.replace(/\/mcp$/, '');
  const sse = await openSse(`${base}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = (await sse.next()).data;
  const r = await post(new URL(endpoint, `${base}/sse`).href, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'content-type': 'application/json' });
  assert.equal(r.status, 202);
  assert.deepEqual(JSON.parse((await sse.next()).data), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Bad Request: Server not initialized' } });
  await post(new URL(endpoint, `${base}/sse`).href, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'content-type': 'application/json' });
  assert.deepEqual(JSON.parse((await sse.next()).data), { jsonrpc: '2.0', id: 2, result: {} });
  const notSse = await post(`${base}/sse`, {}, { 'content-type': 'application/json' });
  assert.equal(notSse.status, 405);
});

test('a 2025 session reusing the id of a request in flight gets -32600 for the second', async (t) => {
  const gw = await gateway(t);
  const h = await session25(gw.url);
  const first = post(gw.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: { steps: 2, stepMs: 100 } } }, h);
  for (let i = 0; i < 100 && gw.executor.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const second = await post(gw.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, h);
  assert.deepEqual(second.json, { jsonrpc: '2.0', id: 5, error: { code: -32600, message: 'Invalid Request: id is already in use by a request in flight' } });
  assert.deepEqual(((await first).json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Finished 2 steps.' }]);
});

test('a header timeout is answered 408 with a JSON-RPC body', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, headTimeoutMs: 300, bodyTimeoutMs: 300 } });
  const s = net.connect(gw.http.address().port, '127.0.0.1');
  s.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  const data = await new Promise<string>((resolve) => {
    let d = '';
    s.on('data', (c: Buffer) => (d += c.toString()));
    s.on('close', () => resolve(d));
  });
  assert.match(data, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.ok(data.endsWith('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid HTTP request: Request Timeout"}}'), data);
});

test('a requestState whose last character is altered in its unused bits is refused, not accepted', async (t) => {
  const gw = await gateway(t);
  const H = modernHeaders('tools/call', 'ask');
  const first = await post(gw.url, modernBody(1, 'tools/call', { name: 'ask', arguments: {} }, { elicitation: {} }), H);
  const state = (first.json as { result: { requestState: string } }).result.requestState;
  // Every variant of the last character; only the original may complete.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (const c of alphabet) {
    const s = state.slice(0, -1) + c;
    const r = await post(
      gw.url,
      modernBody(
        2,
        'tools/call',
        { name: 'ask', arguments: {}, inputResponses: { name: { action: 'accept', content: { name: 'Mallory' } } }, requestState: s },
        { elicitation: {} },
      ),
      H,
    );
    const result = (r.json as { result: { resultType: string } }).result;
    assert.equal(result.resultType, s === state ? 'complete' : 'input_required', `last character ${c}`);
  }
});
