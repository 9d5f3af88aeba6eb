// Rule-by-rule tests of the 2025 dialect (Streamable HTTP with initialize and sessions:
// 2025-03-26, 2025-06-18, 2025-11-25), against a real gateway and the embedded demo.
// Spec digest: shared/spec/streamable-http-2025.md (rule ids S*, L*, R*, SM*, PV*, LC*).
// Base URL B(v) = https://modelcontextprotocol.io/specification/<v>/basic/transports

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type Dispatcher } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { gateway, type TestGateway } from '../../helpers/gateway.js';
import { post, send } from '../../helpers/http.js';
import { DEFAULT_LIMITS } from '../../../src/core/limits.js';
import { VERSION } from '../../../src/version.js';

const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } as const;
const DIALECTS = ['2026-07-28', '2025-03-26'] as const;

/** The InitializeResult the embedded demo yields for `version`. */
function initResult(version: string): Record<string, unknown> {
  return {
    protocolVersion: version,
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
}

const initBody = (id: number, version: string, capabilities: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 'rules-2025', version: '1.0.0' } },
});

/** Headers of a request inside session `sid` (with MCP-Protocol-Version for 2025-06-18 and later). */
function sh(sid: string, version?: string): Record<string, string> {
  const h: Record<string, string> = { ...H, 'mcp-session-id': sid };
  if (version !== undefined && version !== '2025-03-26') h['mcp-protocol-version'] = version;
  return h;
}

/** Opens a session: initialize, then notifications/initialized. Returns the session id. */
async function open(gw: TestGateway, version: string, capabilities: Record<string, unknown> = {}): Promise<string> {
  const res = await post(gw.url, initBody(1, version, capabilities), { ...H });
  assert.equal(res.status, 200, res.text);
  const sid = res.headers['mcp-session-id'];
  assert.equal(typeof sid, 'string');
  const ack = await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sh(sid as string, version));
  assert.equal(ack.status, 202, ack.text);
  return sid as string;
}

async function poll(cond: () => boolean | Promise<boolean>, what: string, tries = 200, everyMs = 25): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A streaming HTTP response read as SSE; `ended` resolves when the server ends the body. */
interface Stream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: EventSourceMessage[];
  next(ms?: number): Promise<EventSourceMessage>;
  ended: Promise<void>;
  isEnded(): boolean;
  raw(): string;
  close(): void;
}

async function stream(url: string, method: Dispatcher.HttpMethod, headers: Record<string, string>, body?: unknown): Promise<Stream> {
  const ac = new AbortController();
  const res = await request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: ac.signal });
  const events: EventSourceMessage[] = [];
  let read = 0;
  let raw = '';
  let ended = false;
  let wake: (() => void) | undefined;
  const parser = createParser({
    onEvent: (e) => {
      events.push(e);
      wake?.();
    },
  });
  const endedP = new Promise<void>((resolve) => {
    const done = () => {
      ended = true;
      wake?.();
      resolve();
    };
    res.body.on('end', done);
    res.body.on('close', done);
    res.body.on('error', done);
  });
  res.body.on('data', (chunk: Buffer) => {
    const s = chunk.toString('utf8');
    raw += s;
    parser.feed(s);
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    events,
    ended: endedP,
    isEnded: () => ended,
    raw: () => raw,
    async next(ms = 5_000) {
      const deadline = Date.now() + ms;
      while (read >= events.length) {
        if (ended) throw new Error(`stream ended; got: ${raw.slice(-500)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no SSE event within ${ms} ms; got: ${raw.slice(-500)}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
        wake = undefined;
      }
      return events[read++];
    },
    close: () => ac.abort(),
  };
}

/** Reads events until the JSON-RPC response with `id`; returns every event read (data parsed). */
async function untilResponse(s: Stream, id: unknown): Promise<Array<{ id: string | undefined; event: string | undefined; msg: Record<string, unknown> }>> {
  const out: Array<{ id: string | undefined; event: string | undefined; msg: Record<string, unknown> }> = [];
  for (;;) {
    const ev = await s.next();
    const msg = (ev.data === '' ? {} : JSON.parse(ev.data)) as Record<string, unknown>;
    out.push({ id: ev.id, event: ev.event, msg });
    if (msg.id === id && ('result' in msg || 'error' in msg)) return out;
  }
}

async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}

const progress = (token: string | number, i: number, n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progress: i, total: n, message: `step ${i} of ${n}`, progressToken: token },
});
const logMsg = (i: number) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'demo.slow', data: `step ${i} done` } });

// ---------------------------------------------------------------------------------------------
// Initialization and version negotiation
// ---------------------------------------------------------------------------------------------

for (const v of ['2025-06-18', '2025-03-26', '2025-11-25']) {
  // basic/transports#session-management: the InitializeResult response carries Mcp-Session-Id (visible ASCII);
  // lifecycle#version-negotiation: a supported requested version is echoed.
  test(`initialize ${v}: 200 JSON, Mcp-Session-Id header, protocolVersion echoed`, async (t) => {
    const gw = await gateway(t, { dialects: [...DIALECTS] });
    const res = await post(gw.url, initBody(1, v), { ...H });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.match(String(res.headers['mcp-session-id']), /^[\x21-\x7e]+$/);
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 1, result: initResult(v) });
  });
}

for (const offered of ['2024-11-05', '1999-01-01']) {
  // lifecycle#version-negotiation: an unsupported requested version gets the server's latest
  // (the 2024-11-05 revision is not served over Streamable HTTP).
  test(`initialize offering ${offered}: counter-offer 2025-11-25`, async (t) => {
    const gw = await gateway(t, { dialects: [...DIALECTS] });
    const res = await post(gw.url, initBody(7, offered), { ...H });
    assert.equal(res.status, 200);
    assert.equal(typeof res.headers['mcp-session-id'], 'string');
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 7, result: initResult('2025-11-25') });
  });
}

// §4 table "initialize on an initialized stateful transport" (SDK: 400 / -32600); the header
// belongs to requests after initialize.
test('initialize carrying an Mcp-Session-Id header: 400 / -32600', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, initBody(2, '2025-06-18'), sh(sid));
  assert.equal(res.status, 400);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'Invalid Request: Server already initialized' } });
});

// ---------------------------------------------------------------------------------------------
// Session management and the protocol version header
// ---------------------------------------------------------------------------------------------

// 2025-11-25 basic/transports#session-management: a non-initialize request without the session id: 400.
test('tools/list without a session: 400 / -32000 session required', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const res = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { ...H });
  assert.equal(res.status, 400);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' } });
});

// 2025-11-25 basic/transports#session-management: an unknown/ended session id: 404.
test('unknown session id: 404 / -32001 Session not found', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const res = await post(gw.url, { jsonrpc: '2.0', id: 4, method: 'ping' }, sh('00000000-0000-4000-8000-000000000000'));
  assert.equal(res.status, 404);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 4, error: { code: -32001, message: 'Session not found' } });
});

// 2025-11-25 basic/transports#session-management: a session the server ended (idle expiry) answers 404.
test('expired session: 404 / -32001', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS], limits: { ...DEFAULT_LIMITS, sessionIdleMs: 150 } });
  const sid = await open(gw, '2025-06-18');
  const dialect = gw.registry.dialects.get('2025-03-26');
  assert.ok(dialect);
  // Poll the session count (not the session: a lookup would refresh its idle clock).
  await poll(() => dialect.sessionCount === 0, 'the idle session to be swept', 400, 25);
  const res = await post(gw.url, { jsonrpc: '2.0', id: 5, method: 'ping' }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 404);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 5, error: { code: -32001, message: 'Session not found' } });
});

// 2025-06-18 basic/transports#protocol-version-header: absent header is accepted (the session knows the version).
test('MCP-Protocol-Version absent inside a 2025-06-18 session: accepted', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 6, method: 'ping' }, sh(sid));
  assert.equal(res.status, 200);
  assert.equal(res.headers['mcp-session-id'], sid);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 6, result: {} });
});

// 2025-06-18 basic/transports#protocol-version-header: invalid or unsupported value: 400.
test('MCP-Protocol-Version 1999-01-01 inside a session: 400', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 8, method: 'ping' }, { ...sh(sid), 'mcp-protocol-version': '1999-01-01' });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 8, error: { code: -32000, message: 'Bad Request: Unsupported protocol version: 1999-01-01' } });
});

// Session bound (src/core/errors.ts SWY_ERR_SESSION_LIMIT, limits.maxSessions): 503 when full.
test('maxSessions = 1: a second initialize gets 503 / -32000', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS], limits: { ...DEFAULT_LIMITS, maxSessions: 1 } });
  await open(gw, '2025-06-18');
  const res = await post(gw.url, initBody(2, '2025-06-18'), { ...H });
  assert.equal(res.status, 503);
  assert.equal(res.headers['mcp-session-id'], undefined);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Too many sessions' } });
});

// ---------------------------------------------------------------------------------------------
// Sending messages (POST)
// ---------------------------------------------------------------------------------------------

// basic/transports#sending-messages-to-the-server: a notification-only body accepted: 202, no body.
test('notifications/initialized: 202 with an empty body', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const init = await post(gw.url, initBody(1, '2025-06-18'), { ...H });
  const sid = init.headers['mcp-session-id'] as string;
  const res = await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 202);
  assert.equal(res.text, '');
  assert.equal(res.headers['mcp-session-id'], sid);
});

// basic/transports#sending-messages-to-the-server: a request gets application/json (one object);
// basic/utilities/ping: the receiver answers promptly with an empty result.
test('ping: 200 JSON with an empty result', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 'p', method: 'ping' }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 'p', result: {} });
});

// server/utilities/logging: logging/setLevel with an RFC 5424 level answers {}.
test('logging/setLevel with a valid level: {}', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 10, method: 'logging/setLevel', params: { level: 'info' } }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 10, result: {} });
});

// server/utilities/logging#error-handling: an invalid log level is -32602.
test('logging/setLevel with an invalid level: -32602', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 11, method: 'logging/setLevel', params: { level: 'loud' } }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 11, error: { code: -32602, message: 'Invalid params: unknown log level' } });
});

// basic/transports#sending-messages-to-the-server, #resumability-and-redelivery:
// progress and log messages precede the response on the POST's SSE stream; events carry ids
// unique in the session; the stream ends after the response.
test('slow with a progressToken after setLevel info: SSE with progress and log events, then the response', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const lvl = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info' } }, sh(sid, '2025-06-18'));
  assert.deepEqual(lvl.json, { jsonrpc: '2.0', id: 1, result: {} });
  const bad = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'nope' } }, sh(sid, '2025-06-18'));
  assert.deepEqual(bad.json, { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params: unknown log level' } });
  const s = await stream(gw.url, 'POST', sh(sid, '2025-06-18'), {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 2, stepMs: 5 }, _meta: { progressToken: 'tok' } },
  });
  t.after(() => s.close());
  assert.equal(s.status, 200);
  assert.equal(s.headers['content-type'], 'text/event-stream');
  assert.equal(s.headers['mcp-session-id'], sid);
  const got = await untilResponse(s, 3);
  assert.deepEqual(
    got.map((e) => e.msg),
    [
      progress('tok', 1, 2),
      logMsg(1),
      progress('tok', 2, 2),
      logMsg(2),
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Finished 2 steps.' }] } },
    ],
  );
  for (const e of got) assert.equal(e.event, 'message');
  const ids = got.map((e) => e.id);
  for (const id of ids) assert.match(String(id), /^\S+$/);
  assert.equal(new Set(ids).size, ids.length, `event ids unique: ${ids.join(',')}`);
  await bounded(s.ended, 5_000, 'the POST stream to end after the response');
});

// 2025-11-25 basic/transports#sending-messages-to-the-server: a 2025-11-25 SSE stream starts with a priming
// event (an id, empty data); §6.7: suppressed for older sessions (checked in the test above).
test('2025-11-25 session: the POST SSE stream starts with a priming event', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-11-25');
  const s = await stream(gw.url, 'POST', sh(sid, '2025-11-25'), {
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 1, stepMs: 1 }, _meta: { progressToken: 9 } },
  });
  t.after(() => s.close());
  assert.equal(s.status, 200);
  const got = await untilResponse(s, 4);
  assert.equal(got[0].event, undefined);
  assert.equal(got[0].msg && Object.keys(got[0].msg).length, 0);
  assert.ok(got[0].id, 'priming event has an id');
  assert.deepEqual(
    got.slice(1).map((e) => e.msg),
    [progress(9, 1, 1), { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: 'Finished 1 steps.' }] } }],
  );
});

// ---------------------------------------------------------------------------------------------
// The GET stream and DELETE
// ---------------------------------------------------------------------------------------------

// basic/transports#listening-for-messages-from-the-server: GET with Accept text/event-stream opens SSE.
test('GET with the session opens an SSE stream carrying Mcp-Session-Id', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const s = await stream(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  t.after(() => s.close());
  assert.equal(s.status, 200);
  assert.equal(s.headers['content-type'], 'text/event-stream');
  assert.equal(s.headers['mcp-session-id'], sid);
  assert.equal(s.isEnded(), false);
});

// §4 table "Second concurrent standalone GET" (SDK: 409 / -32000).
test('a second concurrent GET stream: 409', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const first = await stream(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid });
  t.after(() => first.close());
  assert.equal(first.status, 200);
  const second = await send(gw.url, 'GET', undefined, { accept: 'text/event-stream', 'mcp-session-id': sid });
  assert.equal(second.status, 409);
  assert.deepEqual(second.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Conflict: only one GET stream is allowed per session' } });
});

// basic/transports#listening-for-messages-from-the-server: unsolicited notifications
// (server/resources#subscriptions: notifications/resources/updated) go on the GET stream.
test('resources/subscribe then touch: notifications/resources/updated on the GET stream', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const g = await stream(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  t.after(() => g.close());
  assert.equal(g.status, 200);
  const sub = await post(gw.url, { jsonrpc: '2.0', id: 20, method: 'resources/subscribe', params: { uri: 'demo://readme' } }, sh(sid, '2025-06-18'));
  assert.equal(sub.status, 200);
  assert.deepEqual(sub.json, { jsonrpc: '2.0', id: 20, result: {} });
  const touch = await post(
    gw.url,
    { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'touch', arguments: { uri: 'demo://readme' } } },
    sh(sid, '2025-06-18'),
  );
  assert.equal(touch.status, 200);
  assert.deepEqual(touch.json, { jsonrpc: '2.0', id: 21, result: { content: [{ type: 'text', text: 'Touched demo://readme' }] } });
  const ev = await g.next();
  assert.equal(ev.event, 'message');
  assert.ok(ev.id, 'GET stream events carry ids');
  assert.deepEqual(JSON.parse(ev.data), { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'demo://readme' } });
});

// basic/transports#session-management: DELETE ends the session; later requests get 404.
test('DELETE: 200, the GET stream ends, later requests get 404', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const g = await stream(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid });
  t.after(() => g.close());
  const del = await send(gw.url, 'DELETE', undefined, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  assert.equal(del.status, 200);
  assert.equal(del.text, '');
  await bounded(g.ended, 5_000, 'the GET stream to end with the session');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 30, method: 'ping' }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 404);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 30, error: { code: -32001, message: 'Session not found' } });
});

// ---------------------------------------------------------------------------------------------
// Resumability
// ---------------------------------------------------------------------------------------------

// basic/transports#resumability-and-redelivery: after a disconnect, GET with Last-Event-ID replays
// the rest of that stream, including the response; a disconnect is not a cancellation.
test('Last-Event-ID: the rest of a POST stream is replayed on GET, response included', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const s = await stream(gw.url, 'POST', sh(sid, '2025-06-18'), {
    jsonrpc: '2.0',
    id: 40,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 5, stepMs: 20 }, _meta: { progressToken: 'r' } },
  });
  assert.equal(s.status, 200);
  const e1 = await s.next();
  const e2 = await s.next();
  assert.deepEqual([JSON.parse(e1.data), JSON.parse(e2.data)], [progress('r', 1, 5), progress('r', 2, 5)]);
  assert.ok(e2.id);
  s.close();
  // The server notices the disconnect asynchronously: retry while the stream is still attached (409).
  let r: Stream | undefined;
  await poll(async () => {
    const attempt = await stream(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': e2.id as string });
    if (attempt.status === 409) {
      attempt.close();
      return false;
    }
    r = attempt;
    return true;
  }, 'the resumed GET to be accepted');
  assert.ok(r);
  const resumed = r;
  t.after(() => resumed.close());
  assert.equal(resumed.status, 200);
  assert.equal(resumed.headers['content-type'], 'text/event-stream');
  assert.equal(resumed.headers['mcp-session-id'], sid);
  const rest = await untilResponse(resumed, 40);
  assert.deepEqual(
    rest.map((e) => e.msg),
    [
      progress('r', 3, 5),
      progress('r', 4, 5),
      progress('r', 5, 5),
      { jsonrpc: '2.0', id: 40, result: { content: [{ type: 'text', text: 'Finished 5 steps.' }] } },
    ],
  );
  const ids = [e1.id, e2.id, ...rest.map((e) => e.id)];
  assert.equal(new Set(ids).size, ids.length, `event ids unique: ${ids.join(',')}`);
  await bounded(resumed.ended, 5_000, 'the resumed stream to end after the response');
});

// basic/transports#resumability-and-redelivery and §4 table "Resume: unknown event id" (SDK: 400).
// Found 2026-12-05: the GET stream resumed with Last-Event-ID (as the SDK clients reconnect it)
// carried no notifications any more: they were detached when its connection dropped and never
// attached again, so every list_changed and resource update after a reconnect was lost.
test('the GET stream resumed with Last-Event-ID carries the session’s notifications again', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-11-25');
  const h = sh(sid, '2025-11-25');
  const sub = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'demo://readme' } }, h);
  assert.deepEqual(sub.json, { jsonrpc: '2.0', id: 2, result: {} });
  const touch = (id: number) => post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'touch', arguments: { uri: 'demo://readme' } } }, h);
  const updated = { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'demo://readme' } };
  const first = await stream(gw.url, 'GET', { ...h, accept: 'text/event-stream' });
  t.after(() => first.close());
  const priming = await first.next();
  assert.equal(priming.data, '');
  await touch(3);
  const e1 = await first.next();
  assert.deepEqual(JSON.parse(e1.data), updated);
  first.close();
  await first.ended;
  // Resumed after the last event it saw: nothing to replay, then the next update arrives.
  let again: Stream | undefined;
  await poll(async () => {
    const attempt = await stream(gw.url, 'GET', { ...h, accept: 'text/event-stream', 'last-event-id': e1.id as string });
    if (attempt.status === 200) again = attempt;
    else attempt.close();
    return attempt.status === 200;
  }, 'the GET stream to be free again');
  t.after(() => again?.close());
  await touch(4);
  const e2 = await again!.next();
  assert.deepEqual(JSON.parse(e2.data), updated);
  assert.notEqual(e2.id, e1.id);
});

test('Last-Event-ID naming no event: 400', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await send(gw.url, 'GET', undefined, { accept: 'text/event-stream', 'mcp-session-id': sid, 'last-event-id': 'nope.42' });
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: unknown Last-Event-ID' } });
});

// ---------------------------------------------------------------------------------------------
// Batches (§1 "POST body", §6.1)
// ---------------------------------------------------------------------------------------------

// 2025-03-26 basic/transports#sending-messages-to-the-server: a batch of requests gets one
// response per request (JSON mode: an array, §6.2).
test('2025-03-26 session: a batch of two requests gets a JSON array of two responses', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-03-26');
  const res = await post(
    gw.url,
    [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 } } },
    ],
    sh(sid, '2025-03-26'),
  );
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.ok(Array.isArray(res.json));
  // JSON-RPC 2.0 §6: responses may come in any order; match them by id.
  const sorted = [...(res.json as Array<{ id: number }>)].sort((a, b) => a.id - b.id);
  assert.deepEqual(sorted, [
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } } },
  ]);
});

// §1 "POST body" (2025-06-18 changelog: batching removed), §6.1: arrays outside 2025-03-26: 400 / -32600.
test('2025-06-18 session: a batch gets 400 / -32600', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(
    gw.url,
    [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ],
    sh(sid, '2025-06-18'),
  );
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26' },
  });
});

// ---------------------------------------------------------------------------------------------
// Server-to-client requests and cancellation
// ---------------------------------------------------------------------------------------------

// §6.11, basic/transports#sending-messages-to-the-server: a server request (elicitation/create) travels on
// the originating POST's SSE stream; the client POSTs its response (202); the final result follows.
test('input_required becomes a real elicitation/create request on the POST stream', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18', { elicitation: {} });
  const s = await stream(gw.url, 'POST', sh(sid, '2025-06-18'), {
    jsonrpc: '2.0',
    id: 50,
    method: 'tools/call',
    params: { name: 'ask', arguments: { question: 'Who are you?' } },
  });
  t.after(() => s.close());
  assert.equal(s.status, 200);
  assert.equal(s.headers['content-type'], 'text/event-stream');
  const ev = await s.next();
  const req = JSON.parse(ev.data) as { id: unknown };
  assert.ok(typeof req.id === 'string' || typeof req.id === 'number', 'the server request has an id');
  assert.deepEqual(req, {
    jsonrpc: '2.0',
    id: req.id,
    method: 'elicitation/create',
    // No `mode`: it arrives with 2025-11-25, and this session negotiated 2025-06-18.
    params: {
      message: 'Who are you?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
    },
  });
  const answer = await post(gw.url, { jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { name: 'Bo' } } }, sh(sid, '2025-06-18'));
  assert.equal(answer.status, 202);
  assert.equal(answer.text, '');
  const rest = await untilResponse(s, 50);
  assert.deepEqual(
    rest.map((e) => e.msg),
    [{ jsonrpc: '2.0', id: 50, result: { content: [{ type: 'text', text: 'Hello, Bo!' }] } }],
  );
  await bounded(s.ended, 5_000, 'the POST stream to end after the response');
});

// basic/transports#sending-messages-to-the-server; basic/utilities/cancellation: notifications/cancelled
// stops the work (202 for the notification) and no response is sent for the cancelled request.
test('notifications/cancelled stops an in-flight request', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const s = await stream(gw.url, 'POST', sh(sid, '2025-06-18'), {
    jsonrpc: '2.0',
    id: 60,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 200, stepMs: 25 }, _meta: { progressToken: 'c' } },
  });
  t.after(() => s.close());
  assert.equal(s.status, 200);
  assert.deepEqual(JSON.parse((await s.next()).data), progress('c', 1, 200));
  assert.equal(gw.executor.inFlight, 1);
  const cancel = await post(gw.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 60, reason: 'stop' } }, sh(sid, '2025-06-18'));
  assert.equal(cancel.status, 202);
  assert.equal(cancel.text, '');
  await poll(() => gw.executor.inFlight === 0, 'inFlight to reach 0');
  await bounded(s.ended, 5_000, 'the POST stream to end');
  const responses = s.events.map((e) => JSON.parse(e.data) as Record<string, unknown>).filter((m) => m.id === 60);
  assert.deepEqual(responses, []);
});

// ---------------------------------------------------------------------------------------------
// Error codes toward 2025-era clients
// ---------------------------------------------------------------------------------------------

// server/resources#error-handling (2025-11-25): resource not found is -32002 (src/core/sessions.ts legacyRpcError).
test('resources/read of an unknown URI: -32002', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 70, method: 'resources/read', params: { uri: 'demo://nope' } }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, { jsonrpc: '2.0', id: 70, error: { code: -32002, message: 'Resource not found: demo://nope', data: { uri: 'demo://nope' } } });
});

// lifecycle#operation (only negotiated features); src/core/errors.ts: -32021 is a 2026-07-28 code
// (SWY_ERR_MODERN_CAPABILITY); for a session client that did not declare a capability the catalogue
// has SWY_ERR_REQ_INPUT_UNSUPPORTED (-32602), the error ClientSession.ask itself raises.
test('tools/call ask without the elicitation capability: -32602, not the 2026-only -32021', async (t) => {
  const gw = await gateway(t, { dialects: [...DIALECTS] });
  const sid = await open(gw, '2025-06-18');
  const res = await post(gw.url, { jsonrpc: '2.0', id: 71, method: 'tools/call', params: { name: 'ask', arguments: {} } }, sh(sid, '2025-06-18'));
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, {
    jsonrpc: '2.0',
    id: 71,
    error: { code: -32602, message: "Client cannot answer the server's input request: client did not declare elicitation" },
  });
});
