// Scope hierarchies (`auth.bearer.scopeImplies`): the closure compiled at config load, and granted
// scopes closed under it. 2026-07-28 basic/authorization (step-up authorization flow): the server
// accounts for scope hierarchies (broad implies narrow) when it judges sufficiency.
// https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#step-up-authorization-flow

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileScopeHierarchy, insufficientScope, missingScopes, NO_SCOPE_HIERARCHY } from '../../src/auth/scopes.js';
import { createApiKeyStore, hashApiKey } from '../../src/auth/api-keys.js';

test('no implications (the default {}): the granted scopes are returned as they are, the same array', () => {
  const h = compileScopeHierarchy({});
  assert.equal(h, NO_SCOPE_HIERARCHY);
  assert.equal(h.empty, true);
  const granted = ['mcp:admin', 'mcp:read'];
  assert.equal(h.close(granted), granted);
});

test('transitive: admin implies write directly and read through write; granted first, then implied breadth first', () => {
  const h = compileScopeHierarchy({ 'mcp:admin': ['mcp:write', 'mcp:audit'], 'mcp:write': ['mcp:read'], 'mcp:read': ['mcp:list'] });
  assert.equal(h.empty, false);
  assert.deepEqual(h.close(['mcp:admin']), ['mcp:admin', 'mcp:write', 'mcp:audit', 'mcp:read', 'mcp:list']);
  assert.deepEqual(h.close(['mcp:write']), ['mcp:write', 'mcp:read', 'mcp:list']);
  assert.deepEqual(h.close(['openid', 'mcp:read']), ['openid', 'mcp:read', 'mcp:list']);
  // Each scope once; a granted scope that is also implied keeps its granted place.
  assert.deepEqual(h.close(['mcp:read', 'mcp:admin']), ['mcp:read', 'mcp:admin', 'mcp:list', 'mcp:write', 'mcp:audit']);
  // Nothing to add: the same array.
  const plain = ['openid', 'mcp:list'];
  assert.equal(h.close(plain), plain);
  assert.deepEqual(h.close([]), []);
});

test('a cycle ends: the scopes on it imply each other, and nothing loops', () => {
  const h = compileScopeHierarchy({ a: ['b'], b: ['c'], c: ['a', 'd'] });
  assert.deepEqual(h.close(['a']), ['a', 'b', 'c', 'd']);
  assert.deepEqual(h.close(['c']), ['c', 'a', 'd', 'b']);
  assert.deepEqual(h.close(['d']), ['d']);
  const self = compileScopeHierarchy({ a: ['a'] });
  assert.equal(self, NO_SCOPE_HIERARCHY, 'a scope that implies only itself adds nothing');
});

test('at the schema bounds (64 scopes in a chain, each implying 64): compiled once, every scope reached', () => {
  const implies: Record<string, string[]> = {};
  for (let i = 0; i < 64; i++) implies[`k${i}`] = [...(i < 63 ? [`k${i + 1}`] : []), ...Array.from({ length: i < 63 ? 63 : 64 }, (_, j) => `k${i}:leaf${j}`)];
  const h = compileScopeHierarchy(implies);
  const all = h.close(['k0']);
  assert.equal(all.length, 1 + 63 + 63 * 63 + 64);
  assert.equal(new Set(all).size, all.length);
  assert.ok(all.includes('k63:leaf63'));
});

test("an API key's scopes are closed once, when the store is built", () => {
  const key = 'k1_9J3xq0Vb5mN2pL8rT4wY6zA7cE1gH3jK';
  const store = createApiKeyStore([{ name: 'ci', sha256: hashApiKey(key), scopes: ['mcp:admin'] }], compileScopeHierarchy({ 'mcp:admin': ['mcp:read'] }));
  const id = store.lookup(key);
  assert.deepEqual(id, { issuer: 'switchyard:api-key', subject: 'ci', scopes: ['mcp:admin', 'mcp:read'], claims: {}, source: 'api-key' });
  assert.equal(store.lookup(key), id);
  assert.ok(Object.isFrozen(id.scopes));
});

// 2026-07-28 basic/authorization, runtime insufficient scope errors: the challenge names every
// scope the resource needs, the message the ones missing. One check serves tokens and API keys.
test('the required-scope check: the missing scopes in order; the 403 challenge names every required one', () => {
  const h = compileScopeHierarchy({ 'mcp:admin': ['mcp:write'], 'mcp:write': ['mcp:read'] });
  const required = ['mcp:read', 'mcp:prompts', 'mcp:write'];
  assert.deepEqual(missingScopes(required, { scopes: h.close(['mcp:prompts']) }), ['mcp:read', 'mcp:write']);
  assert.deepEqual(missingScopes(required, { scopes: h.close(['mcp:admin', 'mcp:prompts']) }), []);
  assert.deepEqual(missingScopes([], { scopes: [] }), []);
  const resource = { prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  assert.equal(insufficientScope(required, { scopes: h.close(['mcp:admin', 'mcp:prompts']) }, resource), undefined);
  const err = insufficientScope(required, { scopes: h.close(['mcp:write']) }, resource);
  assert.equal(err?.code, 'SWY_ERR_AUTH_INSUFFICIENT_SCOPE');
  assert.equal(err?.status, 403);
  assert.equal(err?.message, 'Forbidden: the access token lacks a required scope: missing mcp:prompts');
  assert.deepEqual(err?.headers, {
    'WWW-Authenticate': `Bearer resource_metadata="${resource.prmUrl}", error="insufficient_scope", scope="mcp:read mcp:prompts mcp:write"`,
  });
});
