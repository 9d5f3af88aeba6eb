// A client's answer to a server request that is not a JSON-RPC response of MCP's shape (a result
// that is not an object, an error without an integer code and a string message, both at once) is
// refused 400 / -32600 naming what is wrong, and the server request still waits for a fit answer.
// Found by a trial: such an answer was taken with 202 and handed on as it came to the upstream
// (server-everything), which dropped it, so the client was told nothing and the call hung.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { messagesUntilResponse, openSse, post } from '../helpers/http.js';

const H25 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('malformed answers to elicitation/create get 400 -32600; a well-formed one then completes the call', async (t) => {
  const gw = await gateway(t);
  const init = await post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 't', version: '1' } },
    },
    H25,
  );
  const h = { ...H25, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
  await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
  const call = await openSse(
    gw.url,
    'POST',
    h,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { question: 'Who?' } } }),
  );
  t.after(() => call.close());
  let ask: { id: string; method: string } | undefined;
  while (!ask) {
    const ev = await call.next(20_000);
    const m = ev.data ? (JSON.parse(ev.data) as { id?: string; method?: string }) : {};
    if (m.method === 'elicitation/create' && m.id !== undefined) ask = m as { id: string; method: string };
  }

  const invalid = (detail: string) => ({ code: -32600, message: `Invalid Request: not a JSON-RPC 2.0 message: ${detail}` });
  const cases: Array<[unknown, string]> = [
    [{ jsonrpc: '2.0', id: ask.id, result: 'accept' }, 'result must be an object'],
    [{ jsonrpc: '2.0', id: ask.id, result: null }, 'result must be an object'],
    [{ jsonrpc: '2.0', id: ask.id, error: { code: 'x', message: 5 } }, 'error must be an object with an integer code and a string message'],
    [{ jsonrpc: '2.0', id: ask.id, error: { code: -1.5, message: 'no' } }, 'error must be an object with an integer code and a string message'],
    [{ jsonrpc: '2.0', id: ask.id, result: {}, error: { code: -1, message: 'no' } }, 'a response carries result or error, not both'],
  ];
  for (const [body, detail] of cases) {
    const r = await post(gw.url, body, h);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual((r.json as { error: unknown }).error, invalid(detail), JSON.stringify(body));
  }

  const ok = await post(gw.url, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Ada' } } }, h);
  assert.equal(ok.status, 202);
  const last = (await messagesUntilResponse(call, 1)).at(-1) as { result?: { content: Array<{ text: string }> } };
  assert.match(String(last.result?.content[0]?.text), /Ada/);
});
