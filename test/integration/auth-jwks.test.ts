// Signing key rotation at a real authorization server: a token with an unknown kid makes the
// verifier refetch the JWKS, at most once per minute (jose createRemoteJWKSet cooldown).
// The clock (Date) is the one fake: it moves for the authorization server and the verifier alike.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import { createBearerVerifier, JWKS_COOLDOWN_MS } from '../../src/auth/bearer.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { startAuthServer } from '../fixtures/auth-server.js';

test('after rotateKeys a new kid is accepted after one JWKS refetch; a second new kid within a minute is not', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const as = await startAuthServer(t);
  const resource = { uri: 'https://gw.example.com/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  const verifier = createBearerVerifier({ issuer: as.issuer });
  const kidOf = (token: string) => decodeProtectedHeader(token).kid;

  const first = await as.clientCredentialsToken(resource.uri);
  assert.equal((await verifier.verify(first, resource)).subject, 'switchyard');
  assert.equal(as.count('/jwks'), 1);

  // A minute after the first fetch, the key rotates.
  t.mock.timers.tick(JWKS_COOLDOWN_MS + 1_000);
  const oldKid = as.privateJwk.kid;
  await as.rotateKeys();
  const second = await as.clientCredentialsToken(resource.uri);
  assert.notEqual(kidOf(second), oldKid);
  assert.equal((await verifier.verify(second, resource)).subject, 'switchyard');
  assert.equal(as.count('/jwks'), 2);
  // Tokens signed with the old key still verify: it is still published.
  await verifier.verify(first, resource);
  assert.equal(as.count('/jwks'), 2);

  // Another rotation within the minute: the verifier does not ask again, the token is refused.
  t.mock.timers.tick(10_000);
  await as.rotateKeys();
  const third = await as.clientCredentialsToken(resource.uri);
  await assert.rejects(verifier.verify(third, resource), (err: unknown) => {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_AUTH_INVALID_TOKEN');
    assert.equal(err.status, 401);
    assert.deepEqual(err.headers, {
      'WWW-Authenticate': `Bearer resource_metadata="${resource.prmUrl}", error="invalid_token", error_description="unknown signing key"`,
    });
    return true;
  });
  // Junk kids in the same window cost nothing either.
  for (const kid of ['a', 'b', 'c']) {
    const forged = `${Buffer.from(JSON.stringify({ alg: 'RS256', kid })).toString('base64url')}.${third.split('.')[1]}.${third.split('.')[2]}`;
    await assert.rejects(
      verifier.verify(forged, resource),
      (err: unknown) => err instanceof SwitchyardError && err.message === 'Unauthorized: invalid access token: unknown signing key',
    );
  }
  assert.equal(as.count('/jwks'), 2);

  // Once the minute since the last fetch has passed, the next unknown kid refetches once more.
  t.mock.timers.tick(JWKS_COOLDOWN_MS);
  assert.equal((await verifier.verify(third, resource)).subject, 'switchyard');
  assert.equal(as.count('/jwks'), 3);
});

// A trial met an issuer (oidc-provider's development keystore) that regenerates its key under the
// same kid on every restart: jose refetches only for an unknown kid, so every new token was refused
// as `bad signature` until the cached set expired (10 minutes).
test('a key replaced under the same kid is accepted after one JWKS refetch; bad signatures refetch at most once a minute', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const as = await startAuthServer(t);
  const resource = { uri: 'https://gw.example.com/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  const verifier = createBearerVerifier({ issuer: as.issuer });
  const kidOf = (token: string) => decodeProtectedHeader(token).kid;
  const badSignature = (err: unknown) => err instanceof SwitchyardError && err.message === 'Unauthorized: invalid access token: bad signature';

  const first = await as.clientCredentialsToken(resource.uri);
  assert.equal((await verifier.verify(first, resource)).subject, 'switchyard');
  assert.equal(as.count('/jwks'), 1);

  t.mock.timers.tick(JWKS_COOLDOWN_MS + 1_000);
  await as.rotateKeys({ replace: true });
  const second = await as.clientCredentialsToken(resource.uri);
  assert.equal(kidOf(second), kidOf(first));
  assert.equal((await verifier.verify(second, resource)).subject, 'switchyard');
  assert.equal(as.count('/jwks'), 2);
  // The replaced key is gone from the set: a token it signed is refused now, and asks nothing.
  await assert.rejects(verifier.verify(first, resource), badSignature);
  assert.equal(as.count('/jwks'), 2);

  // Within the minute, neither another replacement nor forged signatures make the verifier ask again.
  t.mock.timers.tick(10_000);
  await as.rotateKeys({ replace: true });
  const third = await as.clientCredentialsToken(resource.uri);
  await assert.rejects(verifier.verify(third, resource), badSignature);
  const [head, payload] = third.split('.');
  for (const sig of ['AAAA', 'BBBB']) await assert.rejects(verifier.verify(`${head}.${payload}.${sig}`, resource), badSignature);
  assert.equal(as.count('/jwks'), 2);

  t.mock.timers.tick(JWKS_COOLDOWN_MS);
  assert.equal((await verifier.verify(third, resource)).subject, 'switchyard');
  assert.equal(as.count('/jwks'), 3);
});
