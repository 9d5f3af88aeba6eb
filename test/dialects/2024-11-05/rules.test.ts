// Rule-by-rule tests of the 2024-11-05 dialect (HTTP+SSE transport), against a real gateway
// and the embedded demo. Spec digest: shared/spec/transport-2024-11-05-http-sse.md
// (§2 conventions, §6 hosting next to newer transports, §7 gateway notes).
// T = https://modelcontextprotocol.io/specification/2024-11-05/basic/transports (HTTP with SSE)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway, type TestGateway } from '../../helpers/gateway.js';
import { openSse, post, send, type SseReader } from '../../helpers/http.js';
import { DEFAULT_LIMITS } from '../../../src/core/limits.js';
import { VERSION } from '../../../src/version.js';

const ALL = ['2026-07-28', '2025-03-26', '2024-11-05'] as const;
const JSON_CT = { 'content-type': 'application/json' } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const origin = (gw: TestGateway) => new URL(gw.url).origin;

async function poll(cond: () => boolean | Promise<boolean>, what: string, tries = 200, everyMs = 25): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Opens GET /sse, reads the `endpoint` event, returns the stream and the absolute POST URL. */
async function connect(t: { after(fn: () => void | Promise<void>): void }, gw: TestGateway): Promise<{ sse: SseReader; messages: string; sessionId: string }> {
  const sse = await openSse(`${origin(gw)}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  const ep = await sse.next();
  assert.equal(ep.event, 'endpoint');
  const m = /^messages\?sessionId=(.+)$/.exec(ep.data);
  assert.ok(m, `endpoint data: ${ep.data}`);
  return { sse, messages: new URL(ep.data, `${origin(gw)}/sse`).href, sessionId: m[1] };
}

/** Reads the next `message` event and parses its data. */
async function nextMessage(sse: SseReader): Promise<unknown> {
  const ev = await sse.next();
  assert.equal(ev.event, 'message');
  assert.equal(ev.id, undefined);
  return JSON.parse(ev.data);
}

const initBody = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'rules-2024', version: '1.0.0' } },
});

const initResult = {
  protocolVersion: '2024-11-05',
  capabilities: {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
    logging: {},
  },
  serverInfo: { name: 'switchyard-demo', version: VERSION },
  instructions: 'A demo server embedded in Switchyard. Try the echo tool.',
};

// ---------------------------------------------------------------------------------------------
// The SSE endpoint
// ---------------------------------------------------------------------------------------------

// 2024-11-05 basic/transports#http-with-sse; §2 "GET response", "endpoint event": 200 text/event-stream, the
// first event is `endpoint` with a relative URI carrying the session id.
test('GET /sse: 200 text/event-stream, first event endpoint messages?sessionId=<uuid> (a reference relative to the GET)', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const sse = await openSse(`${origin(gw)}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  assert.equal(sse.headers['content-type'], 'text/event-stream');
  assert.equal(sse.headers['cache-control'], 'no-store, no-transform');
  const ev = await sse.next();
  assert.equal(ev.event, 'endpoint');
  assert.match(ev.data, /^messages\?sessionId=[0-9a-f-]{36}$/);
  assert.match(ev.data.slice('messages?sessionId='.length), UUID);
});

// §6 "Client" fallback (2025-03-26 basic/transports#backwards-compatibility): a GET of the MCP URL without a
// session opens the HTTP+SSE stream whose first event is `endpoint`.
test('GET /mcp with Accept text/event-stream and no session: the endpoint event', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const sse = await openSse(gw.url, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  assert.equal(sse.headers['content-type'], 'text/event-stream');
  const ev = await sse.next();
  assert.equal(ev.event, 'endpoint');
  assert.match(ev.data, /^messages\?sessionId=[0-9a-f-]{36}$/);
  assert.match(ev.data.slice('messages?sessionId='.length), UUID);
});

// §6 "A 2026-07-28-only server makes a legacy HTTP+SSE client fail at its opening GET (405)";
// basic/transports#listening-for-messages-from-the-server no stream offered ⇒ 405.
// Allow: the path's methods but the refused GET (RFC 9110 §15.5.6; docs/dialects.md).
test('legacy off: GET /mcp without a session is 405', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26'] });
  const res = await send(gw.url, 'GET', undefined, { accept: 'text/event-stream' });
  assert.equal(res.status, 405);
  assert.equal(res.headers.allow, 'POST, DELETE');
  assert.deepEqual(res.json, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: 'Method not allowed: GET without Mcp-Session-Id (no stream is offered outside a session)' },
  });
});

// ---------------------------------------------------------------------------------------------
// The POST endpoint
// ---------------------------------------------------------------------------------------------

// 2024-11-05 basic/transports#http-with-sse; §2 "POST success": 202 with no JSON-RPC body; replies travel as `message` events.
test('POST /messages: 202 empty; initialize and tools/call replies arrive as message events', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { sse, messages } = await connect(t, gw);
  const init = await post(messages, initBody(1), { ...JSON_CT });
  assert.equal(init.status, 202);
  assert.equal(init.text, '');
  assert.deepEqual(await nextMessage(sse), { jsonrpc: '2.0', id: 1, result: initResult });
  const ack = await post(messages, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...JSON_CT });
  assert.equal(ack.status, 202);
  assert.equal(ack.text, '');
  const call = await post(messages, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, { ...JSON_CT });
  assert.equal(call.status, 202);
  assert.equal(call.text, '');
  assert.deepEqual(await nextMessage(sse), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: hi' }] } });
});

// §2 "POST errors (app routing)": missing sessionId ⇒ 400 (a JSON-RPC error, SWY_ERR_SESSION_REQUIRED).
test('POST /messages without sessionId: 400 with a JSON-RPC error', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const res = await post(`${origin(gw)}/messages`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...JSON_CT });
  assert.equal(res.status, 400);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  // JSON-RPC 2.0 §5: the request's id, readable in the body (null only when it is not).
  assert.deepEqual(res.json, {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32000, message: 'Bad Request: sessionId query parameter is required' },
  });
});

// §2 "POST errors (app routing)": unknown sessionId ⇒ 404 Session not found.
test('POST /messages with an unknown sessionId: 404', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const res = await post(`${origin(gw)}/messages?sessionId=00000000-0000-4000-8000-000000000000`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...JSON_CT });
  assert.equal(res.status, 404);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Session not found' } });
});

// M (no array form of JSONRPCMessage in 2024-11-05); §7.3: a JSON array ⇒ 400. The message says
// HTTP+SSE takes none at all: a session of this transport may have negotiated 2025-03-26, and
// "only allowed in 2025-03-26" alone contradicted itself there (found by a client-author trial, h-t1).
test('POST /messages with a JSON array: 400 / -32600', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { messages } = await connect(t, gw);
  const res = await post(messages, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { ...JSON_CT });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26: in Streamable HTTP sessions, never over HTTP+SSE',
    },
  });
});

// §7.5: keep-alive comments (`:` lines) on idle streams, every limits.keepaliveMs.
test('keepalive comments appear on the stream', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL], limits: { ...DEFAULT_LIMITS, keepaliveMs: 20 } });
  const { sse } = await connect(t, gw);
  await poll(() => sse.raw().includes('\n: keepalive\n\n') || sse.raw().startsWith(': keepalive\n\n'), 'a keepalive comment');
});

// ---------------------------------------------------------------------------------------------
// Lifetime
// ---------------------------------------------------------------------------------------------

// basic/lifecycle#shutdown; §2 "Lifetime": closing the stream ends the session (later POST ⇒ 404) and
// its in-flight work is cancelled.
test('closing the stream ends the session and cancels its in-flight work', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { sse, messages } = await connect(t, gw);
  await post(messages, initBody(1), { ...JSON_CT });
  assert.deepEqual(await nextMessage(sse), { jsonrpc: '2.0', id: 1, result: initResult });
  await post(messages, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...JSON_CT });
  const call = await post(
    messages,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { steps: 200, stepMs: 25 }, _meta: { progressToken: 'x' } } },
    { ...JSON_CT },
  );
  assert.equal(call.status, 202);
  assert.deepEqual(await nextMessage(sse), {
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progress: 1, total: 200, message: 'step 1 of 200', progressToken: 'x' },
  });
  assert.equal(gw.executor.inFlight, 1);
  sse.close();
  await poll(() => gw.executor.inFlight === 0, 'inFlight to reach 0');
  let last: Awaited<ReturnType<typeof post>> | undefined;
  await poll(async () => {
    last = await post(messages, { jsonrpc: '2.0', id: 3, method: 'ping' }, { ...JSON_CT });
    return last.status !== 202;
  }, 'the session to end');
  assert.ok(last);
  assert.equal(last.status, 404);
  assert.deepEqual(last.json, { jsonrpc: '2.0', id: 3, error: { code: -32001, message: 'Session not found' } });
});

// ---------------------------------------------------------------------------------------------
// Hosting next to Streamable HTTP (§6)
// ---------------------------------------------------------------------------------------------

// §6 "Server": one session map for both transports; a session id of the other transport is
// 400 / -32000 (docs/errors.md SWY_ERR_SESSION_WRONG_TRANSPORT: "A session id of one transport
// was sent to the other").
test('an HTTP+SSE sessionId sent as Mcp-Session-Id: 400 wrong transport', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { sessionId } = await connect(t, gw);
  const res = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { ...JSON_CT, accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
  );
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Bad Request: session uses a different transport' } });
});

// §6 "Server" and docs/errors.md SWY_ERR_SESSION_WRONG_TRANSPORT, the other direction.
test('a Streamable HTTP Mcp-Session-Id sent as ?sessionId=: 400 wrong transport', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    { ...JSON_CT, accept: 'application/json, text/event-stream' },
  );
  const sid = init.headers['mcp-session-id'];
  assert.equal(typeof sid, 'string');
  const res = await post(`${origin(gw)}/messages?sessionId=${String(sid)}`, { jsonrpc: '2.0', id: 2, method: 'ping' }, { ...JSON_CT });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Bad Request: session uses a different transport' } });
});
