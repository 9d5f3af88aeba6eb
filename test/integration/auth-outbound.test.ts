// Outbound credentials against a real authorization server: static headers, client credentials
// (cached until 30 s before expiry, refetched once after invalidate), and RFC 8693 token
// exchange (the client's token in, a token for the upstream's audience out).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { createBearerVerifier } from '../../src/auth/bearer.js';
import { createTokenSource } from '../../src/auth/outbound.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { userToken } from '../helpers/oauth.js';
import { recordingLogger } from '../helpers/gateway.js';

const GATEWAY = 'https://gw.example.com/mcp';
const UPSTREAM = 'https://upstream.example.com/mcp';
const upstreamRef = { uri: UPSTREAM, prmUrl: 'https://upstream.example.com/.well-known/oauth-protected-resource/mcp' };

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return { code: err.code, status: err.status, message: err.message, data: err.data };
  }
  return 'accepted';
}

const bearerOf = (h: Record<string, string>) => {
  assert.deepEqual(Object.keys(h), ['Authorization']);
  assert.match(h.Authorization, /^Bearer [A-Za-z0-9_.-]+$/);
  return h.Authorization.slice('Bearer '.length);
};

test('static headers are returned as configured, a fresh copy each time', async () => {
  const src = createTokenSource({ headers: { 'X-Api-Key': 'upstream-key', Authorization: 'Bearer static-token' } });
  const a = await src.headers({ token: 'client-token' });
  assert.deepEqual(a, { 'X-Api-Key': 'upstream-key', Authorization: 'Bearer static-token' });
  a['X-Api-Key'] = 'changed';
  assert.deepEqual(await src.headers({}), { 'X-Api-Key': 'upstream-key', Authorization: 'Bearer static-token' });
});

test('client credentials: a token for the upstream audience, cached until 30 s before expiry, refetched once after invalidate', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const as = await startAuthServer(t, { accessTokenTtlSec: 300 });
  const src = createTokenSource({
    clientCredentials: {
      issuer: as.issuer,
      clientId: as.confidentialClient.clientId,
      clientSecret: as.confidentialClient.clientSecret,
      scope: 'mcp:read',
      resource: UPSTREAM,
    },
  });
  const first = bearerOf(await src.headers({ token: 'the-client-token-is-ignored' }));
  assert.equal(as.count('/token'), 1);
  // The upstream would accept it: its audience is the upstream, its subject the gateway's client.
  const id = await createBearerVerifier({ issuer: as.issuer }).verify(first, upstreamRef);
  assert.deepEqual([id.subject, id.clientId, id.scopes], ['switchyard', 'switchyard', ['mcp:read']]);
  assert.equal(decodeJwt(first).aud, UPSTREAM);

  assert.equal(bearerOf(await src.headers({})), first);
  t.mock.timers.tick(269_000);
  assert.equal(bearerOf(await src.headers({})), first);
  assert.equal(as.count('/token'), 1);
  // 270 s into a 300 s lifetime the 30 s margin is reached.
  t.mock.timers.tick(1_000);
  const second = bearerOf(await src.headers({}));
  assert.notEqual(second, first);
  assert.equal(as.count('/token'), 2);

  // After an upstream 401: invalidate, and concurrent callers share the one refetch.
  src.invalidate();
  const [a, b, c] = await Promise.all([src.headers({}), src.headers({}), src.headers({})]);
  assert.equal(as.count('/token'), 3);
  assert.equal(bearerOf(a), bearerOf(b));
  assert.equal(bearerOf(b), bearerOf(c));
  assert.notEqual(bearerOf(a), second);
  assert.equal(bearerOf(await src.headers({})), bearerOf(a));
  assert.equal(as.count('/token'), 3);
});

test('client credentials: client_secret_post works; a refused client and an unreachable token endpoint are SWY_ERR_AUTH_UPSTREAM_TOKEN', async (t) => {
  const as = await startAuthServer(t);
  const wrong = createTokenSource({
    clientCredentials: { tokenUrl: `${as.issuer}/token`, clientId: as.confidentialClient.clientId, clientSecret: 'wrong-secret' },
  });
  assert.deepEqual(await refusal(wrong.headers({})), {
    code: 'SWY_ERR_AUTH_UPSTREAM_TOKEN',
    status: 502,
    message: 'Cannot obtain a credential for the upstream: token endpoint (client_credentials) answered 401 invalid_client',
    data: { error: 'invalid_client' },
  });
  // RFC 6749 §2.3.1 credentials in the body instead of Basic: the same token, from the same server.
  const post = createTokenSource({
    clientCredentials: {
      tokenUrl: `${as.issuer}/token`,
      clientId: as.confidentialClient.clientId,
      clientSecret: as.confidentialClient.clientSecret,
      authMethod: 'client_secret_post',
      resource: UPSTREAM,
    },
  });
  const viaPost = bearerOf(await post.headers({}));
  assert.equal(decodeJwt(viaPost).client_id, as.confidentialClient.clientId);
  const gone = createTokenSource({ clientCredentials: { tokenUrl: 'http://127.0.0.1:1/token', clientId: 'c', clientSecret: 's' } });
  assert.deepEqual(await refusal(gone.headers({})), {
    code: 'SWY_ERR_AUTH_UPSTREAM_TOKEN',
    status: 502,
    message: 'Cannot obtain a credential for the upstream: token endpoint (client_credentials): connection failed',
    data: undefined,
  });
});

test('the token endpoint is logged by its origin only: a secret in its path or query stays out of the log (RFC 6750 §5.3)', async (t) => {
  const as = await startAuthServer(t);
  const records: Array<Record<string, unknown>> = [];
  const log = recordingLogger(records);
  const secretQuery = '?tenant_key=s3cr3t-query';
  const ok = createTokenSource(
    {
      clientCredentials: {
        tokenUrl: `${as.issuer}/token${secretQuery}`,
        clientId: as.confidentialClient.clientId,
        clientSecret: as.confidentialClient.clientSecret,
        resource: UPSTREAM,
      },
    },
    { log },
  );
  bearerOf(await ok.headers({}));
  const refused = createTokenSource(
    { clientCredentials: { tokenUrl: `${as.issuer}/token${secretQuery}`, clientId: as.confidentialClient.clientId, clientSecret: 'wrong-secret' } },
    { log },
  );
  assert.equal(((await refusal(refused.headers({}))) as { code: string }).code, 'SWY_ERR_AUTH_UPSTREAM_TOKEN');
  const lines = records.filter((r) => r.msg === 'upstream token obtained' || r.msg === 'upstream token request refused');
  assert.deepEqual(
    lines.map((r) => [r.msg, r.url]),
    [
      ['upstream token obtained', new URL(as.issuer).origin],
      ['upstream token request refused', new URL(as.issuer).origin],
    ],
  );
  assert.ok(!JSON.stringify(records).includes('s3cr3t-query'));
});

test("token exchange: the user's token for the gateway becomes a token for the upstream, cached per client token", async (t) => {
  const as = await startAuthServer(t);
  const src = createTokenSource({
    tokenExchange: {
      issuer: as.issuer,
      clientId: as.confidentialClient.clientId,
      clientSecret: as.confidentialClient.clientSecret,
      resource: UPSTREAM,
      scope: 'mcp:read',
    },
  });
  const inbound = await userToken(as, GATEWAY, 'mcp:read mcp:write');
  const tokensBefore = as.count('/token');
  const exchanged = bearerOf(await src.headers({ token: inbound }));
  assert.equal(as.count('/token'), tokensBefore + 1);
  assert.notEqual(exchanged, inbound);
  const upstreamSees = await createBearerVerifier({ issuer: as.issuer, claims: ['act'] }).verify(exchanged, upstreamRef);
  assert.deepEqual(
    { ...upstreamSees, expiresAtMs: 0 },
    {
      issuer: as.issuer,
      subject: 'alice',
      clientId: 'switchyard',
      scopes: ['mcp:read'],
      claims: { act: { sub: 'switchyard' } },
      source: 'jwt',
      expiresAtMs: 0,
    },
  );
  // The exchanged token is no good at the gateway, and the client's token is no good upstream.
  await assert.rejects(
    createBearerVerifier({ issuer: as.issuer }).verify(exchanged, GATEWAY),
    (e: unknown) => e instanceof SwitchyardError && e.message.endsWith('audience mismatch'),
  );
  await assert.rejects(
    createBearerVerifier({ issuer: as.issuer }).verify(inbound, upstreamRef),
    (e: unknown) => e instanceof SwitchyardError && e.message.endsWith('audience mismatch'),
  );

  assert.equal(bearerOf(await src.headers({ token: inbound })), exchanged);
  assert.equal(as.count('/token'), tokensBefore + 1);
  const otherInbound = await userToken(as, GATEWAY, 'mcp:read');
  const before = as.count('/token');
  assert.notEqual(bearerOf(await src.headers({ token: otherInbound })), exchanged);
  assert.equal(as.count('/token'), before + 1);
  src.invalidate({ token: inbound });
  assert.notEqual(bearerOf(await src.headers({ token: inbound })), exchanged);
  assert.equal(as.count('/token'), before + 2);

  assert.deepEqual(await refusal(src.headers({})), {
    code: 'SWY_ERR_AUTH_NO_SUBJECT_TOKEN',
    status: 403,
    message: "Forbidden: this upstream needs the caller's OAuth access token",
    data: undefined,
  });
  assert.deepEqual(await refusal(src.headers({ token: 'not-a-token-this-server-issued' })), {
    code: 'SWY_ERR_AUTH_UPSTREAM_TOKEN',
    status: 502,
    message: 'Cannot obtain a credential for the upstream: token endpoint (token exchange) answered 400 invalid_grant',
    data: { error: 'invalid_grant' },
  });
});
