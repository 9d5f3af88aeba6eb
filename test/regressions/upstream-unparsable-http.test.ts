// Named in the closing notes of the last round: `unparsable` in
// `switchyard_upstream_protocol_faults_total` was counted for a stdio line that is not JSON only;
// an HTTP upstream's bytes that are not JSON (a Streamable HTTP JSON body, an SSE event on a
// call's POST answer or on the session's GET stream, an HTTP+SSE `message` event) failed the call
// or ended the stream unseen by the metric. Each is now counted once under its upstream, by the
// same code as a stdio line's, and said at error (`upstream sent an invalid message`); what the
// client gets is unchanged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { faultsGateway } from '../helpers/ops.js';
import { httpSseStub, modernToolStub, sessionStub } from '../helpers/stub-http.js';

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const MSG = 'upstream sent an invalid message';

/** {@link faultsGateway}, and `said()`: `[level, upstream, excerpt, count]` of each line saying so. */
async function withMetrics(t: { after(fn: () => Promise<void>): void }, upstream: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const m = await faultsGateway(t, upstream, extra);
  const said = () => m.gw.records.filter((r) => r.msg === MSG).map((r) => [r.level, r.upstream, r.excerpt, r.count]);
  return { ...m, said };
}

/** A 2026-07-28 tools/call of `name` through the gateway: the whole JSON-RPC body. */
async function call(url: string, name: string): Promise<unknown> {
  return (await post(url, modernBody(9, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name))).json;
}

const noGet = (req: http.IncomingMessage, res: http.ServerResponse) => (req.method === 'GET' ? (res.writeHead(405).end(), true) : false);

test('Streamable HTTP: a call answered with a JSON body that is not JSON: counted as unparsable, the client’s answer unchanged', async (t) => {
  const url = await sessionStub(t, {
    name: 'bad-json',
    tool: 'bad',
    before: noGet,
    call: (_id, res) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end('{"jsonrpc":"2.0","id":'),
  });
  const { gw, faults, counted, said } = await withMetrics(t, { url, era: '2025-06-18' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'bad'), CLIENT_GETS.json);
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  assert.deepEqual(said(), [[50, 'up', '{"jsonrpc":"2.0","id":', 1]]);
});

test('Streamable HTTP: an SSE event that is not JSON on a call’s POST answer: counted as unparsable, the client’s answer unchanged', async (t) => {
  const url = await sessionStub(t, {
    name: 'bad-event',
    tool: 'bad',
    before: noGet,
    call: (_id, res) => res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' }).end('data: {oops\n\n'),
  });
  const { gw, faults, counted, said } = await withMetrics(t, { url, era: '2025-06-18' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'bad'), CLIENT_GETS.sse);
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  assert.deepEqual(said(), [[50, 'up', '{oops', 1]]);
});

test('Streamable HTTP: an SSE event that is not JSON on the session’s GET stream: counted as unparsable, calls go on', async (t) => {
  let gets = 0;
  const url = await sessionStub(t, {
    name: 'bad-get',
    tool: 'ok',
    // The first GET stream carries one event that is not JSON; every other stays open, silent.
    before: (req, res) => {
      if (req.method !== 'GET') return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (++gets === 1) res.write('data: not json\n\n');
      return true;
    },
    call: () => text('fine'),
  });
  const { gw, counted, said } = await withMetrics(t, { url, era: '2025-06-18' });
  const fine = (await call(gw.url, 'ok')) as { result?: { content?: unknown } };
  assert.deepEqual(fine.result?.content, text('fine').content);
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  assert.deepEqual(said(), [[50, 'up', 'not json', 1]]);
});

test('Streamable HTTP: a GET stream event that is not JSON, replayed by a resuming server: the reconnect resumes after it, counted once', async (t) => {
  // Event 1 (good) and event 2 (not JSON) in separate writes, each stream replaying what follows
  // its Last-Event-ID and then ending, so that the gateway reconnects again and again.
  const events = ['id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}}\n\n', 'id: 2\ndata: not json\n\n'];
  const resumedFrom: Array<string | undefined> = [];
  let gets = 0;
  let enough!: () => void;
  const reconnected = new Promise<void>((r) => (enough = r));
  const url = await sessionStub(t, {
    name: 'bad-get-replay',
    tool: 'ok',
    before: (req, res) => {
      if (req.method !== 'GET') return false;
      const last = req.headers['last-event-id'];
      if (++gets > 1) resumedFrom.push(typeof last === 'string' ? last : undefined);
      if (gets === 5) enough();
      if (gets > 5) return (res.writeHead(405).end(), true);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const rest = events.slice(last === undefined ? 0 : Number(last));
      const next = () => {
        const e = rest.shift();
        if (e === undefined) return void res.end();
        res.write(e);
        setTimeout(next, 20);
      };
      next();
      return true;
    },
    call: () => text('fine'),
  });
  // No client call: the gateway's own (control) session holds the only GET stream.
  const { faults, said } = await withMetrics(t, { url, era: '2025-06-18' }, { limits: { upstreamBackoffMinMs: 5, upstreamBackoffMaxMs: 20 } });
  await reconnected;
  assert.deepEqual(resumedFrom, ['2', '2', '2', '2']);
  assert.deepEqual(await faults(), [['up', 'unparsable', 1]]);
  assert.deepEqual(said(), [[50, 'up', 'not json', 1]]);
});

test('HTTP+SSE: a message event that is not JSON: counted as unparsable, the client’s answer unchanged', async (t) => {
  const url = await httpSseStub(t, 'sse-bad', (m, write, raw) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'bad', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') return raw('{oops');
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const { gw, faults, counted, said } = await withMetrics(t, { url, transport: 'sse' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'bad'), CLIENT_GETS.httpSse);
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  assert.deepEqual(said(), [[50, 'up', '{oops', 1]]);
});

test('Streamable HTTP, 2026-07-28: an SSE event that is not JSON on a call’s answer: counted as unparsable, the client’s answer unchanged', async (t) => {
  const url = await modernToolStub(
    t,
    'bad-modern',
    'bad',
    (_id, res) => void res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: message\ndata: {oops\n\n'),
  );
  const { gw, faults, counted, said } = await withMetrics(t, { url, era: '2026-07-28' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'bad'), CLIENT_GETS.sse);
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  assert.deepEqual(said(), [[50, 'up', '{oops', 1]]);
});

/** What the client got before this change (recorded then), which it still gets. */
const CLIENT_GETS = {
  json: { jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'Upstream protocol error: HTTP 200' } },
  sse: { jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'Upstream protocol error: invalid JSON in an SSE event' } },
  httpSse: { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'Upstream unavailable: upstream SSE stream lost' } },
};
