// Regression (found by h-trial8): an HTTP upstream that refused a tool call with 401 or 403 and a
// JSON body that is no JSON-RPC message (`{"error":"invalid_token"}`, the usual shape of an OAuth
// resource server's refusal, RFC 6750 §3) was reported to the client and in the `request failed`
// line as `Upstream protocol error: JSON answer without the response`: the status was lost, so an
// operator whose upstream credential (`credentials.headers`) was wrong could not tell. The status
// now decides, as for a plain-text body (docs/security.md, threat model): the client gets
// `Upstream protocol error: HTTP 401`, the operator's line the body too; the upstream's own
// challenge still never reaches the client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { gateway } from '../helpers/gateway.js';
import { modernHttp } from '../helpers/servers.js';
import { interceptingProxy } from '../helpers/stub-http.js';

const KEY = 'PLANTED_UPSTREAM_KEY_7f3c';

for (const status of [401, 403]) {
  test(`an upstream that refuses a tool call with ${status} and a JSON body: the client gets the status, the log the body`, async (t) => {
    const s = await modernHttp(t);
    const origin = await interceptingProxy(
      t,
      new URL(s.url),
      (req, body, res) => {
        if (!body.includes('"tools/call"')) return false;
        res
          .writeHead(status, {
            'content-type': 'application/json',
            'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", error="invalid_token"',
          })
          .end(JSON.stringify({ error: 'invalid_token', error_description: `unknown key ${String(req.headers['x-api-key'])}` }));
        return true;
      },
      '/mcp',
    );
    const gw = await gateway(t, { upstreamUrl: `${origin}/mcp`, upstreamHeaders: { 'x-api-key': KEY } });
    const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: `Upstream protocol error: HTTP ${status}` } });
    assert.equal(r.headers['www-authenticate'], undefined);
    const failed = gw.records.find((x) => x.msg === 'request failed');
    assert.equal(failed?.error, `Upstream protocol error: HTTP ${status} {"error":"invalid_token","error_description":"unknown key ${KEY}"}`);
  });
}

test('a 200 JSON answer without the response is still that, not an HTTP error', async (t) => {
  const s = await modernHttp(t);
  const origin = await interceptingProxy(
    t,
    new URL(s.url),
    (_req, body, res) => {
      if (!body.includes('"tools/call"')) return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":"not-ours","result":{}}');
      return true;
    },
    '/mcp',
  );
  const gw = await gateway(t, { upstreamUrl: `${origin}/mcp` });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Upstream protocol error: JSON answer without the response' } });
});
