// A 2025 upstream that never answered a session's GET with its headers (but answered POSTs) made
// every first call on a new upstream session wait for them up to upstreamRequestTimeoutMs (30 s):
// the call waited for its session's GET stream to open with no bound of its own. Found by reading
// the connector's wait before its POST (docs/upstreams.md: "Each session opens its GET stream
// before its first call"). The wait is now upstreamGetStreamWaitMs (2,000 ms by default).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { initSession, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { sessionStub } from '../helpers/stub-http.js';

test('a first call on an upstream session whose GET never gets headers is sent after upstreamGetStreamWaitMs, not after upstreamRequestTimeoutMs', async (t) => {
  const gets: http.ServerResponse[] = [];
  let calls = 0;
  const url = await sessionStub(t, {
    name: 'deaf-get',
    tool: 'echo',
    // Never answered: no headers, no body, until the test ends.
    before: (req, res) => req.method === 'GET' && gets.push(res) > 0,
    call: () => (calls++, { content: [{ type: 'text', text: 'done' }] }),
  });
  // The call's deadline (10 s) is well under upstreamRequestTimeoutMs (30 s, the GET's headers
  // timeout) and well over upstreamGetStreamWaitMs (2 s, the default).
  const gw = await configGateway(t, { limits: { requestTimeoutMs: 10_000 }, upstreams: { deaf: { url } } });
  const headers = await initSession(gw.url);
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } }, headers);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } });
  assert.ok(gets.length >= 1);
  assert.equal(calls, 1);
});
