// Session ids in logs. Found by a trial (helper-10): without a cluster, `session opened` and
// `session closed` carried the full Mcp-Session-Id (and the HTTP+SSE sessionId), a bearer
// credential: anyone reading the log could take the session over. They now carry its digest,
// as with replicas.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway } from '../helpers/gateway.js';
import { H2025, initSession, openSse, send } from '../helpers/http.js';

test('a 2025 session and an HTTP+SSE session are logged by the digest of their id, never the id', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'], logLevel: 'info' }, records);
  const h = await initSession(gw.url, '2025-11-25');
  const id = h['mcp-session-id'];
  assert.equal((await send(gw.url, 'DELETE', undefined, { ...H2025, ...h, 'mcp-protocol-version': '2025-11-25' })).status, 200);

  const sse = await openSse(gw.url.replace(/\/mcp$/, '/sse'), 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = await sse.next(5_000);
  const legacyId = new URL(endpoint.data, gw.url).searchParams.get('sessionId')!;
  assert.ok(legacyId);

  const opened = records.filter((r) => r.msg === 'session opened').map((r) => r.sessionId);
  assert.ok(opened.includes(sessionLogId(id)), JSON.stringify(opened));
  assert.ok(opened.includes(sessionLogId(legacyId)), JSON.stringify(opened));
  assert.ok(records.some((r) => r.msg === 'session closed' && r.sessionId === sessionLogId(id)));
  const all = JSON.stringify(records);
  assert.equal(all.includes(id), false, 'the 2025 session id is not in the log');
  assert.equal(all.includes(legacyId), false, 'the HTTP+SSE session id is not in the log');
});
