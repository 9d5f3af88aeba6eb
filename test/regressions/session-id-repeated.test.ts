// A 2025-era request whose `Mcp-Session-Id` cannot name one session (two field lines, which Node
// joins as `a, b`, or one value with a character outside visible ASCII) is malformed: 400 with
// SWY_ERR_SESSION_ID_MALFORMED, not 404 `Session not found` (which tells a client its session is
// gone and to initialize again: 2025-11-25 basic/transports#session-management). Found in review:
// POST, GET and DELETE with the header twice were answered 404 -32001.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders } from '../helpers/http.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';

const MALFORMED = { code: -32000, message: 'Bad Request: Mcp-Session-Id header must carry exactly one session id' };

test('two Mcp-Session-Id field lines (or a value no session id has) get 400, a single id is served', async (t) => {
  const gw = await gateway(t);
  const port = new URL(gw.url).port;
  const sid = (await initSession(gw.url, '2025-11-25'))['mcp-session-id'];
  const host = `Host: 127.0.0.1:${port}`;
  const postHead = (ids: string[]) =>
    [`POST /mcp HTTP/1.1`, host, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', 'MCP-Protocol-Version: 2025-11-25']
      .concat(ids.map((id) => `Mcp-Session-Id: ${id}`))
      .join('\r\n');
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
  const assertMalformed = (r: RawAnswer, id: number | null, what: string) => {
    assert.equal(r.status, 400, `${what}: ${r.body}`);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id, error: MALFORMED }, what);
  };

  // The live id twice, a live and an unknown one, and one joined value: all one malformed header.
  assertMalformed(await rawRequest(Number(port), postHead([sid, sid]), ping), 7, 'POST, the live id twice');
  assertMalformed(await rawRequest(Number(port), postHead([sid, 'other']), ping), 7, 'POST, live then unknown');
  assertMalformed(await rawRequest(Number(port), postHead([`${sid}, ${sid}`]), ping), 7, 'POST, one joined line');
  assertMalformed(await rawRequest(Number(port), postHead(['']), ping), 7, 'POST, an empty value');
  // Joined with a bare comma (RFC 9110 §5.3 allows it; a proxy may do it), or with a stray comma:
  // a comma is in no id this gateway issues (found by h-trial3: these got 404).
  assertMalformed(await rawRequest(Number(port), postHead([`${sid},${sid}`]), ping), 7, 'POST, joined with a bare comma');
  assertMalformed(await rawRequest(Number(port), postHead([`${sid},`]), ping), 7, 'POST, a trailing comma');
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 8,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  assertMalformed(await rawRequest(Number(port), postHead([sid, sid]), init), 8, 'POST initialize');
  const getHead = `GET /mcp HTTP/1.1\r\n${host}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: ${sid}\r\nMcp-Session-Id: ${sid}`;
  assertMalformed(await rawRequest(Number(port), getHead), null, 'GET');
  const delHead = `DELETE /mcp HTTP/1.1\r\n${host}\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: ${sid}\r\nMcp-Session-Id: ${sid}`;
  assertMalformed(await rawRequest(Number(port), delHead), null, 'DELETE');

  // A 2026-07-28 request (modern `_meta`) ignores the header, repeated or not (docs/dialects.md).
  const modern = JSON.stringify(modernBody(9, 'tools/list'));
  const modernHead = [
    `POST /mcp HTTP/1.1`,
    host,
    ...Object.entries(modernHeaders('tools/list')).map(([k, v]) => `${k}: ${v}`),
    `Mcp-Session-Id: ${sid}`,
    'Mcp-Session-Id: x',
  ];
  const served = await rawRequest(Number(port), modernHead.join('\r\n'), modern);
  assert.equal(served.status, 200, served.body);
  assert.equal((served.json as { id: number; result: { tools: unknown[] } }).id, 9, served.body);

  // The session is untouched: one field line with its id is served, and ends it.
  const one = await rawRequest(Number(port), postHead([sid]), ping);
  assert.equal(one.status, 200, one.body);
  assert.deepEqual(one.json, { jsonrpc: '2.0', id: 7, result: {} });
  const del = await rawRequest(Number(port), `DELETE /mcp HTTP/1.1\r\n${host}\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: ${sid}`);
  assert.equal(del.status, 200, del.body);
  // An unknown (here: deleted) single id is still 404.
  const gone = await rawRequest(Number(port), postHead([sid]), ping);
  assert.equal(gone.status, 404, gone.body);
  assert.deepEqual(gone.json, { jsonrpc: '2.0', id: 7, error: { code: -32001, message: 'Session not found' } });
});
