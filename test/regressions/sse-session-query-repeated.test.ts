// Regression (found by h-edges): an HTTP+SSE POST whose URI carried `sessionId` twice was
// delivered to the session the first one named (`URLSearchParams.get`). A request naming two
// sessions names none; the 2025 door refuses a repeated `Mcp-Session-Id` with 400 as well
// (session-id-repeated). Now it is 400 `SWY_ERR_SESSION_QUERY_REQUIRED`, and nothing reaches the session.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { openHttpSseSession, post } from '../helpers/http.js';

test('an HTTP+SSE POST naming sessionId twice is refused and reaches no session', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const origin = new URL(gw.url).origin;
  const { sse, to } = await openHttpSseSession(t, origin);
  const sid = new URL(to).searchParams.get('sessionId')!;
  const twice = new URL(to);
  twice.searchParams.append('sessionId', sid);
  const refused = await post(twice.href, { jsonrpc: '2.0', id: 7, method: 'ping' }, { 'content-type': 'application/json' });
  assert.deepEqual(
    [refused.status, refused.json],
    [400, { jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'Bad Request: sessionId query parameter is required: exactly one' } }],
  );
  // The session got nothing: its next event answers the ping sent after, on the URI as named.
  const ok = await post(to, { jsonrpc: '2.0', id: 8, method: 'ping' }, { 'content-type': 'application/json' });
  assert.equal(ok.status, 202);
  const next = await sse.next();
  assert.deepEqual(JSON.parse(next.data), { jsonrpc: '2.0', id: 8, result: {} });
});
