// Named in the last closing note: gaps in `switchyard_upstream_protocol_faults_total` and in
// answered-id handling. A 2026-07-28 upstream's stray response on a call's answer was dropped
// unsaid (now `unknown_id`); a 2025 session did not remember the ids it had answered, so the same
// response again on the GET stream passed for a late answer (now `duplicate_response`); an SSE
// event over `maxUpstreamMessageBytes` (now its own kind, `oversize`), an HTTP+SSE POST answer
// body that starts as JSON and is not, and the answer to a message POSTed with no answer awaited
// were not counted (now `unparsable`); and HTTP+SSE messages between the `initialize` reply and
// the session's routing were dropped unsaid (now kept, bounded, and routed). What the client gets
// is unchanged in each case.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { faultsGateway } from '../helpers/ops.js';
import { httpSseStub, modernToolStub, sessionStub } from '../helpers/stub-http.js';

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const BAD = 'upstream sent an invalid message';

/** A 2026-07-28 tools/call of `name` through the gateway: its JSON-RPC body ({@link answerOf}). */
async function call(url: string, name: string): Promise<unknown> {
  return answerOf((await post(url, modernBody(9, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name))).json);
}

/** A call's whole JSON-RPC body as compared: its result reduced to its content (the rest is the gateway's `_meta`); an error whole. */
const answerOf = (body: unknown) => {
  const b = body as { result?: { content?: unknown } };
  return b.result ? { ...b, result: { content: b.result.content } } : body;
};
/** What the client gets for a call answered with `t`, as {@link answerOf} gives it. */
const answered = (t: string) => ({ jsonrpc: '2.0', id: 9, result: text(t) });

const noGet = (req: http.IncomingMessage, res: http.ServerResponse) => (req.method === 'GET' ? (res.writeHead(405).end(), true) : false);

test('2026-07-28: a response to an id never sent, on a call’s SSE answer, is counted as unknown_id and said; the call gets its own answer', async (t) => {
  const url = await modernToolStub(t, 'm', 'stray', (id, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'never-sent', result: text('impostor') })}\n\n`);
    res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: text('own') })}\n\n`);
  });
  const { gw, faults, counted } = await faultsGateway(t, { url, era: '2026-07-28' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'stray'), answered('own'));
  assert.deepEqual(await counted(), [['up', 'unknown_id', 1]]);
  const said = gw.records.filter((r) => r.msg === 'upstream answer matches no request in flight').map((r) => [r.level, r.upstream, r.id]);
  assert.deepEqual(said, [[20, 'up', 's:never-sent']]);
});

test('2025 session: a call’s response sent again on the GET stream is a duplicate_response; the client gets one answer', async (t) => {
  const gets: http.ServerResponse[] = [];
  let sent: unknown;
  const url = await sessionStub(t, {
    name: 'twice',
    tool: 'twice',
    before: (req, res) => {
      if (req.method !== 'GET') return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      gets.push(res);
      return true;
    },
    call: (id) => {
      sent = { jsonrpc: '2.0', id, result: text('own') };
      return text('own');
    },
  });
  const { gw, faults, counted } = await faultsGateway(t, { url, era: '2025-06-18' });
  assert.deepEqual(await call(gw.url, 'twice'), answered('own'));
  assert.deepEqual(await faults(), []);
  // The call's session opened its GET stream before the call: the last one opened.
  gets.at(-1)!.write(`data: ${JSON.stringify(sent)}\n\n`);
  assert.deepEqual(await counted(), [['up', 'duplicate_response', 1]]);
  const said = gw.records.filter((r) => r.msg === 'upstream sent a second response for one id').map((r) => [r.level, r.upstream, r.id, r.method]);
  assert.deepEqual(said, [[40, 'up', `n:${String((sent as { id: unknown }).id)}`, 'tools/call']]);
  // Nothing else: the client's one answer stands, and the next call is answered as usual.
  assert.deepEqual(await call(gw.url, 'twice'), answered('own'));
  assert.deepEqual(await faults(), [['up', 'duplicate_response', 1]]);
});

/** What the client gets for a call whose answer carried an SSE event over a bound of 4,096 characters (before this change too, when the event came in pieces). */
const OVER = { jsonrpc: '2.0', id: 9, error: { code: -32603, message: 'Upstream protocol error: an SSE event larger than 4096 characters' } };

for (const [how, split] of [
  ['in pieces', true],
  ['whole in one write', false],
] as const)
  test(`Streamable HTTP: an SSE event over maxUpstreamMessageBytes on a call’s answer, ${how}, is counted as oversize; the client told so`, async (t) => {
    // The data of the event: a JSON string of 4,095 x's (4,097 characters with its quotes), then its response.
    const over = `"${'x'.repeat(4095)}"`;
    const url = await sessionStub(t, {
      name: 'big',
      tool: 'big',
      before: noGet,
      call: (id, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
        const rest = `"\n\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: text('own') })}\n\n`;
        if (!split) return res.end(`data: ${over}${rest}`);
        res.write(`data: ${over.slice(0, -1)}`);
        setTimeout(() => res.end(rest), 50);
      },
    });
    const { gw, faults, counted } = await faultsGateway(t, { url, era: '2025-06-18' }, { limits: { maxUpstreamMessageBytes: 4096 } });
    assert.deepEqual(await faults(), []);
    assert.deepEqual(await call(gw.url, 'big'), OVER);
    assert.deepEqual(await counted(), [['up', 'oversize', 1]]);
    const said = gw.records.filter((r) => r.msg === BAD).map((r) => [r.level, r.upstream, r.maxBytes, r.count]);
    assert.deepEqual(said, [[50, 'up', 4096, 1]]);
  });

test('Streamable HTTP: the same event at maxUpstreamMessageBytes is no fault', async (t) => {
  // 4,096 characters of event data: a JSON string of 4,094 x's in its quotes.
  const url = await sessionStub(t, {
    name: 'at-bound',
    tool: 'big',
    before: noGet,
    call: (id, res) =>
      res
        .writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' })
        .end(`data: "${'x'.repeat(4094)}"\n\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: text('own') })}\n\n`),
  });
  const { gw, faults } = await faultsGateway(t, { url, era: '2025-06-18' }, { limits: { maxUpstreamMessageBytes: 4096 } });
  assert.deepEqual(await call(gw.url, 'big'), answered('own'));
  assert.deepEqual(await faults(), []);
});

test('HTTP+SSE: a POST answer body that starts as JSON and is not is counted as unparsable; the call gets its answer from the stream', async (t) => {
  const url = await httpSseStub(
    t,
    'sse-bad-body',
    (m, write) => {
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'bad', inputSchema: { type: 'object' } }] } });
      if (m.method === 'tools/call') return write({ id: m.id, result: text('own') });
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    { postBody: (m) => (m.method === 'tools/call' ? ' {oops' : undefined) },
  );
  const { gw, faults, counted } = await faultsGateway(t, { url, transport: 'sse' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'bad'), answered('own'));
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  const said = gw.records.filter((r) => r.msg === BAD).map((r) => [r.level, r.upstream, r.excerpt, r.count]);
  assert.deepEqual(said, [[50, 'up', ' {oops', 1]]);
});

test('HTTP+SSE: a POST answer body that is not JSON and does not look it (Accepted) is no fault', async (t) => {
  const url = await httpSseStub(
    t,
    'sse-accepted',
    (m, write) => {
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'ok', inputSchema: { type: 'object' } }] } });
      if (m.method === 'tools/call') return write({ id: m.id, result: text('own') });
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    { postBody: (m) => (m.method === 'tools/call' ? 'Accepted' : undefined) },
  );
  const { gw, faults } = await faultsGateway(t, { url, transport: 'sse' });
  assert.deepEqual(await call(gw.url, 'ok'), answered('own'));
  assert.deepEqual(await faults(), []);
});

test('2025 session: the answer to a message POSTed with no answer awaited (a ping’s answer) that is not JSON is counted as unparsable', async (t) => {
  let gets = 0;
  const url = await sessionStub(t, {
    name: 'forgotten',
    tool: 'ok',
    before: (req, res, m) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // The first GET stream pings; the gateway answers it, and that answer's answer is garbage.
        if (++gets === 1) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 'p1', method: 'ping' })}\n\n`);
        return true;
      }
      if (m?.id !== 'p1' || m.method !== undefined) return false;
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end('{oops');
      return true;
    },
    call: () => text('fine'),
  });
  const { gw, counted } = await faultsGateway(t, { url, era: '2025-06-18' });
  assert.deepEqual(await call(gw.url, 'ok'), answered('fine'));
  assert.deepEqual(await counted(), [['up', 'unparsable', 1]]);
  const said = gw.records.filter((r) => r.msg === BAD).map((r) => [r.level, r.upstream, r.excerpt, r.count]);
  assert.deepEqual(said, [[50, 'up', '{oops', 1]]);
});

/** An HTTP+SSE upstream whose `initialize` reply comes in one write with `after` messages (each a `message` event). */
async function earlyStub(t: { after(fn: () => Promise<void>): void }, after: Array<Record<string, unknown>>) {
  const hello = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'early', version: '1.0.0' } };
  return httpSseStub(
    t,
    'early',
    (m, write) => {
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'x', inputSchema: { type: 'object' } }] } });
      if (m.method === 'tools/call') return write({ id: m.id, result: text('own') });
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    {
      // One write: every message is on its way before the gateway has read the reply.
      initialize: (m, _write, raw) =>
        raw([{ jsonrpc: '2.0', id: m.id, result: hello }, ...after].map((x) => JSON.stringify(x)).join('\n\nevent: message\ndata: ')),
    },
  );
}

test('HTTP+SSE: a message right after the initialize reply, before the session routes, is routed (here a stray response: unknown_id)', async (t) => {
  const url = await earlyStub(t, [{ jsonrpc: '2.0', id: 'never-sent', result: {} }]);
  const { gw, counted } = await faultsGateway(t, { url, transport: 'sse' });
  // The control session's handshake: counted once, with no call.
  assert.deepEqual(await counted(), [['up', 'unknown_id', 1]]);
  assert.deepEqual(
    gw.records.filter((r) => r.msg === 'upstream messages dropped before its session routed them'),
    [],
  );
  assert.deepEqual(await call(gw.url, 'x'), answered('own'));
});

test('HTTP+SSE: at most 64 such messages are kept; the 65th is dropped and said at warn', async (t) => {
  const strays = Array.from({ length: 65 }, (_, i) => ({ jsonrpc: '2.0', id: `never-sent-${i}`, result: {} }));
  const url = await earlyStub(t, strays);
  const { gw, counted } = await faultsGateway(t, { url, transport: 'sse' });
  assert.deepEqual(await counted(64), [['up', 'unknown_id', 64]]);
  const said = gw.records
    .filter((r) => r.msg === 'upstream messages dropped before its session routed them')
    .map((r) => [r.level, r.upstream, r.dropped, r.kept]);
  assert.deepEqual(said, [[40, 'up', 1, 64]]);
});
