// Known defect: an upstream response whose id is the string "1" was taken as the answer to the
// gateway's request 1 (a number): the stdio connector and the HTTP+SSE one kept their requests
// in flight (a client's calls, and the stdio child's handshake requests) by `String(id)`. The
// gateway numbers what it sends each upstream itself, so a child that echoed ids as strings had
// its answers attributed by value alone. JSON-RPC 2.0 §5 says the response's id MUST be the same
// as the request's, and §4 lets an id be a string or a number: "1" and 1 are different ids. Such
// a response now matches nothing and goes where a response with an unknown id goes (a debug line,
// `upstream answer matches no request in flight`, with the id's type in `id`: `s:1`); the request
// gets its own answer, or its deadline.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { httpSseStub } from '../helpers/stub-http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/misanswering-server.mjs');
const command = (mode = 'ok') => `"${process.execPath}" "${FIXTURE}" ${mode}`;

/** A 2026-07-28 tools/call of tool `name` through the gateway; its whole JSON-RPC body. */
async function call(gw: TestGateway, name: string): Promise<unknown> {
  return (await post(gw.url, modernBody(9, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name))).json;
}

/** The `id` of each `upstream answer matches no request in flight` line. */
const unmatched = (gw: TestGateway) => gw.records.filter((r) => r.msg === 'upstream answer matches no request in flight').map((r) => r.id);

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
/** The 2026-07-28 client's success body for a tool result of text `t` from server `server`. */
const answered = (t: string, server: string) => ({
  jsonrpc: '2.0',
  id: 9,
  result: { ...text(t), resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: server, version: '1.0.0' } } },
});

test('stdio: a response under the string "N" is not the answer to request N; the call gets its own answer', async (t) => {
  const gw = await gateway(t, { stdio: command() });
  // JSON-RPC 2.0 §5: the response's id MUST be the same as the request's; "3" is not 3.
  assert.deepEqual(await call(gw, 'string-id-first'), answered('own answer', 'misanswering'));
  // Ids 1 to 3 went to the handshake (server/discover, initialize) and the tools/list read for
  // the tool's annotations: the call was our 4.
  assert.deepEqual(unmatched(gw), ['s:4']);
});

test('stdio: a call answered only under its id as a string reaches its deadline', async (t) => {
  const gw = await gateway(t, { stdio: command(), limits: { requestTimeoutMs: 800 } });
  assert.deepEqual(await call(gw, 'string-id-only'), { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'Request timed out: 800 ms' } });
  assert.deepEqual(unmatched(gw), ['s:4']);
});

test("stdio: the gateway's own server/discover answered under its id as a string is unanswered: the probe waits out its time", async (t) => {
  const gw = await gateway(t, { stdio: command('discover-string-id'), limits: { upstreamProbeTimeoutMs: 300 } });
  // Without the type kept, the -32601 under "1" answered the probe (request 1) and nothing was said.
  const warned = gw.records.filter((r) => r.msg === 'upstream did not answer server/discover');
  assert.deepEqual(
    warned.map((r) => [r.level, r.waitedMs, r.revision]),
    [[40, 300, '2025-11-25']],
  );
  assert.deepEqual(unmatched(gw), ['s:1']);
  assert.deepEqual(await call(gw, 'string-id-first'), answered('own answer', 'misanswering'));
});

test('HTTP+SSE: a response under the string "N" on the stream is not the answer to call N', async (t) => {
  const url = await httpSseStub(t, 'sse-misanswering', (m, write) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'x', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') {
      write({ id: String(m.id), result: text('impostor') });
      if ((m.params as { name?: string }).name === 'string-id-first') write({ id: m.id, result: text('own answer') });
      return;
    }
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05', limits: { requestTimeoutMs: 800 } });
  assert.deepEqual(await call(gw, 'string-id-first'), answered('own answer', 'sse-misanswering'));
  assert.deepEqual(await call(gw, 'string-id-only'), { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'Request timed out: 800 ms' } });
  // Our 1 was the tools/list read for the annotations (cached for the second call).
  assert.deepEqual(unmatched(gw), ['s:2', 's:3']);
});
