// Regression (found by h-trial8): an upstream token (client credentials, RFC 6749 §4.4; token
// exchange, RFC 8693) was reused until 30 s before it expired, so a token issued for 30 s or less
// (`expires_in`, RFC 6749 §5.1; short-lived tokens are what an authorization server should issue)
// was never reused: every request to the upstream (a tool call, the 2026-07-28 door's tools/list
// on its behalf) asked the token endpoint first, one round trip more each, and the authorization
// server got the gateway's request rate. Such a token is now reused for half its lifetime
// (docs/security.md, "Upstream credentials").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';
import { modernHttp } from '../helpers/servers.js';
import { REFRESH_MARGIN_MS, refreshAtMs } from '../../src/auth/outbound.js';

/** Tokens of this lifetime: reused for 14 s now, never before. */
const TTL_SEC = 28;

test('refreshAtMs: 30 s before expiry, or halfway through a shorter lifetime', () => {
  assert.equal(refreshAtMs(1_000, 300_000), 1_000 + 300_000 - REFRESH_MARGIN_MS);
  assert.equal(refreshAtMs(1_000, 60_000), 1_000 + 30_000);
  assert.equal(refreshAtMs(1_000, 28_000), 1_000 + 14_000);
  assert.equal(refreshAtMs(1_000, 1_000), 1_500);
});

for (const grant of ['clientCredentials', 'tokenExchange'] as const) {
  test(`${grant}: an upstream token issued for ${TTL_SEC} s is reused, not fetched again for every upstream request`, async (t) => {
    const as = await startAuthServer(t, { accessTokenTtlSec: TTL_SEC, machines: ['alice'] });
    const up = await modernHttp(t);
    const { clientId, clientSecret } = as.confidentialClient;
    const gw = await gatewayFromConfig(t, {
      ...(grant === 'tokenExchange' ? { auth: { bearer: { issuer: as.issuer } } } : {}),
      upstreams: { up: { url: up.url, era: '2026-07-28', credentials: { [grant]: { issuer: as.issuer, clientId, clientSecret, resource: up.url } } } },
    });
    const url = gw.urls[0];
    const authorization = grant === 'tokenExchange' ? `Bearer ${await as.clientCredentialsToken(url, undefined, 'alice')}` : undefined;
    const call = async (id: number) => {
      const r = await modernCall(url, id, 'tools/call', { name: 'echo', arguments: { message: `m${id}` } }, authorization);
      assert.deepEqual((r.json as { result?: { content?: unknown } }).result?.content, [{ type: 'text', text: `Echo: m${id}` }], r.text);
    };
    await call(1);
    const tokens = as.count('/token');
    // Client credentials: the gateway's own start (probe) took the one token; token exchange: alice's first call.
    assert.equal(tokens, grant === 'clientCredentials' ? 1 : 2);
    for (const id of [2, 3, 4]) await call(id);
    assert.equal(as.count('/token'), tokens);
    assert.equal(gw.records.filter((r) => r.msg === 'upstream token obtained').length, 1);
  });
}
