// The stdio front door, driven line by line through a real child process, and by the official
// v1 and v2 SDK stdio clients.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import * as v2 from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { everythingStdioCommand, REPO_ROOT } from '../helpers/gateway.js';

const FIXTURE = path.join(REPO_ROOT, 'dist/test/fixtures/serve-stdio.js');

type Msg = Record<string, unknown> & { id?: unknown; method?: string; result?: Record<string, unknown>; error?: Record<string, unknown> };

const INIT = (id: number, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'line-test', version: '1.0.0' }, ...extra },
});

const MODERN_META = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'line-test', version: '1.0.0' },
  ...extra,
});

const SERVER_INFO = { 'io.modelcontextprotocol/serverInfo': { name: 'switchyard-demo', version: '0.1.0' } };

/** A serve-stdio child driven line by line; every stdout line is kept, raw and parsed. */
class LinePeer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly raw: Buffer[] = [];
  readonly messages: Msg[] = [];
  readonly logs: Array<Record<string, unknown>> = [];
  readonly exited: Promise<number | null>;
  private buf = '';
  private waiters: Array<{ pred: (m: Msg) => boolean; resolve: (m: Msg) => void }> = [];

  constructor(env: Record<string, string> = {}, read = true) {
    this.child = spawn(process.execPath, [FIXTURE], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    let errBuf = '';
    this.child.stderr.on('data', (c: Buffer) => {
      errBuf += c.toString('utf8');
      let nl;
      while ((nl = errBuf.indexOf('\n')) >= 0) {
        const line = errBuf.slice(0, nl);
        errBuf = errBuf.slice(nl + 1);
        if (line) this.logs.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    if (!read) return;
    this.child.stdout.on('data', (c: Buffer) => {
      this.raw.push(c);
      this.buf += c.toString('latin1');
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const m = JSON.parse(line) as Msg;
        this.messages.push(m);
        this.waiters = this.waiters.filter((w) => (w.pred(m) ? (w.resolve(m), false) : true));
      }
    });
  }

  /** Writes raw bytes (a line needs its own `\n`). */
  writeRaw(b: Buffer | string): void {
    this.child.stdin.write(b);
  }

  send(m: unknown): void {
    this.child.stdin.write(JSON.stringify(m) + '\n');
  }

  /** The first message (seen or to come) matching `pred`. */
  next(pred: (m: Msg) => boolean): Promise<Msg> {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  reply(id: unknown): Promise<Msg> {
    return this.next((m) => m.id === id && ('result' in m || 'error' in m));
  }

  async request(m: { id: unknown } & Record<string, unknown>): Promise<Msg> {
    this.send(m);
    return this.reply(m.id);
  }

  /** Opens an initialize session and sends `notifications/initialized`. */
  async initialize(extra: Record<string, unknown> = {}): Promise<Msg> {
    const r = await this.request(INIT(0, extra));
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return r;
  }

  /** Ends stdin and waits for the exit code. */
  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Every stdout byte is ASCII and every line is one JSON-RPC 2.0 object. */
  assertCleanStdout(): void {
    const all = Buffer.concat(this.raw);
    assert.ok(
      all.every((b) => b < 0x80),
      'stdout has non-ASCII bytes',
    );
    const text = all.toString('ascii');
    if (text.length > 0) assert.ok(text.endsWith('\n'), 'stdout ends mid-line');
    for (const line of text.split('\n').slice(0, -1)) {
      const m = JSON.parse(line) as Msg;
      assert.equal(typeof m, 'object');
      assert.equal(m.jsonrpc, '2.0', line);
    }
  }
}

function peer(t: { after(fn: () => unknown): void }, env: Record<string, string> = {}, read = true): LinePeer {
  const p = new LinePeer(env, read);
  t.after(() => {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  });
  return p;
}

test('2025 session: initialize, tools/list, echo, progress, and a cancelled call that never answers', async (t) => {
  const p = peer(t);
  const init = await p.initialize();
  assert.deepEqual(init, {
    jsonrpc: '2.0',
    id: 0,
    result: {
      protocolVersion: '2025-11-25',
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
      },
      serverInfo: { name: 'switchyard-demo', version: '0.1.0' },
      instructions: 'A demo server embedded in Switchyard. Try the echo tool.',
    },
  });
  const list = await p.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.deepEqual(
    (list.result?.tools as Array<{ name: string }>).map((x) => x.name),
    ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'],
  );
  const echo = await p.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } });
  assert.deepEqual(echo, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: hi' }] } });
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 'p', method: 'ping' }), { jsonrpc: '2.0', id: 'p', result: {} });

  // Progress: every step, in order, before the response.
  const slow = await p.request({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 3, stepMs: 1 }, _meta: { progressToken: 'tok' } },
  });
  assert.deepEqual(slow, { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Finished 3 steps.' }] } });
  const progress = p.messages.filter((m) => m.method === 'notifications/progress');
  assert.deepEqual(
    progress.map((m) => m.params),
    [1, 2, 3].map((i) => ({ progress: i, total: 3, message: `step ${i} of 3`, progressToken: 'tok' })),
  );
  assert.ok(p.messages.indexOf(progress[2]) < p.messages.indexOf(slow));

  // logging/setLevel: log messages then travel before the response.
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 4, method: 'logging/setLevel', params: { level: 'info' } }), { jsonrpc: '2.0', id: 4, result: {} });
  await p.request({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: { steps: 1, stepMs: 1 } } });
  assert.deepEqual(
    p.messages.filter((m) => m.method === 'notifications/message').map((m) => m.params),
    [{ level: 'info', logger: 'demo.slow', data: 'step 1 done' }],
  );

  // Cancellation: after notifications/cancelled, nothing more for that id, ever.
  p.send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'slow', arguments: { steps: 50, stepMs: 20 }, _meta: { progressToken: 'c' } } });
  await p.next((m) => m.method === 'notifications/progress' && (m.params as { progressToken?: string }).progressToken === 'c');
  p.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 6, reason: 'test' } });
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 7, method: 'ping' }), { jsonrpc: '2.0', id: 7, result: {} });
  assert.equal(await p.end(), 0);
  assert.equal(
    p.messages.some((m) => m.id === 6),
    false,
  );
  // The ping was read after the cancellation, so no progress for the cancelled call follows its answer.
  const pingAt = p.messages.findIndex((m) => m.id === 7);
  assert.equal(
    p.messages.slice(pingAt).some((m) => m.method === 'notifications/progress' && (m.params as { progressToken?: string }).progressToken === 'c'),
    false,
  );
  p.assertCleanStdout();
});

test('before initialize: ping is answered, other requests are refused', async (t) => {
  const p = peer(t);
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 1, method: 'ping' }), { jsonrpc: '2.0', id: 1, result: {} });
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32000, message: 'Bad Request: Server not initialized' },
  });
  await p.initialize();
  assert.deepEqual(await p.request(INIT(3)), { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request: Server already initialized' } });
  assert.equal(await p.end(), 0);
  p.assertCleanStdout();
});

test('2026-07-28 requests with _meta are served statelessly, with or without a session', async (t) => {
  const p = peer(t);
  const echo = await p.request({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { message: 'modern' }, _meta: MODERN_META() },
  });
  assert.deepEqual(echo, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: modern' }], resultType: 'complete', _meta: SERVER_INFO } });
  const discover = await p.request({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: MODERN_META() } });
  assert.deepEqual(discover.result?.supportedVersions, ['2026-07-28']);
  assert.equal(discover.result?.ttlMs, 0);
  assert.equal(discover.result?.cacheScope, 'private');
  // -32022 names what is served and what was asked for.
  assert.deepEqual(
    await p.request({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { _meta: MODERN_META({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
    }),
    {
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32022, message: 'Unsupported protocol version: 2099-01-01', data: { supported: ['2026-07-28'], requested: '2099-01-01' } },
    },
  );
  // Malformed _meta: -32602.
  const meta = MODERN_META() as Record<string, unknown>;
  delete meta['io.modelcontextprotocol/clientCapabilities'];
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: meta } }), {
    jsonrpc: '2.0',
    id: 4,
    error: {
      code: -32602,
      message: 'Invalid params: missing or malformed protocol _meta: _meta["io.modelcontextprotocol/clientCapabilities"] is required',
    },
  });
  // initialize and ping with modern _meta are not 2026-07-28 methods.
  for (const [id, method] of [
    [5, 'initialize'],
    [6, 'ping'],
  ] as const) {
    const r = await p.request({ jsonrpc: '2.0', id, method, params: { _meta: MODERN_META() } });
    assert.equal((r.error as { code: number }).code, -32601);
  }
  // Progress and log messages on a modern request travel before its response.
  const slow = await p.request({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 2, stepMs: 1 }, _meta: { ...MODERN_META({ 'io.modelcontextprotocol/logLevel': 'info' }), progressToken: 9 } },
  });
  assert.equal(slow.result?.resultType, 'complete');
  assert.deepEqual(
    p.messages.filter((m) => m.method === 'notifications/progress').map((m) => (m.params as { progress: number }).progress),
    [1, 2],
  );
  assert.equal(p.messages.filter((m) => m.method === 'notifications/message').length, 2);
  // notifications/cancelled stops a stateless request: no response for it, ever.
  p.send({
    jsonrpc: '2.0',
    id: 'c',
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 50, stepMs: 20 }, _meta: { ...MODERN_META(), progressToken: 'c' } },
  });
  await p.next((m) => m.method === 'notifications/progress' && (m.params as { progressToken?: unknown }).progressToken === 'c');
  p.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } });
  // A session and stateless requests side by side.
  await p.initialize();
  const again = await p.request({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' }, _meta: MODERN_META() } });
  assert.equal(again.result?.resultType, 'complete');
  assert.equal(await p.end(), 0);
  assert.equal(
    p.messages.some((m) => m.id === 'c'),
    false,
  );
  p.assertCleanStdout();
});

test('the ask tool: a real elicitation/create for a session, an input_required round for a 2026 request', async (t) => {
  const p = peer(t);
  await p.initialize({ capabilities: { elicitation: { form: {} } } });
  p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { question: 'Name?' } } });
  const ask = await p.next((m) => m.method === 'elicitation/create');
  assert.equal(typeof ask.id, 'string');
  assert.deepEqual(ask.params, {
    mode: 'form',
    message: 'Name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
  });
  p.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Ada' } } });
  assert.deepEqual(await p.reply(1), { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Hello, Ada!' }] } });

  const meta = MODERN_META({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } });
  const first = await p.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: meta } });
  assert.equal(first.result?.resultType, 'input_required');
  const inputRequests = first.result?.inputRequests as Record<string, { method: string }>;
  assert.equal(inputRequests.name.method, 'elicitation/create');
  assert.equal(typeof first.result?.requestState, 'string');
  const retry = await p.request({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name: 'ask',
      arguments: {},
      inputResponses: { name: { action: 'accept', content: { name: 'Grace' } } },
      requestState: first.result?.requestState,
      _meta: meta,
    },
  });
  assert.deepEqual(retry, {
    jsonrpc: '2.0',
    id: 3,
    result: { content: [{ type: 'text', text: 'Hello, Grace!' }], resultType: 'complete', _meta: SERVER_INFO },
  });
  // A 2026 request without the capability gets -32021.
  const refused = await p.request({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: MODERN_META() } });
  assert.equal((refused.error as { code: number }).code, -32021);
  assert.equal(await p.end(), 0);
  p.assertCleanStdout();
});

test('a server request still unanswered at EOF fails its call with an error response', async (t) => {
  const p = peer(t);
  await p.initialize({ capabilities: { elicitation: {} } });
  p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: {} } });
  await p.next((m) => m.method === 'elicitation/create');
  assert.equal(await p.end(), 0);
  assert.deepEqual(p.messages.at(-1), {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32602, message: "Client cannot answer the server's input request: the client closed its input" },
  });
  p.assertCleanStdout();
});

test('a line of maxLineBytes is served; one byte more is refused with -32600 and id null, and the next line is served', async (t) => {
  const max = 1000;
  const p = peer(t, { SWY_TEST_MAX_LINE_BYTES: String(max) });
  const pad = (m: unknown, n: number) => {
    const s = JSON.stringify(m);
    return s.slice(0, -1) + ' '.repeat(n - Buffer.byteLength(s)) + '}';
  };
  const at = pad({ jsonrpc: '2.0', id: 1, method: 'ping' }, max);
  assert.equal(Buffer.byteLength(at), max);
  p.writeRaw(at + '\n');
  assert.deepEqual(await p.reply(1), { jsonrpc: '2.0', id: 1, result: {} });
  const over = pad({ jsonrpc: '2.0', id: 2, method: 'ping' }, max + 1);
  assert.equal(Buffer.byteLength(over), max + 1);
  // The refusal comes as soon as the line passes the bound, before it ends; the rest is discarded.
  p.writeRaw(over);
  assert.deepEqual(await p.reply(null), {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Invalid Request: line exceeds the limit: limit 1000 bytes' },
  });
  p.writeRaw(' {"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 3, method: 'ping' }), { jsonrpc: '2.0', id: 3, result: {} });
  assert.equal(await p.end(), 0);
  assert.equal(p.messages.filter((m) => m.id === 2).length, 0);
  assert.equal(p.messages.filter((m) => m.id === null).length, 1);
  assert.ok(p.logs.some((r) => r.msg === 'request refused' && r.code === 'SWY_ERR_STDIO_LINE_TOO_LONG'));
  p.assertCleanStdout();
});

test('a leading UTF-8 BOM is ignored; blank lines are skipped; bad lines get -32700 and the stream goes on', async (t) => {
  const p = peer(t);
  p.writeRaw(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) + '\n')]));
  assert.deepEqual(await p.reply(1), { jsonrpc: '2.0', id: 1, result: {} });
  // Blank as String.prototype.trim counts it: ASCII and Unicode whitespace (no reply for these).
  p.writeRaw('\n  \r\n\u00a0\u2028\u000b\f\t\n{not json}\n');
  assert.deepEqual(await p.reply(null), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON' } });
  p.writeRaw(Buffer.from([0xc3, 0x28, 0x0a]));
  await p.next((m) => m.id === null && p.messages.filter((x) => x.id === null).length === 2);
  assert.deepEqual(p.messages.filter((m) => m.id === null)[1], {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'Parse error: invalid JSON: body is not valid UTF-8' },
  });
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 2, method: 'ping' }), { jsonrpc: '2.0', id: 2, result: {} });
  assert.equal(await p.end(), 0);
  p.assertCleanStdout();
});

test('output escapes non-ASCII as \\u escapes', async (t) => {
  const p = peer(t);
  await p.initialize();
  const message = 'héllo ✓ 😀 \u2028';
  const r = await p.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message } } });
  assert.deepEqual(r.result, { content: [{ type: 'text', text: `Echo: ${message}` }] });
  const raw = Buffer.concat(p.raw).toString('ascii');
  assert.ok(raw.includes('"Echo: h\\u00e9llo \\u2713 \\ud83d\\ude00 \\u2028"'), raw);
  assert.equal(await p.end(), 0);
  p.assertCleanStdout();
});

test('at EOF, admitted requests finish, then the process exits 0', async (t) => {
  const p = peer(t);
  await p.initialize();
  p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { steps: 3, stepMs: 30 } } });
  p.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { steps: 2, stepMs: 30 }, _meta: MODERN_META() } });
  // The last line has no newline: it is still a message.
  p.writeRaw(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }));
  assert.equal(await p.end(), 0);
  assert.deepEqual(
    p.messages.find((m) => m.id === 1),
    { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Finished 3 steps.' }] } },
  );
  assert.equal(p.messages.find((m) => m.id === 2)?.result?.resultType, 'complete');
  assert.deepEqual(
    p.messages.find((m) => m.id === 3),
    { jsonrpc: '2.0', id: 3, result: {} },
  );
  assert.ok(p.logs.some((r) => r.msg === 'stopped' && r.code === 0));
  p.assertCleanStdout();
});

test('SIGTERM stops reading, finishes admitted requests, then exits 0', async (t) => {
  const p = peer(t);
  await p.initialize();
  p.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { steps: 3, stepMs: 30 }, _meta: { progressToken: 1 } } });
  await p.next((m) => m.method === 'notifications/progress');
  p.child.kill('SIGTERM');
  assert.equal(await p.exited, 0);
  assert.deepEqual(
    p.messages.find((m) => m.id === 1),
    { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Finished 3 steps.' }] } },
  );
  // Said once, with the signal and the call still in flight (it was said twice: by the signal
  // handler, then by the gateway's close; found by a trial).
  assert.deepEqual(
    p.logs.filter((r) => r.msg === 'shutting down').map((r) => [r.signal, r.inFlight]),
    [['SIGTERM', 1]],
  );
  p.assertCleanStdout();
});

test('subscriptions/listen: acknowledgement first, tagged notifications, cancelled by notifications/cancelled, final result at EOF', async (t) => {
  const p = peer(t);
  const tag = { 'io.modelcontextprotocol/subscriptionId': 'L1' };
  p.send({
    jsonrpc: '2.0',
    id: 'L1',
    method: 'subscriptions/listen',
    params: { notifications: { resourceSubscriptions: ['demo://readme'], toolsListChanged: true }, _meta: MODERN_META() },
  });
  p.send({
    jsonrpc: '2.0',
    id: 'L2',
    method: 'subscriptions/listen',
    params: { notifications: { resourceSubscriptions: ['demo://readme'] }, _meta: MODERN_META() },
  });
  const ack = await p.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  assert.deepEqual(ack, {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: tag, notifications: { toolsListChanged: true, resourceSubscriptions: ['demo://readme'] } },
  });
  await p.next((m) => m.method === 'notifications/subscriptions/acknowledged' && (m.params as { _meta: Record<string, unknown> })._meta[MODERN_KEY] === 'L2');
  const touch = (id: number) =>
    p.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'touch', arguments: { uri: 'demo://readme' }, _meta: MODERN_META() } });
  await touch(1);
  const updated = p.messages.filter((m) => m.method === 'notifications/resources/updated');
  assert.deepEqual(
    updated.map((m) => m.params),
    [
      { uri: 'demo://readme', _meta: tag },
      { uri: 'demo://readme', _meta: { 'io.modelcontextprotocol/subscriptionId': 'L2' } },
    ],
  );
  p.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'L1' } });
  await touch(2);
  assert.equal(await p.end(), 0);
  const later = p.messages.filter((m) => m.method === 'notifications/resources/updated').slice(2);
  assert.deepEqual(
    later.map((m) => (m.params as { _meta: Record<string, unknown> })._meta[MODERN_KEY]),
    ['L2'],
  );
  assert.equal(p.messages.filter((m) => m.id === 'L1').length, 0);
  assert.deepEqual(p.messages.at(-1), {
    jsonrpc: '2.0',
    id: 'L2',
    result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'L2' } },
  });
  p.assertCleanStdout();
});

const MODERN_KEY = 'io.modelcontextprotocol/subscriptionId';

test('a batch is served in a 2025-03-26 session and refused otherwise', async (t) => {
  const p = peer(t);
  p.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  assert.deepEqual(await p.reply(null), {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26' },
  });
  await p.request(INIT(0, { protocolVersion: '2025-03-26' }));
  p.send([
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'b' } } },
  ]);
  const batch = await p.next((m) => Array.isArray(m));
  assert.deepEqual(
    [...(batch as unknown as Msg[])].sort((a, b) => Number(a.id) - Number(b.id)),
    [
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Echo: b' }] } },
    ],
  );
  assert.equal(await p.end(), 0);
});

test('a client that stops reading: the write stalls past writeTimeoutMs and the transport ends with exit 1', async (t) => {
  const p = peer(t, { SWY_TEST_WRITE_TIMEOUT_MS: '200' }, false);
  p.send(INIT(0));
  const big = 'x'.repeat(100_000);
  for (let i = 1; i <= 10; i++) p.send({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: big } } });
  assert.equal(await p.exited, 1);
  assert.ok(p.logs.some((r) => r.msg === 'slow client cut' && (r.err as { code?: string }).code === 'SWY_ERR_STDIO_WRITE_STALLED'));
  // The session's line says the gateway cut it, not that the client closed its end (docs/operations.md, "Session lines").
  assert.deepEqual(
    p.logs.filter((r) => r.msg === 'session closed').map((r) => r.reason),
    ['slow-reader'],
  );
});

test('with --stdio, a stdio child (server-everything) is fronted for both eras', async (t) => {
  const p = peer(t, { SWY_TEST_STDIO: everythingStdioCommand() });
  await p.initialize();
  assert.deepEqual(await p.request({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'child' } } }), {
    jsonrpc: '2.0',
    id: 1,
    result: { content: [{ type: 'text', text: 'Echo: child' }] },
  });
  const modern = await p.request({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'm' }, _meta: MODERN_META() } });
  assert.deepEqual(modern.result?.content, [{ type: 'text', text: 'Echo: m' }]);
  assert.equal(modern.result?.resultType, 'complete');
  assert.equal(await p.end(), 0);
  p.assertCleanStdout();
});

test('the official v1 SDK client (StdioClientTransport) lists tools and calls echo', async () => {
  const client = new V1Client({ name: 'v1-stdio', version: '1.0.0' });
  const transport = new V1Stdio({
    command: process.execPath,
    args: [FIXTURE],
    env: { ...(process.env as Record<string, string>), SWY_TEST_LOG_LEVEL: 'warn' },
    stderr: 'pipe',
  });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion()?.name, 'switchyard-demo');
    const tools = await client.listTools();
    assert.ok(tools.tools.some((x) => x.name === 'echo'));
    const r = await client.callTool({ name: 'echo', arguments: { message: 'from v1' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: from v1' }]);
  } finally {
    await client.close();
  }
});

for (const mode of ['default', '2026-07-28'] as const) {
  test(`the official v2 client (@modelcontextprotocol/client/stdio, ${mode}) calls echo`, async () => {
    const versionNegotiation = mode === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' as const } } } : {};
    const client = new v2.Client({ name: 'v2-stdio', version: '1.0.0' }, { capabilities: {}, ...versionNegotiation });
    const transport = new V2Stdio({
      command: process.execPath,
      args: [FIXTURE],
      env: { ...(process.env as Record<string, string>), SWY_TEST_LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      const r = (await client.callTool({ name: 'echo', arguments: { message: `from v2 ${mode}` } })) as { content: unknown; _meta?: unknown };
      assert.deepEqual(r.content, [{ type: 'text', text: `Echo: from v2 ${mode}` }]);
      // Pinned to 2026-07-28 it is served statelessly (serverInfo on the result); by default through initialize.
      assert.deepEqual(r._meta, mode === '2026-07-28' ? SERVER_INFO : undefined);
    } finally {
      await client.close();
    }
  });
}
