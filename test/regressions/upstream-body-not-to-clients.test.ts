// Regression (found by h-secrets): an HTTP upstream that answered a call with an HTTP error and a
// plain-text body had that body copied into the client's JSON-RPC error (`Upstream protocol
// error: HTTP 403 Invalid API key: sk-…`). Upstreams often repeat the credential they refuse, and
// that credential is the gateway's, configured for this upstream only. The body is now the
// operator's, as a stdio child's stderr is (docs/security.md): in the `request failed` log line,
// not in what the client is sent.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { gateway } from '../helpers/gateway.js';
import { modernHttp } from '../helpers/servers.js';
import { listenForTest } from '../helpers/stub-http.js';

const KEY = 'PLANTED_UPSTREAM_KEY_61ab';

test('an upstream that refuses a tool call with 403 and its key in the body: the client gets the status, the log the body', async (t) => {
  const s = await modernHttp(t);
  const to = new URL(s.url);
  const origin = await listenForTest(
    t,
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.includes('"tools/call"'))
          return void res.writeHead(403, { 'content-type': 'text/plain' }).end(`Invalid API key: ${String(req.headers['x-api-key'])}`);
        const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: '/mcp', headers: { ...req.headers, host: to.host } }, (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(body);
      });
    }),
  );
  const gw = await gateway(t, { upstreamUrl: `${origin}/mcp`, upstreamHeaders: { 'x-api-key': KEY } });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Upstream protocol error: HTTP 403' } });
  const failed = gw.records.find((x) => x.msg === 'request failed');
  assert.equal(failed?.error, `Upstream protocol error: HTTP 403 Invalid API key: ${KEY}`);
});
