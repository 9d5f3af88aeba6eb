// Regression (found by h-secrets): when an upstream forgot a client session's own upstream session
// (it restarted; its GET stream answered 404 or 400), the gateway logged `upstream session lost:
// opening a new one` at info with `session: "s:<the client's Mcp-Session-Id>"`, the raw id, which
// works as a bearer (a sealed one on every replica). The line now names the session by its log
// name (`sessionLogId`), as `session opened` and `session closed` do.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';
import { everythingOnPort, freePort, stopChild } from '../helpers/servers.js';

test('an upstream restarted under a client session: the "upstream session lost" line names the session by its digest, never its id', async (t) => {
  const port = await freePort();
  let child = await everythingOnPort(port);
  t.after(() => stopChild(child));
  const gw = await gateway(t, { upstreamUrl: `http://127.0.0.1:${port}/mcp` });
  const h = await initSession(gw.url, '2025-11-25');
  const sessionId = h['mcp-session-id'];
  const call = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, h);
  assert.equal(call.status, 200);
  await stopChild(child);
  child = await everythingOnPort(port);
  const lostOf = () => gw.records.filter((r) => r.msg === 'upstream session lost: opening a new one' && r.session !== 'control');
  for (let i = 0; i < 200 && lostOf().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(
    lostOf().map((r) => r.session),
    [`s:${sessionLogId(sessionId)}`],
  );
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(sessionId));
});
