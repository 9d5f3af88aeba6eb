// Regression: under `isolation: per-session` a 2025-era HTTP upstream session serves one client
// session, yet an `elicitation/create` or `sampling/createMessage` it sent on its GET stream while
// no call was in flight was answered -32603 (`Switchyard cannot route this request to a client`),
// where a `roots/list` went to the client (roots-outside-call.test.ts). The 2025 revisions let a
// server send requests on the GET stream unrelated to any client request
// (2025-11-25 basic/transports#listening-for-messages-from-the-server), and sampling and
// elicitation are client features a server may request (client/sampling, client/elicitation).
// Now they go to that client on its own stream when its revision has the method and it declared
// the capability (and the mode, for URL elicitation), whose completion follows it; otherwise the
// upstream is told why (-32601, -32602). A shared upstream session and a 2026-07-28 client's
// pooled session stay refused (-32603): there is no one client to ask, and 2026-07-28 servers send
// no requests outside a request (SEP-2260).
// Upstreams: hand-made 2025-11-25 Streamable HTTP and 2024-11-05 HTTP+SSE servers that ask on
// their stream as soon as it opens.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import * as v2 from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { CreateMessageRequestSchema, ElicitationCompleteNotificationSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fetch2024, serveStdioTransport } from '../helpers/clients.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { listenForTest } from '../helpers/stub-http.js';

/** A request the stub sends on its stream when it opens. */
interface Ask {
  id: string;
  method: string;
  params: Record<string, unknown>;
}

/** One session of a stub upstream: what its client declared, and the answers that came back. */
interface StubSession {
  caps: Record<string, unknown>;
  clientName: string;
  /** Writes one message on the session's stream (its GET stream; its HTTP+SSE stream). */
  write?: (m: Record<string, unknown>) => void;
  /** Responses the client (through the gateway) POSTed, in order. */
  answers: Array<Record<string, unknown>>;
}

const FORM: Ask = {
  id: 'elicit-1',
  method: 'elicitation/create',
  params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
};
const SAMPLING: Ask = {
  id: 'sample-1',
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }], maxTokens: 10 },
};
const URL_MODE: Ask = {
  id: 'elicit-url-1',
  method: 'elicitation/create',
  params: { mode: 'url', message: 'Sign in, please', url: 'https://auth.example.com/start', elicitationId: 'el-1' },
};

/**
 * Sends `asks` on a session's stream once it opens; `cancel` names those taken back at once
 * (basic/utilities/cancellation). A URL-mode elicitation the client accepts is followed by its
 * `notifications/elicitation/complete` on the same stream (2025-11-25 client/elicitation#url-mode).
 */
function asker(
  asks: readonly Ask[],
  cancel: readonly string[] = [],
): { open(s: StubSession): void; answered(s: StubSession, m: Record<string, unknown>): void } {
  return {
    open(s) {
      for (const a of asks) {
        s.write!({ id: a.id, method: a.method, params: a.params });
        if (cancel.includes(a.id)) s.write!({ method: 'notifications/cancelled', params: { requestId: a.id, reason: 'no longer needed' } });
      }
    },
    answered(s, m) {
      const a = asks.find((x) => x.id === m.id);
      const result = m.result as { action?: string } | undefined;
      if (a?.params.mode === 'url' && result?.action === 'accept')
        s.write!({ method: 'notifications/elicitation/complete', params: { elicitationId: a.params.elicitationId } });
    },
  };
}

/** Reads one JSON body. */
function body(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {}));
  });
}

/** Answers `initialize` with `version`, a `tools` capability, and records the session. */
function initialized(sessions: Map<string, StubSession>, id: string, m: Record<string, unknown>, version: string): Record<string, unknown> {
  const p = m.params as { capabilities: Record<string, unknown>; clientInfo: { name: string } };
  sessions.set(id, { caps: p.capabilities, clientName: p.clientInfo.name, answers: [] });
  return { jsonrpc: '2.0', id: m.id, result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 'asking', version: '1.0.0' } } };
}

/**
 * A 2025-11-25 Streamable HTTP server by hand: sessions by `Mcp-Session-Id`; every session is
 * sent `asks` on its GET stream when that opens, whatever its client declared (a server that
 * asks what it was not told it may is refused by the gateway, not by this stub), never inside a call.
 */
async function streamableUpstream(t: { after(fn: () => Promise<void>): void }, asks: readonly Ask[], cancel: readonly string[] = []) {
  const sessions = new Map<string, StubSession>();
  const a = asker(asks, cancel);
  const json = (res: http.ServerResponse, b: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(b));
  };
  const server = http.createServer((req, res) => {
    void body(req).then((m) => {
      const sid = req.headers['mcp-session-id'] as string | undefined;
      const s = sid === undefined ? undefined : sessions.get(sid);
      if (req.method === 'GET') {
        if (!s) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(': open\n\n');
        s.write = (msg) => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n\n`);
        return a.open(s);
      }
      if (req.method === 'DELETE') {
        if (sid !== undefined) sessions.delete(sid);
        return void res.writeHead(200).end();
      }
      if (m.method === 'initialize') {
        const id = randomUUID();
        return json(res, initialized(sessions, id, m, '2025-11-25'), { 'mcp-session-id': id });
      }
      if (!s) return void res.writeHead(404).end();
      if (m.method === undefined) {
        s.answers.push(m);
        res.writeHead(202).end();
        return a.answered(s, m);
      }
      if (m.id === undefined) return void res.writeHead(202).end();
      if (m.method === 'tools/list') return json(res, { jsonrpc: '2.0', id: m.id, result: { tools: [] } });
      if (m.method === 'ping') return json(res, { jsonrpc: '2.0', id: m.id, result: {} });
      return json(res, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
    });
  });
  return { url: `${await listenForTest(t, server)}/mcp`, sessions };
}

/**
 * A 2024-11-05 HTTP+SSE server by hand: `GET /sse` opens a session whose first event names its
 * POST URL; once its client says `notifications/initialized`, it is sent `asks` on that stream.
 */
async function httpSseUpstream(t: { after(fn: () => Promise<void>): void }, asks: readonly Ask[]) {
  const sessions = new Map<string, StubSession>();
  const a = asker(asks);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const id = randomUUID();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
      const s: StubSession = { caps: {}, clientName: '', answers: [] };
      s.write = (msg) => res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n\n`);
      sessions.set(id, s);
      req.on('close', () => sessions.delete(id));
      return;
    }
    void body(req).then((m) => {
      const s = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (req.method !== 'POST' || !s) return void res.writeHead(404).end();
      res.writeHead(202).end();
      if (m.method === 'initialize') {
        const p = m.params as { capabilities: Record<string, unknown>; clientInfo: { name: string } };
        s.caps = p.capabilities;
        s.clientName = p.clientInfo.name;
        return s.write!({
          id: m.id,
          result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'asking-sse', version: '1.0.0' } },
        });
      }
      if (m.method === 'notifications/initialized') return a.open(s);
      if (m.method === undefined) {
        s.answers.push(m);
        return a.answered(s, m);
      }
      if (m.id === undefined) return;
      if (m.method === 'tools/list') return s.write!({ id: m.id, result: { tools: [] } });
      if (m.method === 'ping') return s.write!({ id: m.id, result: {} });
      return s.write!({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    });
  });
  return { url: `${await listenForTest(t, server)}/sse`, sessions };
}

/** Waits (bounded) until `done()` holds. */
async function until(done: () => boolean, what: string, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !done();) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The one stub session opened for client `name`. */
function sessionOf(sessions: Map<string, StubSession>, name: string): StubSession | undefined {
  return [...sessions.values()].find((s) => s.clientName === name);
}

/** `answers` by id, so that answers POSTed concurrently compare in one order. */
function byId(answers: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return [...answers].sort((x, y) => String(x.id).localeCompare(String(y.id)));
}

const SAMPLED = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'test-model', stopReason: 'endTurn' } as const;

/**
 * An official v1 client declaring `capabilities` that answers every elicitation with `name:
 * Ada` (a URL one with accept) and every sampling request with {@link SAMPLED}, keeping what it
 * was asked and the elicitation completions it was told.
 */
function answeringClient(name: string, capabilities: Record<string, unknown>) {
  const asked: Array<{ method: string; params: unknown }> = [];
  const completed: unknown[] = [];
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  if (capabilities.elicitation !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push({ method: req.method, params: req.params });
      return req.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } };
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => void completed.push(n.params));
  }
  if (capabilities.sampling !== undefined)
    client.setRequestHandler(CreateMessageRequestSchema, (req) => {
      asked.push({ method: req.method, params: req.params });
      return SAMPLED;
    });
  return { client, asked, completed };
}

test('2025-11-25 client (sdk 1.x), per-session 2025 upstream: elicitation (form and URL) and sampling outside any call reach the client, and the URL elicitation’s completion follows', async (t) => {
  const up = await streamableUpstream(t, [FORM, SAMPLING, URL_MODE]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-11-25' });
  const caps = { elicitation: { form: {}, url: {} }, sampling: {} };
  const { client, asked, completed } = answeringClient('outside-v1', caps);
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());

  // The client's GET stream opens its upstream session, whose GET stream asks at once. No call is made.
  await until(() => (sessionOf(up.sessions, 'outside-v1')?.answers.length ?? 0) >= 3, 'the three answers');
  const own = sessionOf(up.sessions, 'outside-v1')!;
  assert.deepEqual(own.caps, caps);
  assert.deepEqual(byId(own.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept', content: { name: 'Ada' } } },
    { jsonrpc: '2.0', id: 'elicit-url-1', result: { action: 'accept' } },
    { jsonrpc: '2.0', id: 'sample-1', result: SAMPLED },
  ]);
  // The client saw the upstream's requests as they were sent (ids are the gateway's own).
  assert.deepEqual(
    asked.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    [
      { method: 'elicitation/create', params: FORM.params },
      { method: 'elicitation/create', params: URL_MODE.params },
      { method: 'sampling/createMessage', params: SAMPLING.params },
    ].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
  );
  // The upstream announced the URL elicitation's end on its GET stream: it reaches this client.
  await until(() => completed.length >= 1, 'the elicitation completion');
  assert.deepEqual(completed, [{ elicitationId: 'el-1' }]);
});

test('official v2 client (its default 2025 handshake), per-session 2025 upstream: elicitation and sampling outside any call reach it', async (t) => {
  const up = await streamableUpstream(t, [FORM, SAMPLING]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-11-25' });
  const asked: string[] = [];
  const client = new v2.Client({ name: 'outside-v2', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
  client.setRequestHandler('elicitation/create', (req) => {
    asked.push(req.method);
    return { action: 'accept' as const, content: { name: 'Ada' } };
  });
  client.setRequestHandler('sampling/createMessage', (req) => {
    asked.push(req.method);
    return SAMPLED;
  });
  await client.connect(new v2.StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());
  await until(() => (sessionOf(up.sessions, 'outside-v2')?.answers.length ?? 0) >= 2, 'the two answers');
  assert.deepEqual(byId(sessionOf(up.sessions, 'outside-v2')!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept', content: { name: 'Ada' } } },
    { jsonrpc: '2.0', id: 'sample-1', result: SAMPLED },
  ]);
  assert.deepEqual(asked.sort(), ['elicitation/create', 'sampling/createMessage']);
});

test('2024-11-05 client over HTTP+SSE (sdk 1.x): sampling outside a call reaches it; elicitation, which its revision lacks, is refused -32601', async (t) => {
  const up = await streamableUpstream(t, [FORM, SAMPLING]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-11-25', dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const { client, asked } = answeringClient('outside-2024', { sampling: {} });
  await client.connect(new SSEClientTransport(new URL(gw.url), { fetch: fetch2024 }));
  t.after(() => client.close());
  await until(() => (sessionOf(up.sessions, 'outside-2024')?.answers.length ?? 0) >= 2, 'the two answers');
  assert.deepEqual(byId(sessionOf(up.sessions, 'outside-2024')!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', error: { code: -32601, message: 'Method not found: elicitation/create does not exist in 2024-11-05' } },
    { jsonrpc: '2.0', id: 'sample-1', result: SAMPLED },
  ]);
  assert.deepEqual(asked, [{ method: 'sampling/createMessage', params: SAMPLING.params }]);
});

test('stdio front door client, per-session 2025 upstream: elicitation and sampling outside any call are written to stdout, and the answers reach the upstream', async (t) => {
  const up = await streamableUpstream(t, [FORM, SAMPLING]);
  const { client, asked } = answeringClient('outside-stdio', { elicitation: {}, sampling: {} });
  const transport = serveStdioTransport(up.url, '2025-11-25');
  await client.connect(transport);
  t.after(() => client.close());
  await until(() => (sessionOf(up.sessions, 'outside-stdio')?.answers.length ?? 0) >= 2, 'the two answers');
  assert.deepEqual(byId(sessionOf(up.sessions, 'outside-stdio')!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept', content: { name: 'Ada' } } },
    { jsonrpc: '2.0', id: 'sample-1', result: SAMPLED },
  ]);
  assert.equal(asked.length, 2);
});

test('a client that did not declare the capability or the mode: the upstream is told which, and the client is not asked', async (t) => {
  const up = await streamableUpstream(t, [FORM, SAMPLING, URL_MODE]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-11-25' });
  // Elicitation in form mode only (`{}`), no sampling.
  const { client, asked } = answeringClient('outside-undeclared', { elicitation: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());
  await until(() => (sessionOf(up.sessions, 'outside-undeclared')?.answers.length ?? 0) >= 3, 'the three answers');
  const refused = (detail: string) => ({ code: -32602, message: `Client cannot answer the server's input request: client did not declare ${detail}` });
  assert.deepEqual(byId(sessionOf(up.sessions, 'outside-undeclared')!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept', content: { name: 'Ada' } } },
    { jsonrpc: '2.0', id: 'elicit-url-1', error: refused('elicitation.url') },
    { jsonrpc: '2.0', id: 'sample-1', error: refused('sampling') },
  ]);
  assert.deepEqual(asked, [{ method: 'elicitation/create', params: FORM.params }]);

  // A client that declared neither: both are refused, naming what it lacks.
  const bare = answeringClient('outside-bare', {});
  await bare.client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => bare.client.close());
  await until(() => (sessionOf(up.sessions, 'outside-bare')?.answers.length ?? 0) >= 3, 'the three refusals');
  assert.deepEqual(byId(sessionOf(up.sessions, 'outside-bare')!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', error: refused('elicitation') },
    { jsonrpc: '2.0', id: 'elicit-url-1', error: refused('elicitation.url') },
    { jsonrpc: '2.0', id: 'sample-1', error: refused('sampling') },
  ]);
});

test('the upstream cancels its elicitation outside a call: the client is told, with the id it saw, and nothing is answered for it', async (t) => {
  const up = await streamableUpstream(t, [FORM, SAMPLING], [FORM.id]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-11-25' });
  const cancelled: unknown[] = [];
  const client = new Client({ name: 'outside-cancel', version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
  // The elicitation is never answered: it waits for its cancellation.
  client.setRequestHandler(
    ElicitRequestSchema,
    (_req, extra) =>
      new Promise((_resolve, reject) =>
        extra.signal.addEventListener('abort', () => {
          cancelled.push(extra.signal.reason);
          reject(new Error('cancelled'));
        }),
      ),
  );
  client.setRequestHandler(CreateMessageRequestSchema, () => SAMPLED);
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());
  await until(() => cancelled.length === 1, 'the cancellation at the client');
  assert.deepEqual(cancelled, ['no longer needed']);
  // The sampling request sent after it is answered; the cancelled elicitation never is.
  await until(() => (sessionOf(up.sessions, 'outside-cancel')?.answers.length ?? 0) >= 1, 'the answer to sample-1');
  await client.ping();
  assert.deepEqual(sessionOf(up.sessions, 'outside-cancel')!.answers, [{ jsonrpc: '2.0', id: 'sample-1', result: SAMPLED }]);
});

test('2024-11-05 HTTP+SSE upstream, per-session: its sampling and elicitation outside any call reach the client, and the answers go back on its POST URL', async (t) => {
  const up = await httpSseUpstream(t, [FORM, SAMPLING]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2024-11-05' });
  const { client, asked } = answeringClient('outside-over-sse', { elicitation: {}, sampling: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => client.close());
  await until(() => (sessionOf(up.sessions, 'outside-over-sse')?.answers.length ?? 0) >= 2, 'the two answers');
  assert.deepEqual(byId(sessionOf(up.sessions, 'outside-over-sse')!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept', content: { name: 'Ada' } } },
    { jsonrpc: '2.0', id: 'sample-1', result: SAMPLED },
  ]);
  assert.equal(asked.length, 2);
});

test('what stays refused: a 2026-07-28 client’s pooled session and a shared upstream session have no one client to ask (-32603)', async (t) => {
  const unroutable = { code: -32603, message: 'Switchyard cannot route this request to a client' };
  // A 2026-07-28 client in front of a per-session upstream: its pooled session (by principal and
  // capabilities) may serve several, and 2026-07-28 servers send no request outside a request.
  const up = await streamableUpstream(t, [FORM, SAMPLING]);
  const gw = await gateway(t, { upstreamUrl: up.url, upstreamEra: '2025-11-25' });
  const caps = { elicitation: {}, sampling: {} };
  const listed = await post(gw.url, modernBody(1, 'tools/list', {}, caps), modernHeaders('tools/list'));
  assert.equal(listed.status, 200);
  const pooled = () => [...up.sessions.values()].find((s) => s.caps.sampling !== undefined);
  await until(() => (pooled()?.answers.length ?? 0) >= 2, 'the pooled session refused');
  assert.deepEqual(byId(pooled()!.answers), [
    { jsonrpc: '2.0', id: 'elicit-1', error: unroutable },
    { jsonrpc: '2.0', id: 'sample-1', error: unroutable },
  ]);

  // A shared upstream session serves every client: nobody is asked.
  const shared = await streamableUpstream(t, [FORM, SAMPLING]);
  const gw2 = await gateway(t, { upstreamUrl: shared.url, upstreamEra: '2025-11-25', isolation: 'shared' });
  const { client, asked } = answeringClient('outside-shared', caps);
  await client.connect(new StreamableHTTPClientTransport(new URL(gw2.url)));
  t.after(() => client.close());
  await client.listTools();
  const withGet = () => [...shared.sessions.values()].filter((s) => s.write !== undefined);
  await until(() => withGet().length >= 1 && withGet().every((s) => s.answers.length >= 2), 'the shared session refused');
  for (const s of withGet()) {
    assert.deepEqual(byId(s.answers), [
      { jsonrpc: '2.0', id: 'elicit-1', error: unroutable },
      { jsonrpc: '2.0', id: 'sample-1', error: unroutable },
    ]);
  }
  assert.deepEqual(asked, []);
});
