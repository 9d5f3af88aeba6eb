// Regression (found by a tester): a JWT whose `nbf` is a string ("0") was refused with
// error_description="not yet valid", as if it were early; docs/security.md lists `<claim> claim
// invalid` for a malformed claim, and a NumericDate is a number (RFC 7519 §4.1.5). jose says
// which (JWTClaimValidationFailed `reason`: 'invalid' or 'check_failed'); a non-numeric nbf is now
// "nbf claim invalid", as a non-numeric exp and iat already were, and a future nbf stays "not yet valid".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthServer } from '../fixtures/auth-server.js';
import { startAuthFront } from '../helpers/auth-front.js';
import { forge, getWith } from '../helpers/oauth.js';

test('a JWT with a non-numeric nbf, exp or iat is refused "<claim> claim invalid"; a future nbf "not yet valid"', async (t) => {
  const as = await startAuthServer(t);
  const front = await startAuthFront(t, { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } });
  const invalid = (why: string) => ({
    status: 401,
    wwwAuthenticate: `Bearer resource_metadata="${front.prmUrl}", error="invalid_token", error_description="${why}"`,
    retryAfter: undefined,
    body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: `Unauthorized: invalid access token: ${why}` } },
  });
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: as.issuer, sub: 'mallory', aud: front.resource, scope: 'mcp:read', iat: now, exp: now + 300 };
  const refusal = async (over: Record<string, unknown>) => getWith(front.resource, `Bearer ${await forge(as.privateJwk, { ...claims, ...over })}`);

  assert.deepEqual(await refusal({ nbf: '0' }), invalid('nbf claim invalid'));
  assert.deepEqual(await refusal({ nbf: String(now + 600) }), invalid('nbf claim invalid'));
  assert.deepEqual(await refusal({ exp: String(now + 300) }), invalid('exp claim invalid'));
  assert.deepEqual(await refusal({ iat: String(now) }), invalid('iat claim invalid'));
  assert.deepEqual(await refusal({ nbf: now + 600 }), invalid('not yet valid'));
  assert.equal((await refusal({ nbf: now - 10 })).status, 200);
});
