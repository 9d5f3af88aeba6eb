// With RFC 7662 introspection on, every request carrying a bad opaque token made one POST to the
// authorization server, so an unauthenticated caller drove it at their own request rate (found by
// h-trial8). An `active: false` answer is now remembered by the token's SHA-256 for
// INACTIVE_TOKEN_TTL_MS (10 s, never longer than cacheMaxMs), in an LRU bounded by
// cacheMaxEntries (docs/security.md, "Choices made where the specification is silent").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBearerVerifier, INACTIVE_TOKEN_TTL_MS } from '../../src/auth/bearer.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig, modernCall, refusalBody } from '../helpers/identity.js';

const BAD = 'not-issued-by-anyone_0123456789abcdef';

test('the same bad opaque token sent again through the gateway is refused without a second introspection request', async (t) => {
  const as = await startAuthServer(t, { opaqueResources: [] });
  const client = as.confidentialClient;
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer, introspection: { clientId: client.clientId, clientSecret: client.clientSecret } } },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  for (let i = 1; i <= 5; i++) {
    const r = await modernCall(url, i, 'tools/list', {}, `Bearer ${BAD}`);
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, refusalBody('Unauthorized: invalid access token: inactive'));
  }
  assert.equal(as.count('/token/introspection'), 1);
  // Another token is another question.
  assert.equal((await modernCall(url, 6, 'tools/list', {}, `Bearer ${BAD}x`)).status, 401);
  assert.equal(as.count('/token/introspection'), 2);
  // The token is in no log line, only its hash where one is logged.
  assert.equal(JSON.stringify(gw.records).includes(BAD), false);
});

test('an inactive answer is remembered for INACTIVE_TOKEN_TTL_MS, at most cacheMaxEntries of them, and not at all with cacheMaxMs 0', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const resource = { uri: 'https://gw.example.com/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  const as = await startAuthServer(t, { opaqueResources: [resource.uri] });
  const client = as.confidentialClient;
  const inactive = (p: Promise<unknown>) =>
    assert.rejects(p, (err: unknown) => err instanceof SwitchyardError && err.message === 'Unauthorized: invalid access token: inactive');
  const verifier = createBearerVerifier({
    issuer: as.issuer,
    introspection: { clientId: client.clientId, clientSecret: client.clientSecret, cacheMaxEntries: 2 },
  });
  assert.equal(INACTIVE_TOKEN_TTL_MS, 10_000);
  await inactive(verifier.verify(BAD, resource));
  t.mock.timers.tick(INACTIVE_TOKEN_TTL_MS - 1);
  await inactive(verifier.verify(BAD, resource));
  assert.equal(as.count('/token/introspection'), 1);
  t.mock.timers.tick(1);
  await inactive(verifier.verify(BAD, resource));
  assert.equal(as.count('/token/introspection'), 2);
  // Two entries: two more bad tokens evict BAD, which is asked about again.
  await inactive(verifier.verify(`${BAD}1`, resource));
  await inactive(verifier.verify(`${BAD}2`, resource));
  await inactive(verifier.verify(BAD, resource));
  assert.equal(as.count('/token/introspection'), 5);
  await inactive(verifier.verify(`${BAD}2`, resource));
  assert.equal(as.count('/token/introspection'), 5);

  const uncached = createBearerVerifier({ issuer: as.issuer, introspection: { clientId: client.clientId, clientSecret: client.clientSecret, cacheMaxMs: 0 } });
  await inactive(uncached.verify(BAD, resource));
  await inactive(uncached.verify(BAD, resource));
  assert.equal(as.count('/token/introspection'), 7);
});
