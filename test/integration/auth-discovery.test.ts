// Authorization server metadata discovery (RFC 8414 §3.1 path insertion, then OpenID Connect
// Discovery) against a real authorization server, and what a broken or unreachable issuer
// produces: 503 SWY_ERR_AUTH_ISSUER_UNAVAILABLE with Retry-After, asked again only after it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createBearerVerifier } from '../../src/auth/bearer.js';
import { metadataUrls } from '../../src/auth/discovery.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { listenForTest } from '../helpers/stub-http.js';

const resource = { uri: 'https://gw.example.com/mcp', prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    // `operator`: what the operator reads where it differs (the metadata URLs; a client may read `message`).
    return {
      code: err.code,
      status: err.status,
      message: err.message,
      ...(err.operatorMessage !== undefined ? { operator: err.operatorMessage } : {}),
      headers: err.headers,
    };
  }
  return 'accepted';
}

test('metadataUrls: RFC 8414 path-inserted, then OIDC path-inserted, then OIDC appended (2025-11-25 order)', () => {
  assert.deepEqual(metadataUrls('https://auth.example.com/tenant1'), [
    'https://auth.example.com/.well-known/oauth-authorization-server/tenant1',
    'https://auth.example.com/.well-known/openid-configuration/tenant1',
    'https://auth.example.com/tenant1/.well-known/openid-configuration',
  ]);
  assert.deepEqual(metadataUrls('https://auth.example.com'), [
    'https://auth.example.com/.well-known/oauth-authorization-server',
    'https://auth.example.com/.well-known/openid-configuration',
  ]);
  assert.deepEqual(metadataUrls('https://auth.example.com/'), [
    'https://auth.example.com/.well-known/oauth-authorization-server',
    'https://auth.example.com/.well-known/openid-configuration',
  ]);
});

test('an issuer with a path is found at its RFC 8414 path-inserted URL, once', async (t) => {
  const as = await startAuthServer(t, { issuerPath: '/tenant1' });
  const verifier = createBearerVerifier({ issuer: as.issuer });
  for (let i = 0; i < 3; i++) await verifier.verify(await as.clientCredentialsToken(resource.uri), resource);
  assert.equal(as.count('/.well-known/oauth-authorization-server/tenant1'), 1);
  assert.equal(as.count('/.well-known/openid-configuration/tenant1'), 0);
  assert.equal(as.count('/tenant1/.well-known/openid-configuration'), 0);
  assert.equal(as.count('/tenant1/jwks'), 1);
});

test('concurrent first requests share one metadata fetch and one JWKS fetch', async (t) => {
  const as = await startAuthServer(t);
  const verifier = createBearerVerifier({ issuer: as.issuer });
  const token = await as.clientCredentialsToken(resource.uri);
  const ids = await Promise.all(Array.from({ length: 8 }, () => verifier.verify(token, resource)));
  assert.deepEqual(new Set(ids.map((id) => id.subject)), new Set(['switchyard']));
  assert.equal(as.count('/.well-known/oauth-authorization-server'), 1);
  assert.equal(as.count('/jwks'), 1);
});

test('without RFC 8414 metadata the verifier falls back to OpenID Connect Discovery', async (t) => {
  const as = await startAuthServer(t, { issuerPath: '/tenant1', rfc8414: false });
  const verifier = createBearerVerifier({ issuer: as.issuer });
  const id = await verifier.verify(await as.clientCredentialsToken(resource.uri, 'mcp:read'), resource);
  assert.deepEqual([id.issuer, id.subject, id.scopes], [as.issuer, 'switchyard', ['mcp:read']]);
  assert.equal(as.count('/.well-known/oauth-authorization-server/tenant1'), 1);
  assert.equal(as.count('/.well-known/openid-configuration/tenant1'), 1);
  assert.equal(as.count('/tenant1/.well-known/openid-configuration'), 1);
});

test('metadata naming another issuer is not used (RFC 8414 §3.3)', async (t) => {
  const as = await startAuthServer(t);
  // The configured issuer differs by a trailing slash only: still another identifier.
  const verifier = createBearerVerifier({ issuer: `${as.issuer}/` });
  const token = await as.clientCredentialsToken(resource.uri);
  const url = `${as.issuer}/.well-known/oauth-authorization-server`;
  assert.deepEqual(await refusal(verifier.verify(token, resource)), {
    code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
    status: 503,
    message: 'Authorization server unavailable: metadata names another issuer than the configured one',
    operator: `Authorization server unavailable: metadata ${url} names issuer "${as.issuer}", not the configured one`,
    headers: { 'Retry-After': '10' },
  });
});

/** A real HTTP server that misbehaves as told and counts requests. */
async function brokenIssuer(t: { after(fn: () => Promise<void>): void }, behave: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    behave(req, res);
  });
  return { issuer: await listenForTest(t, server), hits };
}

const JWT = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln';

test('an issuer answering 500 gives 503 with Retry-After and is not asked again within the delay', async (t) => {
  const { issuer, hits } = await brokenIssuer(t, (_req, res) => res.writeHead(500).end());
  const verifier = createBearerVerifier({ issuer });
  const first = await refusal(verifier.verify(JWT, resource));
  assert.deepEqual(first, {
    code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
    status: 503,
    message: 'Authorization server unavailable: metadata answered 500',
    operator: `Authorization server unavailable: metadata ${issuer}/.well-known/oauth-authorization-server answered 500`,
    headers: { 'Retry-After': '10' },
  });
  assert.deepEqual(hits, ['/.well-known/oauth-authorization-server']);
  const second = await refusal(verifier.verify(JWT, resource));
  assert.equal((second as { code: string }).code, 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE');
  assert.match((second as { headers: Record<string, string> }).headers['Retry-After'], /^([1-9]|10)$/);
  assert.equal(hits.length, 1);
});

test('an issuer with no metadata anywhere, one that never answers, and one that answers too much', async (t) => {
  await t.test('404 everywhere', async (tt) => {
    const { issuer, hits } = await brokenIssuer(tt, (_req, res) => res.writeHead(404).end());
    assert.deepEqual(await refusal(createBearerVerifier({ issuer }).verify(JWT, resource)), {
      code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
      status: 503,
      message: 'Authorization server unavailable: metadata not found (2 URLs tried)',
      operator: `Authorization server unavailable: metadata not found (${issuer}/.well-known/oauth-authorization-server 404, ${issuer}/.well-known/openid-configuration 404)`,
      headers: { 'Retry-After': '10' },
    });
    assert.deepEqual(hits, ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
  });
  await t.test('no answer within timeoutMs', async (tt) => {
    const { issuer } = await brokenIssuer(tt, () => undefined);
    assert.deepEqual(await refusal(createBearerVerifier({ issuer, timeoutMs: 100 }).verify(JWT, resource)), {
      code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
      status: 503,
      message: 'Authorization server unavailable: metadata: timed out after 100 ms',
      operator: `Authorization server unavailable: metadata ${issuer}/.well-known/oauth-authorization-server: timed out after 100 ms`,
      headers: { 'Retry-After': '10' },
    });
  });
  await t.test('an answer over 1 MiB', async (tt) => {
    const { issuer } = await brokenIssuer(tt, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"issuer":"x","pad":"${'a'.repeat(1_048_576)}"}`);
    });
    assert.deepEqual(await refusal(createBearerVerifier({ issuer }).verify(JWT, resource)), {
      code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
      status: 503,
      message: 'Authorization server unavailable: metadata: answer larger than 1048576 bytes',
      operator: `Authorization server unavailable: metadata ${issuer}/.well-known/oauth-authorization-server: answer larger than 1048576 bytes`,
      headers: { 'Retry-After': '10' },
    });
  });
  await t.test('the same over a chunked answer (no Content-Length)', async (tt) => {
    const { issuer } = await brokenIssuer(tt, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 20; i++) res.write('a'.repeat(65_536));
      res.end();
    });
    assert.equal(
      ((await refusal(createBearerVerifier({ issuer }).verify(JWT, resource))) as { operator: string }).operator,
      `Authorization server unavailable: metadata ${issuer}/.well-known/oauth-authorization-server: answer larger than 1048576 bytes`,
    );
  });
});

test('a JWKS endpoint that fails gives 503 and is not asked again within the delay', async (t) => {
  let jwksHits = 0;
  const { issuer } = await brokenIssuer(t, (req, res) => {
    if (req.url === '/.well-known/oauth-authorization-server') {
      const origin = `http://${req.headers.host}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks` }));
    } else {
      jwksHits++;
      res.writeHead(502).end();
    }
  });
  const verifier = createBearerVerifier({ issuer });
  assert.deepEqual(await refusal(verifier.verify(JWT, resource)), {
    code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
    status: 503,
    message: 'Authorization server unavailable: JWKS answered 502',
    headers: { 'Retry-After': '10' },
  });
  assert.equal(((await refusal(verifier.verify(JWT, resource))) as { code: string }).code, 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE');
  assert.equal(jwksHits, 1);
});

test('an introspection endpoint that fails gives 503 with Retry-After; a 401 from it (wrong client secret) too', async (t) => {
  const { issuer, hits } = await brokenIssuer(t, (req, res) => {
    const origin = `http://${req.headers.host}`;
    if (req.url === '/.well-known/oauth-authorization-server')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: origin, introspection_endpoint: `${origin}/introspect` }));
    else if (req.headers.authorization === `Basic ${Buffer.from('rs:right').toString('base64')}`) res.writeHead(500).end();
    else res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
  });
  for (const [secret, status] of [
    ['right', 500],
    ['wrong', 401],
  ] as const) {
    const verifier = createBearerVerifier({ issuer, introspection: { clientId: 'rs', clientSecret: secret } });
    assert.deepEqual(await refusal(verifier.verify('opaque-token', resource)), {
      code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
      status: 503,
      message: `Authorization server unavailable: introspection answered ${status}`,
      headers: { 'Retry-After': '10' },
    });
  }
  assert.deepEqual(hits, ['/.well-known/oauth-authorization-server', '/introspect', '/.well-known/oauth-authorization-server', '/introspect']);
});
