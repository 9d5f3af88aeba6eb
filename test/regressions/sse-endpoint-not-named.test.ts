// Regression (found by h-secrets): when an HTTP+SSE upstream refused a POST to its endpoint (or
// could not be reached there), the error named the endpoint whole: `http://host/message?
// sessionId=…: POST answered HTTP 500`. The query is the upstream session's id, which works as a
// bearer for that session, and the path may hold the upstream's key; the text went to the client's
// JSON-RPC error and the log. It now names the endpoint's origin only, as every upstream URL is
// named (docs/security.md, "Upstream URLs").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { gateway } from '../helpers/gateway.js';
import { everythingHttp } from '../helpers/servers.js';
import { interceptingProxy } from '../helpers/stub-http.js';

test('an HTTP+SSE upstream that answers a tool call 500: the client and the log get its origin, not its endpoint and session id', async (t) => {
  const s = await everythingHttp(t, 'sse');
  const to = new URL(s.url);
  const sessionIds = new Set<string>();
  // In front of server-everything: tools/call POSTs get 500, the rest passes.
  const origin = await interceptingProxy(t, to, (req, body, res) => {
    const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId');
    if (sid) sessionIds.add(sid);
    if (req.method !== 'POST' || !body.includes('"tools/call"')) return false;
    res.writeHead(500).end();
    return true;
  });
  const gw = await gateway(t, { upstreamUrl: `${origin}/sse` });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  const error = (r.json as { error: { message: string } }).error;
  // The client reads no address (test/regressions/upstream-address-not-to-clients.test.ts); the log line names the origin only.
  assert.equal(error.message, 'Upstream protocol error: POST answered HTTP 500');
  assert.ok(gw.records.some((l) => l.msg === 'request failed' && l.error === `Upstream protocol error: ${origin}: POST answered HTTP 500`));
  assert.ok(sessionIds.size > 0);
  for (const sid of sessionIds) {
    assert.doesNotMatch(r.text, new RegExp(sid));
    assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(sid));
  }
});
