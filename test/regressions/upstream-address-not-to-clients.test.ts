// An HTTP upstream's failure put its origin into the JSON-RPC error a client got: a call to an
// upstream that had gone away was answered -32000 `Upstream unavailable: http://127.0.0.1:PORT:
// connect ECONNREFUSED 127.0.0.1:PORT`, naming the gateway's internal topology to every caller
// (docs/security.md: an upstream's address is the operator's). The client now reads Switchyard's
// words (`Upstream unavailable: connection refused`); the `request failed` line and the upstream's
// `lastError` (/status.json) keep the origin and node's own text.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, freePort, opsHttp } from '../helpers/ops.js';
import { networkErrorWords } from '../../src/upstreams/http/transport.js';

const call = (url: string, id: number) =>
  post(url, modernBody(id, 'tools/call', { name: 'echo', arguments: { message: `m${id}` } }), modernHeaders('tools/call', 'echo'));

test("a call to an HTTP upstream that went away: the client's error names no address; the log line and lastError do", async (t) => {
  const port = await freePort();
  const server = await opsHttp(t, port);
  const gw = await configGateway(t, { limits: { upstreamBreakerFailures: 1 }, upstreams: { flaky: { url: server.url } } });
  assert.equal((await call(gw.url, 1)).status, 200);
  await server.stop();

  const r = await call(gw.url, 2);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Upstream unavailable: connection refused' } });
  assert.ok(!r.text.includes(`127.0.0.1:${port}`), r.text);

  const origin = new URL(server.url).origin;
  const operator = `Upstream unavailable: ${origin}: connect ECONNREFUSED 127.0.0.1:${port}`;
  const failed = gw.records.filter((l) => l.msg === 'request failed' && l.rpcId === 2);
  assert.deepEqual(
    failed.map((l) => [l.code, l.error, l.mount ?? l.upstream]),
    [['SWY_ERR_UPSTREAM_UNAVAILABLE', operator, 'flaky']],
  );
  // The breaker (one failure) took it down: /status.json's lastError is the operator's text.
  assert.equal(gw.supervised.get('flaky')?.lastError, operator);
});

test('networkErrorWords: a network failure by its code, never its address', () => {
  const err = (code: string, message = `connect ${code} 10.0.0.7:8443`) => Object.assign(new Error(message), { code });
  assert.equal(networkErrorWords(err('ECONNREFUSED')), 'connection refused');
  assert.equal(networkErrorWords(new TypeError('fetch failed', { cause: err('ENOTFOUND', 'getaddrinfo ENOTFOUND mcp.internal') })), 'host name not resolved');
  assert.equal(networkErrorWords(Object.assign(new AggregateError([err('ECONNREFUSED')]), { code: undefined })), 'connection refused');
  assert.equal(networkErrorWords(err('CERT_HAS_EXPIRED', 'certificate has expired')), 'TLS handshake failed (CERT_HAS_EXPIRED)');
  assert.equal(networkErrorWords(err('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate')), 'TLS handshake failed (DEPTH_ZERO_SELF_SIGNED_CERT)');
  assert.equal(networkErrorWords(err('UND_ERR_SOCKET', 'other side closed')), 'connection closed by the upstream');
  assert.equal(networkErrorWords(err('EWHATEVER')), 'network error (EWHATEVER)');
  assert.equal(networkErrorWords(new Error('10.0.0.7:8443 said no')), 'network error');
});
