// Named in the closing notes of the last round: an upstream that answered a single request with a
// JSON array holding its one response had it taken as the result (a Streamable HTTP JSON body),
// or had the array dropped without a word, the call then waiting out its deadline (an SSE
// `message` event on a POST stream or on the HTTP+SSE stream, a stdio line). JSON-RPC 2.0 §6
// answers a batch only to a batch, the gateway never sends one, and 2025-06-18 removed batching:
// the call now fails at once with the upstream's protocol error, named in the operator's
// `request failed` line. A 2025-03-26 upstream may still batch the requests and notifications it
// sends on its own: those are taken from it (and, before, were dropped too), and dropped from any
// other revision (docs/upstreams.md, "Batches from an upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { messagesUntilResponse, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { httpSseStub, sessionStub, type stubHttp } from '../helpers/stub-http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');
const command = (revision = '2025-11-25') => `"${process.execPath}" "${FIXTURE}" ${revision}`;
/** Short, so that a call left to its deadline (the defect) fails the test quickly. */
const limits = { requestTimeoutMs: 3000 };
const BATCHED = 'Upstream protocol error: tools/call: a response inside a JSON array (a batch) to a request sent alone (JSON-RPC 2.0 §6)';
const refused = { jsonrpc: '2.0', id: 9, error: { code: -32603, message: BATCHED } };
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

/** A 2026-07-28 tools/call of tool `name` through the gateway: its JSON-RPC body. */
async function call(gw: TestGateway, name: string): Promise<unknown> {
  return (await post(gw.url, modernBody(9, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name))).json;
}

/** The `[upstream, error]` of each `request failed` line. */
const failed = (gw: TestGateway) => gw.records.filter((r) => r.msg === 'request failed').map((r) => [r.upstream, r.error]);

test('stdio: a line that is a JSON array holding the response fails the call as the upstream protocol error', async (t) => {
  const gw = await gateway(t, { stdio: command(), limits });
  assert.deepEqual(await call(gw, 'batched'), refused);
  assert.deepEqual(failed(gw), [['default', BATCHED]]);
});

test('stdio, 2025-03-26: a batch of notifications is taken (progress reaches the client); a batched response is still refused', async (t) => {
  const gw = await gateway(t, { stdio: command('2025-03-26'), limits });
  const body = modernBody(9, 'tools/call', { name: 'notes-batched', arguments: {}, _meta: { progressToken: 'p' } });
  const sse = await openSse(gw.url, 'POST', modernHeaders('tools/call', 'notes-batched'), JSON.stringify(body));
  t.after(() => sse.close());
  const messages = await messagesUntilResponse(sse, 9);
  assert.deepEqual(
    messages.map((m) =>
      m.method === 'notifications/progress' ? (m.params as { progress: number }).progress : m.result && (m.result as { content: unknown }).content,
    ),
    [1, 2, text('after notes').content],
  );
  assert.deepEqual(await call(gw, 'batched'), refused);
});

test('stdio, 2025-11-25: a batch of notifications is dropped (batching was removed), the call answered', async (t) => {
  const gw = await gateway(t, { stdio: command(), limits });
  const body = modernBody(9, 'tools/call', { name: 'notes-batched', arguments: {}, _meta: { progressToken: 'p' } });
  const r = await post(gw.url, body, modernHeaders('tools/call', 'notes-batched'));
  // No progress came: the answer stayed JSON.
  assert.equal(r.headers['content-type'], 'application/json');
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, text('after notes').content);
});

/** A 2025-06-18 Streamable HTTP upstream whose tools/call answer is `answer(id)` (status 200, the given content type and body). */
function streamable(t: Parameters<typeof stubHttp>[0], answer: (id: unknown) => [string, string]): Promise<string> {
  return sessionStub(t, {
    name: 'batching',
    tool: 'batched',
    call: (id, res) => {
      const [type, body] = answer(id);
      res.writeHead(200, { 'content-type': type, 'mcp-session-id': 's1' }).end(body);
    },
  });
}

test('Streamable HTTP: a JSON body that is an array holding the response is not the result', async (t) => {
  const url = await streamable(t, (id) => ['application/json', JSON.stringify([{ jsonrpc: '2.0', id, result: text('batched') }])]);
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18', limits });
  assert.deepEqual(await call(gw, 'batched'), refused);
  assert.deepEqual(failed(gw), [['default', BATCHED]]);
});

test('Streamable HTTP: an SSE message event whose data is an array holding the response fails the call', async (t) => {
  const url = await streamable(t, (id) => [
    'text/event-stream',
    `event: message\ndata: ${JSON.stringify([{ jsonrpc: '2.0', id, result: text('batched') }])}\n\n`,
  ]);
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18', limits });
  assert.deepEqual(await call(gw, 'batched'), refused);
  assert.deepEqual(failed(gw), [['default', BATCHED]]);
});

test('HTTP+SSE: a message event whose data is an array holding the response fails the call', async (t) => {
  const url = await httpSseStub(t, 'sse-batching', (m, write, raw) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'batched', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') return raw(JSON.stringify([{ jsonrpc: '2.0', id: m.id, result: text('batched') }]));
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05', limits });
  assert.deepEqual(await call(gw, 'batched'), refused);
  assert.deepEqual(failed(gw), [['default', BATCHED]]);
});
