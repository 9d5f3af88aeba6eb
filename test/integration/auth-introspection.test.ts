// Opaque access tokens through RFC 7662 introspection at a real authorization server: accepted,
// cached by the token's SHA-256 until exp, refused when inactive or meant for another resource.

import { test } from 'node:test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { createBearerVerifier } from '../../src/auth/bearer.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { startAuthFront } from '../helpers/auth-front.js';
import { getWith } from '../helpers/oauth.js';

test('opaque tokens are introspected, cached until exp, and refused when inactive or for another audience', async (t) => {
  // The front's resource URI is known only once it listens; the AS issues opaque tokens for any /mcp on 127.0.0.1.
  const as = await startAuthServer(t, { opaqueResources: [] });
  const front = await startAuthFront(t, {
    bearer: {
      issuer: as.issuer,
      scopes: ['mcp:read'],
      claims: ['token_type'],
      introspection: { clientId: as.confidentialClient.clientId, clientSecret: as.confidentialClient.clientSecret },
    },
  });
  const opaqueAs = await startAuthServer(t, { opaqueResources: [front.resource, 'https://other.example.com/mcp'] });
  const verifier = createBearerVerifier({
    issuer: opaqueAs.issuer,
    scopes: ['mcp:read'],
    claims: ['token_type'],
    introspection: { clientId: opaqueAs.confidentialClient.clientId, clientSecret: opaqueAs.confidentialClient.clientSecret, cacheMaxEntries: 2 },
  });
  const resource = { uri: front.resource, prmUrl: front.prmUrl };
  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      return { code: err.code, status: err.status, message: err.message, headers: err.headers };
    }
    return 'accepted';
  };

  const token = await opaqueAs.clientCredentialsToken(front.resource, 'mcp:read mcp:write');
  assert.doesNotMatch(token, /\./, 'the token is opaque');
  const id = await verifier.verify(token, resource);
  assert.deepEqual(
    { ...id, expiresAtMs: typeof id.expiresAtMs },
    {
      issuer: opaqueAs.issuer,
      subject: 'switchyard',
      clientId: 'switchyard',
      scopes: ['mcp:read', 'mcp:write'],
      claims: { token_type: 'Bearer' },
      source: 'introspection',
      expiresAtMs: 'number',
    },
  );
  assert.equal(opaqueAs.count('/token/introspection'), 1);
  // The discovery document named the endpoint; the second verification comes from the cache.
  assert.deepEqual(await verifier.verify(token, resource), id);
  assert.equal(opaqueAs.count('/token/introspection'), 1);

  await t.test('a cached result is still checked against the resource it is presented to', async () => {
    assert.deepEqual(
      await refusal(
        verifier.verify(token, { uri: 'https://other.example.com/mcp', prmUrl: 'https://other.example.com/.well-known/oauth-protected-resource/mcp' }),
      ),
      {
        code: 'SWY_ERR_AUTH_INVALID_TOKEN',
        status: 401,
        message: 'Unauthorized: invalid access token: audience mismatch',
        headers: {
          'WWW-Authenticate':
            'Bearer resource_metadata="https://other.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="audience mismatch"',
        },
      },
    );
    assert.equal(opaqueAs.count('/token/introspection'), 1);
  });

  await t.test('an unknown opaque token is inactive', async () => {
    assert.deepEqual(await refusal(verifier.verify('not-issued-by-anyone-0123456789', resource)), {
      code: 'SWY_ERR_AUTH_INVALID_TOKEN',
      status: 401,
      message: 'Unauthorized: invalid access token: inactive',
      headers: { 'WWW-Authenticate': `Bearer resource_metadata="${front.prmUrl}", error="invalid_token", error_description="inactive"` },
    });
    assert.equal(opaqueAs.count('/token/introspection'), 2);
  });

  await t.test('an opaque token for another resource is refused', async () => {
    const other = await opaqueAs.clientCredentialsToken('https://other.example.com/mcp', 'mcp:read');
    assert.equal(((await refusal(verifier.verify(other, resource))) as { message: string }).message, 'Unauthorized: invalid access token: audience mismatch');
  });

  await t.test('insufficient scope after introspection is 403 with the full set', async () => {
    const narrow = await opaqueAs.clientCredentialsToken(front.resource, 'mcp:write');
    assert.deepEqual(await refusal(verifier.verify(narrow, resource)), {
      code: 'SWY_ERR_AUTH_INSUFFICIENT_SCOPE',
      status: 403,
      message: 'Forbidden: the access token lacks a required scope: missing mcp:read',
      headers: { 'WWW-Authenticate': `Bearer resource_metadata="${front.prmUrl}", error="insufficient_scope", scope="mcp:read"` },
    });
  });

  await t.test('the cache holds at most cacheMaxEntries: a third token evicts the least recently used', async () => {
    const before = opaqueAs.count('/token/introspection');
    const a = await opaqueAs.clientCredentialsToken(front.resource, 'mcp:read');
    const b = await opaqueAs.clientCredentialsToken(front.resource, 'mcp:read');
    await verifier.verify(a, resource);
    await verifier.verify(b, resource);
    assert.equal(opaqueAs.count('/token/introspection'), before + 2);
    // `token` was used before a and b: with two entries it is gone and introspected again.
    await verifier.verify(token, resource);
    assert.equal(opaqueAs.count('/token/introspection'), before + 3);
    await verifier.verify(b, resource);
    assert.equal(opaqueAs.count('/token/introspection'), before + 3);
  });

  await t.test('without introspection an opaque token is refused at once through the front door', async () => {
    const opaque = await opaqueAs.clientCredentialsToken(front.resource, 'mcp:read');
    // `front` introspects at `as`, which never issued this token.
    assert.deepEqual(await getWith(front.resource, `Bearer ${opaque}`), {
      status: 401,
      wwwAuthenticate: `Bearer resource_metadata="${front.prmUrl}", error="invalid_token", error_description="inactive"`,
      retryAfter: undefined,
      body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Unauthorized: invalid access token: inactive' } },
    });
    const strict = createBearerVerifier({ issuer: opaqueAs.issuer });
    assert.equal(
      ((await refusal(strict.verify(opaque, resource))) as { message: string }).message,
      'Unauthorized: invalid access token: not a JWT and introspection is off',
    );
  });
});

test('a cached introspection result lasts until the token expires when cacheMaxMs is longer, then the server is asked again', async (t) => {
  // The clock is the machine edge: Date moves, the authorization server and the verifier both see it.
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const resource = { uri: 'https://gw.example.com/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  const as = await startAuthServer(t, { opaqueResources: [resource.uri], accessTokenTtlSec: 120 });
  const verifier = createBearerVerifier({
    issuer: as.issuer,
    clockToleranceSec: 0,
    introspection: { clientId: as.confidentialClient.clientId, clientSecret: as.confidentialClient.clientSecret, cacheMaxMs: 300_000 },
  });
  const token = await as.clientCredentialsToken(resource.uri, 'mcp:read');
  await verifier.verify(token, resource);
  assert.equal(as.count('/token/introspection'), 1);
  t.mock.timers.tick(119_000);
  await verifier.verify(token, resource);
  assert.equal(as.count('/token/introspection'), 1);
  t.mock.timers.tick(2_000);
  await assert.rejects(
    verifier.verify(token, resource),
    (err: unknown) => err instanceof SwitchyardError && err.message === 'Unauthorized: invalid access token: inactive',
  );
  assert.equal(as.count('/token/introspection'), 2);
});

test('a token revoked at the authorization server is refused once the cached result is older than cacheMaxMs (default 60 s; RFC 7662 §4, RFC 7009)', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const resource = { uri: 'https://gw.example.com/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  const as = await startAuthServer(t, { opaqueResources: [resource.uri], accessTokenTtlSec: 3600 });
  const client = as.confidentialClient;
  const verifier = createBearerVerifier({ issuer: as.issuer, introspection: { clientId: client.clientId, clientSecret: client.clientSecret } });
  const token = await as.clientCredentialsToken(resource.uri, 'mcp:read');
  await verifier.verify(token, resource);
  // RFC 7009 revocation at the real authorization server, authenticated as the client that got the token.
  const revoked = await fetch(`${as.issuer}/token/revocation`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
  });
  assert.equal(revoked.status, 200);
  t.mock.timers.tick(59_000);
  await verifier.verify(token, resource);
  assert.equal(as.count('/token/introspection'), 1, 'still the cached result within cacheMaxMs');
  t.mock.timers.tick(2_000);
  await assert.rejects(
    verifier.verify(token, resource),
    (err: unknown) => err instanceof SwitchyardError && err.message === 'Unauthorized: invalid access token: inactive',
  );
  assert.equal(as.count('/token/introspection'), 2);

  // cacheMaxMs 0: every request asks the authorization server.
  const uncached = createBearerVerifier({ issuer: as.issuer, introspection: { clientId: client.clientId, clientSecret: client.clientSecret, cacheMaxMs: 0 } });
  const fresh = await as.clientCredentialsToken(resource.uri, 'mcp:read');
  await uncached.verify(fresh, resource);
  await uncached.verify(fresh, resource);
  assert.equal(as.count('/token/introspection'), 4);
});

// Found in review (2026-12-05): an active introspection answer was accepted whatever its
// `token_type`, so a token the authorization server says is not a bearer access token (RFC 7662
// §2.2 token_type; e.g. `N_A` for a non-access token, RFC 8693 §2.2.1) passed as one. Such an
// answer is now refused; one without `token_type` (as oidc-provider and others send) or with
// `Bearer` in any case (RFC 6750 §1.1, RFC 9110 §11.1: the scheme is case-insensitive) passes.
test('an active introspection answer whose token_type is not Bearer is refused', async (t) => {
  const resource = { uri: 'http://127.0.0.1:1/mcp', prmUrl: 'http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp' };
  let tokenType: string | undefined;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ active: true, sub: 'alice', aud: resource.uri, exp: Math.floor(Date.now() / 1000) + 60, scope: 'mcp:read', token_type: tokenType }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`;
  const outcome = async (type: string | undefined) => {
    tokenType = type;
    // cacheMaxMs 0: every verification asks the server.
    const verifier = createBearerVerifier({ issuer: 'http://127.0.0.1:1', introspection: { clientId: 'rs', clientSecret: 's', endpoint, cacheMaxMs: 0 } });
    try {
      return (await verifier.verify('opaque-token-0123456789', resource)).subject;
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      return err.message;
    }
  };
  assert.equal(await outcome(undefined), 'alice');
  assert.equal(await outcome('Bearer'), 'alice');
  assert.equal(await outcome('bearer'), 'alice');
  assert.equal(await outcome('N_A'), 'Unauthorized: invalid access token: not a bearer access token');
  assert.equal(await outcome('refresh_token'), 'Unauthorized: invalid access token: not a bearer access token');
});

const RESOURCE = { uri: 'http://127.0.0.1:1/mcp', prmUrl: 'http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp' };
const ISSUER = 'http://127.0.0.1:1';

/**
 * An introspection endpoint on 127.0.0.1 that calls every token active for {@link RESOURCE}
 * (`sub` alice, `exp` in 10 minutes) with `fields` merged in, and a verifier for {@link ISSUER}
 * with `clockToleranceSec` that asks it every time (`cacheMaxMs` 0). Resolves with the subject of
 * an opaque token, or the SwitchyardError it was refused with.
 */
async function activeAnswer(t: { after(fn: () => Promise<void>): void }, clockToleranceSec?: number) {
  let extra: Record<string, unknown> = {};
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      const base = { active: true, sub: 'alice', aud: RESOURCE.uri, exp: Math.floor(Date.now() / 1000) + 600, scope: 'mcp:read' };
      res.end(JSON.stringify({ ...base, ...extra }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`;
  return async (fields: Record<string, unknown>): Promise<string | SwitchyardError> => {
    extra = fields;
    const verifier = createBearerVerifier({ issuer: ISSUER, clockToleranceSec, introspection: { clientId: 'rs', clientSecret: 's', endpoint, cacheMaxMs: 0 } });
    try {
      return (await verifier.verify('opaque-token-0123456789', RESOURCE)).subject;
    } catch (err) {
      assert.ok(err instanceof SwitchyardError);
      return err;
    }
  };
}

// Found by h-mutants: dropping the introspection answer's `iss`, `nbf` or `cnf` check, or its
// `exp` check, left every test green. An active answer is still a token this resource must refuse
// when the server names another issuer, a start in the future, a sender constraint, or an expiry
// in the past (RFC 7662 §2.2; RFC 9449 §7.1, RFC 8705 §3), each beyond the clock tolerance.
test('an active introspection answer is refused for another iss, a future nbf, an exp in the past or a cnf, and accepted within the skew', async (t) => {
  const answer = await activeAnswer(t, 30);
  const outcome = async (fields: Record<string, unknown>) => {
    const got = await answer(fields);
    return typeof got === 'string' ? got : got.message;
  };
  const now = Math.floor(Date.now() / 1000);
  assert.equal(await outcome({}), 'alice');
  assert.equal(await outcome({ iss: ISSUER }), 'alice');
  assert.equal(await outcome({ iss: 'https://evil.example' }), 'Unauthorized: invalid access token: issuer mismatch');
  assert.equal(await outcome({ iss: `${ISSUER}/` }), 'Unauthorized: invalid access token: issuer mismatch');
  assert.equal(await outcome({ nbf: now + 3600 }), 'Unauthorized: invalid access token: not yet valid');
  assert.equal(await outcome({ nbf: now + 10 }), 'alice', 'within the 30 s tolerance');
  assert.equal(await outcome({ exp: now - 3600 }), 'Unauthorized: invalid access token: expired');
  assert.equal(await outcome({ exp: now - 10 }), 'alice', 'within the 30 s tolerance');
  assert.equal(await outcome({ cnf: { jkt: 'x' } }), 'Unauthorized: invalid access token: sender-constrained tokens are not accepted');
  assert.equal(await outcome({ sub: undefined, client_id: 'svc' }), 'svc', 'a client-credentials answer names its client');
  assert.equal(await outcome({ sub: '' }), 'Unauthorized: invalid access token: no subject');
});

// Found in review (2026-12-06): an introspection answer whose `exp` or `nbf` is not a number was
// read as having none: a string nbf let a token in before its start, a string exp made it never
// expire. RFC 7662 §2.2 makes them (and iat) integer timestamps; such an answer is now refused
// "<claim> claim invalid", as the JWT path refuses a non-numeric NumericDate (RFC 7519 §4.1.4-6).
test('an active introspection answer whose exp, nbf or iat is not a number is refused "<claim> claim invalid"', async (t) => {
  const answer = await activeAnswer(t);
  const outcome = async (fields: Record<string, unknown>) => {
    const got = await answer(fields);
    return typeof got === 'string' ? got : { code: got.code, status: got.status, message: got.message, headers: got.headers };
  };
  const invalid = (why: string) => ({
    code: 'SWY_ERR_AUTH_INVALID_TOKEN',
    status: 401,
    message: `Unauthorized: invalid access token: ${why}`,
    headers: { 'WWW-Authenticate': `Bearer resource_metadata="${RESOURCE.prmUrl}", error="invalid_token", error_description="${why}"` },
  });
  const now = Math.floor(Date.now() / 1000);
  assert.deepEqual(await outcome({ exp: String(now + 600) }), invalid('exp claim invalid'));
  assert.deepEqual(await outcome({ exp: String(now - 3600) }), invalid('exp claim invalid'));
  assert.deepEqual(await outcome({ exp: null }), invalid('exp claim invalid'));
  assert.deepEqual(await outcome({ nbf: String(now + 3600) }), invalid('nbf claim invalid'));
  assert.deepEqual(await outcome({ nbf: '0' }), invalid('nbf claim invalid'));
  assert.deepEqual(await outcome({ iat: String(now) }), invalid('iat claim invalid'));
  // Numbers still pass, and an absent exp or nbf is still no bound.
  assert.equal(await outcome({ nbf: now - 10, iat: now - 10 }), 'alice');
  assert.equal(await outcome({ exp: undefined }), 'alice');
});
