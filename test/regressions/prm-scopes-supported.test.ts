// RFC 9728 §2: `scopes_supported` lists the scope values used in authorization requests to access
// the resource. The metadata listed only the required `scopes`, so a client could not learn from
// it the broader scope `scopeImplies` accepts in their place, nor a scope a policy rule checks
// (named by the operator in `bearer.scopesSupported`). Now: required scopes, then
// `scopesSupported`, then every scope `scopeImplies` names, each once, never `offline_access`
// (2026-07-28 basic/authorization, refresh tokens). docs/security.md, "Scopes in the metadata".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startAuthServer } from '../fixtures/auth-server.js';
import { userToken } from '../helpers/oauth.js';
import { configIssuesOf } from '../helpers/config.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';

test('scopes_supported: the required scopes, then scopesSupported, then the scopes scopeImplies names; offline_access never', async (t) => {
  const as = await startAuthServer(t, { machines: [] });
  const gw = await gatewayFromConfig(t, {
    auth: {
      bearer: {
        issuer: as.issuer,
        scopes: ['mcp:read'],
        scopesSupported: ['repo:write', 'mcp:read', 'offline_access'],
        scopeImplies: { 'mcp:admin': ['mcp:write', 'repo:write'], 'mcp:write': ['mcp:read'], offline_access: ['mcp:read'] },
      },
    },
    upstreams: { a: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const res = await request(`${new URL(url).origin}/.well-known/oauth-protected-resource/a/mcp`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(await res.body.json(), {
    resource: url,
    authorization_servers: [as.issuer],
    scopes_supported: ['mcp:read', 'repo:write', 'mcp:admin', 'mcp:write'],
    bearer_methods_supported: ['header'],
  });

  // A scope listed there is a scope a client may ask for, and one the hierarchy accepts: a token
  // the real authorization server issued with `mcp:admin` alone meets `scopes: [mcp:read]`.
  const token = await userToken(as, url, 'mcp:admin');
  const call = await modernCall(url, 1, 'tools/list', {}, `Bearer ${token}`);
  assert.equal(call.status, 200, call.text);

  // Without any of them, the document lists only what is required, as before; with no scope at all, no member.
  const plain = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer } }, upstreams: { a: { transport: 'embedded' } } });
  const doc = await request(`${new URL(plain.urls[0]).origin}/.well-known/oauth-protected-resource/a/mcp`);
  assert.deepEqual(await doc.body.json(), { resource: plain.urls[0], authorization_servers: [as.issuer], bearer_methods_supported: ['header'] });
});

test('bearer.scopesSupported is bounded and made of scope tokens', () => {
  const issues = (scopesSupported: unknown) => configIssuesOf({ auth: { bearer: { issuer: 'https://as.example', scopesSupported } } }).map((e) => e.path);
  assert.deepEqual(issues(Array.from({ length: 64 }, (_, i) => `s${i}`)), []);
  assert.deepEqual(issues(Array.from({ length: 65 }, (_, i) => `s${i}`)), ['/auth/bearer/scopesSupported']);
  assert.deepEqual(issues(['a b']), ['/auth/bearer/scopesSupported/0']);
  assert.deepEqual(issues(['a', 'a']), ['/auth/bearer/scopesSupported']);
});
