// Bearer tokens against a real authorization server (oidc-provider): what is accepted, what is
// refused with which status, code and WWW-Authenticate, through a real protected resource on
// 127.0.0.1 built from src/auth.
// Rules: RFC 6750 §3 / §3.1, RFC 9068 §4, RFC 8707, RFC 8725 §3.1, RFC 9728 §5.1;
// 2025-11-25 basic/authorization (token audience validation, scope challenges).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { startAuthFront } from '../helpers/auth-front.js';
import { forge, getWith, unsigned, userToken } from '../helpers/oauth.js';

const API_KEY = 'sy_live_4f0a9c2e7b1d4e6f8a3b5c7d9e1f2a4b';
const rpcError = (message: string) => ({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });

test('JWT access tokens from a real authorization server: accepted and refused cases', async (t) => {
  const as = await startAuthServer(t);
  const front = await startAuthFront(t, {
    bearer: { issuer: as.issuer, scopes: ['mcp:read'], claims: ['client_id', 'jti'] },
    apiKeys: [
      { name: 'ci', sha256: hashApiKey(API_KEY), scopes: ['mcp:read'] },
      { name: 'readonly-less', sha256: hashApiKey(`${API_KEY}-2`) },
    ],
  });
  const challenge = (extra = '') => `Bearer resource_metadata="${front.prmUrl}"${extra}`;
  const invalid = (why: string) => ({
    status: 401,
    wwwAuthenticate: challenge(`, error="invalid_token", error_description="${why}"`),
    retryAfter: undefined,
    body: rpcError(`Unauthorized: invalid access token: ${why}`),
  });
  const now = () => Math.floor(Date.now() / 1000);
  const claims = (over: Record<string, unknown> = {}) => ({
    iss: as.issuer,
    sub: 'mallory',
    aud: front.resource,
    client_id: 'mcp-client',
    scope: 'mcp:read',
    iat: now(),
    exp: now() + 300,
    jti: 'j1',
    ...over,
  });

  await t.test('the protected resource metadata names the authorization server', async () => {
    assert.deepEqual(await getWith(front.prmUrl), {
      status: 200,
      wwwAuthenticate: undefined,
      retryAfter: undefined,
      body: { resource: front.resource, authorization_servers: [as.issuer], scopes_supported: ['mcp:read'], bearer_methods_supported: ['header'] },
    });
  });

  await t.test('no credential: 401, challenge with resource_metadata and the needed scopes, no error code', async () => {
    assert.deepEqual(await getWith(front.resource), {
      status: 401,
      wwwAuthenticate: challenge(', scope="mcp:read"'),
      retryAfter: undefined,
      body: rpcError('Unauthorized: an access token is required'),
    });
    // RFC 6750 §3.1: another scheme is a missing credential, not an error.
    assert.equal((await getWith(front.resource, 'Basic c3dpdGNoeWFyZDpzZWNyZXQ=')).wwwAuthenticate, challenge(', scope="mcp:read"'));
  });

  await t.test('a client credentials token for this resource yields its identity', async () => {
    const token = await as.clientCredentialsToken(front.resource, 'mcp:read mcp:write');
    const { exp, jti } = decodeJwt(token);
    assert.deepEqual(await getWith(front.resource, `Bearer ${token}`), {
      status: 200,
      wwwAuthenticate: undefined,
      retryAfter: undefined,
      body: {
        identity: {
          issuer: as.issuer,
          subject: 'switchyard',
          clientId: 'switchyard',
          scopes: ['mcp:read', 'mcp:write'],
          claims: { client_id: 'switchyard', jti },
          source: 'jwt',
          expiresAtMs: exp! * 1000,
        },
      },
    });
  });

  await t.test('a user token from the authorization code flow with PKCE yields the user', async () => {
    const token = await userToken(as, front.resource, 'mcp:read');
    const res = await getWith(front.resource, `Bearer ${token}`);
    assert.equal(res.status, 200);
    const id = (res.body as { identity: Record<string, unknown> }).identity;
    assert.deepEqual([id.subject, id.clientId, id.scopes, id.source], ['alice', 'mcp-client', ['mcp:read'], 'jwt']);
  });

  await t.test('a token for another audience (an upstream) is refused', async () => {
    const token = await as.clientCredentialsToken('https://upstream.example.com/mcp', 'mcp:read');
    assert.deepEqual(await getWith(front.resource, `Bearer ${token}`), invalid('audience mismatch'));
  });

  await t.test('the audience is compared with scheme and host case-insensitively', async () => {
    const token = await forge(as.privateJwk, claims({ aud: front.resource.replace('http://127.0.0.1', 'HTTP://127.0.0.1') }));
    assert.equal((await getWith(front.resource, `Bearer ${token}`)).status, 200);
  });

  await t.test('a token from another issuer is refused: its key is unknown, and a forged iss does not match', async (tt) => {
    const other = await startAuthServer(tt);
    const token = await other.clientCredentialsToken(front.resource, 'mcp:read');
    assert.deepEqual(await getWith(front.resource, `Bearer ${token}`), invalid('unknown signing key'));
    const forged = await forge(as.privateJwk, claims({ iss: other.issuer }));
    assert.deepEqual(await getWith(front.resource, `Bearer ${forged}`), invalid('issuer mismatch'));
  });

  await t.test('expired beyond the 60 s clock tolerance is refused; within it is accepted', async () => {
    const expired = await forge(as.privateJwk, claims({ iat: now() - 600, exp: now() - 120 }));
    assert.deepEqual(await getWith(front.resource, `Bearer ${expired}`), invalid('expired'));
    const skewed = await forge(as.privateJwk, claims({ iat: now() - 600, exp: now() - 30 }));
    assert.equal((await getWith(front.resource, `Bearer ${skewed}`)).status, 200);
    const early = await forge(as.privateJwk, claims({ nbf: now() + 600 }));
    assert.deepEqual(await getWith(front.resource, `Bearer ${early}`), invalid('not yet valid'));
  });

  await t.test('alg none is refused before any key lookup', async () => {
    const jwksBefore = as.count('/jwks');
    assert.deepEqual(await getWith(front.resource, `Bearer ${unsigned(claims(), as.privateJwk.kid)}`), invalid('signing algorithm not accepted'));
    assert.equal(as.count('/jwks'), jwksBefore);
  });

  await t.test("HS256 signed with the public key's bytes (key confusion) is refused", async () => {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = as.privateJwk;
    const pem = createPublicKey({ key: pub as JsonWebKey, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    for (const secret of [pem, JSON.stringify(pub)]) {
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: as.privateJwk.kid, typ: 'at+jwt' })
        .sign(new TextEncoder().encode(secret));
      assert.deepEqual(await getWith(front.resource, `Bearer ${token}`), invalid('signing algorithm not accepted'));
    }
  });

  await t.test('a tampered payload fails the signature', async () => {
    const token = await as.clientCredentialsToken(front.resource, 'mcp:read');
    const [h, , s] = token.split('.');
    const evil = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: 'admin' })).toString('base64url');
    assert.deepEqual(await getWith(front.resource, `Bearer ${h}.${evil}.${s}`), invalid('bad signature'));
  });

  await t.test('a sender-constrained token (cnf) is refused: no proof of possession is checked', async () => {
    const token = await forge(as.privateJwk, claims({ cnf: { jkt: 'x' } }));
    assert.deepEqual(await getWith(front.resource, `Bearer ${token}`), invalid('sender-constrained tokens are not accepted'));
  });

  await t.test('a valid token without a required scope is 403 insufficient_scope naming the whole set', async () => {
    const token = await as.clientCredentialsToken(front.resource, 'mcp:write');
    assert.deepEqual(await getWith(front.resource, `Bearer ${token}`), {
      status: 403,
      wwwAuthenticate: challenge(', error="insufficient_scope", scope="mcp:read"'),
      retryAfter: undefined,
      body: rpcError('Forbidden: the access token lacks a required scope: missing mcp:read'),
    });
  });

  await t.test('an API key is accepted; a wrong one and one lacking the scope are refused', async () => {
    assert.deepEqual(await getWith(front.resource, `Bearer ${API_KEY}`), {
      status: 200,
      wwwAuthenticate: undefined,
      retryAfter: undefined,
      body: { identity: { issuer: 'switchyard:api-key', subject: 'ci', scopes: ['mcp:read'], claims: {}, source: 'api-key' } },
    });
    assert.deepEqual(await getWith(front.resource, `Bearer ${API_KEY}x`), invalid('unknown API key'));
    assert.deepEqual(await getWith(front.resource, `Bearer ${API_KEY}-2`), {
      status: 403,
      wwwAuthenticate: challenge(', error="insufficient_scope", scope="mcp:read"'),
      retryAfter: undefined,
      body: rpcError('Forbidden: the access token lacks a required scope: missing mcp:read'),
    });
  });

  await t.test('malformed credentials are 400 invalid_request: two Authorization fields, two tokens, an overlong token', async () => {
    const token = await as.clientCredentialsToken(front.resource, 'mcp:read');
    const bad = (why: string) => ({
      status: 400,
      wwwAuthenticate: challenge(`, error="invalid_request", error_description="${why}"`),
      retryAfter: undefined,
      body: rpcError(`Bad Request: malformed Authorization header: ${why}`),
    });
    assert.deepEqual(await getWith(front.resource, `Bearer ${token}`, `Bearer ${token}`), bad('the Bearer credential is not exactly one b64token'));
    assert.deepEqual(await getWith(front.resource, `Bearer ${token} ${token}`), bad('the Bearer credential is not exactly one b64token'));
    assert.deepEqual(await getWith(front.resource, 'Bearer'), bad('the Bearer credential is empty'));
    assert.deepEqual(await getWith(front.resource, `Bearer ${'a'.repeat(16_385)}`), {
      status: 400,
      wwwAuthenticate: challenge(', error="invalid_request", error_description="more than 16384 characters"'),
      retryAfter: undefined,
      body: rpcError('Bad Request: bearer token longer than the limit: more than 16384 characters'),
    });
  });

  await t.test('the metadata and the JWKS were fetched once each; no token or secret reached the log', async () => {
    assert.equal(as.count('/.well-known/oauth-authorization-server'), 1);
    assert.equal(as.count('/.well-known/openid-configuration'), 0);
    assert.equal(as.count('/jwks'), 1);
    const text = JSON.stringify(front.records);
    assert.ok(!text.includes(API_KEY));
    assert.ok(!/eyJ[A-Za-z0-9_-]{10,}\./.test(text), 'a JWT appears in the log');
    const refusals = front.records.filter((r) => r.msg === 'authentication refused');
    assert.ok(refusals.length >= 10);
    for (const r of refusals)
      assert.deepEqual(
        Object.keys(r).sort(),
        ['code', 'component', 'level', 'msg', 'pid', 'hostname', 'reason', 'resource', 'status', 'time', ...('tokenSha256' in r ? ['tokenSha256'] : [])].sort(),
      );
  });
});

// The clock (Date) is the one fake: a remembered token still expires on time.
test('a verified JWT is remembered per resource and still expires on time (exp plus skew)', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const { createBearerVerifier, VERIFIED_JWT_TTL_MS } = await import('../../src/auth/bearer.js');
  const as = await startAuthServer(t, { accessTokenTtlSec: 300 });
  const a = { uri: 'https://gw.example.com/a/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/a/mcp' };
  const b = { uri: 'https://gw.example.com/b/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/b/mcp' };
  const verifier = createBearerVerifier({ issuer: as.issuer, clockToleranceSec: 60 });
  const token = await as.clientCredentialsToken(a.uri);
  assert.equal((await verifier.verify(token, a)).subject, 'switchyard');
  // The same token for another mount is checked again, not served from the cache.
  await assert.rejects(verifier.verify(token, b), { message: 'Unauthorized: invalid access token: audience mismatch' });
  t.mock.timers.tick(VERIFIED_JWT_TTL_MS - 1_000);
  assert.equal((await verifier.verify(token, a)).subject, 'switchyard');
  // 300 s lifetime + 60 s skew: still good at 359 s, expired at 361 s, cache or not.
  t.mock.timers.tick(359_000 - (VERIFIED_JWT_TTL_MS - 1_000));
  assert.equal((await verifier.verify(token, a)).subject, 'switchyard');
  t.mock.timers.tick(2_000);
  await assert.rejects(verifier.verify(token, a), { message: 'Unauthorized: invalid access token: expired' });
});
