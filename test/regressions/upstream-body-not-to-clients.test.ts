// Regression (found by h-secrets): an HTTP upstream that answered a call with an HTTP error and a
// plain-text body had that body copied into the client's JSON-RPC error (`Upstream protocol
// error: HTTP 403 Invalid API key: sk-…`). Upstreams often repeat the credential they refuse, and
// that credential is the gateway's, configured for this upstream only. The body is now the
// operator's, as a stdio child's stderr is (docs/security.md): in the `request failed` log line,
// not in what the client is sent.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { gateway } from '../helpers/gateway.js';
import { modernHttp } from '../helpers/servers.js';
import { interceptingProxy } from '../helpers/stub-http.js';

const KEY = 'PLANTED_UPSTREAM_KEY_61ab';

test('an upstream that refuses a tool call with 403 and its key in the body: the client gets the status, the log the body', async (t) => {
  const s = await modernHttp(t);
  const to = new URL(s.url);
  const origin = await interceptingProxy(
    t,
    to,
    (req, body, res) => {
      if (!body.includes('"tools/call"')) return false;
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`Invalid API key: ${String(req.headers['x-api-key'])}`);
      return true;
    },
    '/mcp',
  );
  const gw = await gateway(t, { upstreamUrl: `${origin}/mcp`, upstreamHeaders: { 'x-api-key': KEY } });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Upstream protocol error: HTTP 403' } });
  const failed = gw.records.find((x) => x.msg === 'request failed');
  assert.equal(failed?.error, `Upstream protocol error: HTTP 403 Invalid API key: ${KEY}`);
});
