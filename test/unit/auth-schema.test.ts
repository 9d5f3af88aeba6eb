// The `auth` and upstream-credentials schema fragments: they compile with the config loader's
// ajv options, supply every default, and refuse what the product forbids.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { fileURLToPath } from 'node:url';
import { SwitchyardError } from '../../src/core/errors.js';
import { AUTH_SCHEMA, OUTBOUND_SCHEMA, resolveAuthConfig, resolveOutboundConfig } from '../../src/auth/config.js';
import { validateConfig } from '../../src/config/load.js';

// The repository root, from dist/test/unit.
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function errorsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    return (err.data?.errors as Array<{ path: string; message: string }>).map((e) => `${e.path}: ${e.message}`);
  }
  return [];
}

/** Every property schema, depth first, with its JSON pointer. */
function properties(schema: unknown, at = ''): Array<[string, Record<string, unknown>]> {
  const out: Array<[string, Record<string, unknown>]> = [];
  const s = schema as Record<string, unknown>;
  for (const [k, v] of Object.entries((s.properties as Record<string, unknown>) ?? {})) {
    if (typeof v !== 'object' || v === null) continue;
    const p = `${at}/${k}`;
    out.push([p, v as Record<string, unknown>]);
    out.push(...properties(v, p));
    const items = (v as Record<string, unknown>).items;
    if (items && typeof items === 'object') out.push(...properties(items, `${p}[]`));
  }
  return out;
}

test('every property of both fragments has a description naming its unit', () => {
  for (const [name, schema] of [
    ['auth', AUTH_SCHEMA],
    ['credentials', OUTBOUND_SCHEMA],
  ] as const) {
    for (const [p, prop] of properties(schema)) {
      if (!('type' in prop) && !('enum' in prop) && !('const' in prop) && !('oneOf' in prop)) continue;
      assert.match(String(prop.description), / Unit: .+\.$/, `${name}${p}`);
    }
  }
});

test('auth: defaults come from the schema; the input is not changed', () => {
  const input = {
    bearer: { issuer: 'https://as.example.com', introspection: { clientId: 'rs', clientSecret: 's' } },
    apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64) }],
  };
  const before = structuredClone(input);
  assert.deepEqual(resolveAuthConfig(input), {
    bearer: {
      issuer: 'https://as.example.com',
      scopes: [],
      scopeImplies: {},
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      clockToleranceSec: 60,
      claims: [],
      timeoutMs: 5000,
      introspection: { clientId: 'rs', clientSecret: 's', cacheMaxEntries: 10000, cacheMaxMs: 60000, maxConcurrent: 32 },
    },
    apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64), scopes: [] }],
  });
  assert.deepEqual(input, before);
  assert.ok(Object.isFrozen(resolveAuthConfig(input).bearer));
});

test('auth: none excludes the others, HS256 and none are not algorithms, empty is refused', () => {
  assert.deepEqual(resolveAuthConfig({ none: true }), { none: true });
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig({})),
    ['auth: must NOT have fewer than 1 properties'],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig({ none: true, apiKeys: [{ name: 'a', sha256: 'a'.repeat(64) }] })),
    ['auth/apiKeys: boolean schema is false'],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig({ none: false })),
    ['auth/none: must be equal to constant'],
  );
  for (const alg of ['HS256', 'HS384', 'HS512', 'none']) {
    assert.deepEqual(
      errorsOf(() => resolveAuthConfig({ bearer: { issuer: 'https://as.example.com', algorithms: [alg] } })),
      ['auth/bearer/algorithms/0: must be equal to one of the allowed values'],
    );
  }
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig({ bearer: { issuer: 'as.example.com', scopes: ['a b'], bogus: 1 } })),
    [
      'auth/bearer/bogus: is not a known key',
      'auth/bearer/issuer: must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)',
      'auth/bearer/issuer: must match format "uri"',
      'auth/bearer/scopes/0: must be an RFC 6749 scope token (printable ASCII without spaces, `"` or `\\`)',
    ],
  );
  // An http(s) URL needs a host (test/regressions/config-input.test.ts has every place).
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig({ bearer: { issuer: 'https://' } })),
    ['auth/bearer/issuer: must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)'],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig({ bearer: { issuer: 'https://a' } })),
    [],
  );
});

test('auth.bearer.scopeImplies: scope tokens only, bounded, each refusal at its path', () => {
  const bearer = (scopeImplies: unknown) => ({ bearer: { issuer: 'https://as.example.com', scopeImplies } });
  assert.deepEqual(resolveAuthConfig(bearer({ 'mcp:admin': ['mcp:write'], 'mcp:write': ['mcp:read'] })).bearer?.scopeImplies, {
    'mcp:admin': ['mcp:write'],
    'mcp:write': ['mcp:read'],
  });
  const token = 'must be an RFC 6749 scope token (printable ASCII without spaces, `"` or `\\`)';
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer({ 'mcp:admin': 'mcp:write' }))),
    ['auth/bearer/scopeImplies/mcp:admin: must be array'],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer(['mcp:admin']))),
    ['auth/bearer/scopeImplies: must be object'],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer({ 'mcp admin': ['mcp:read'], 'mcp:write': ['mcp "read"', 'mcp:read', 'mcp:read'], 'mcp:x': [] }))),
    [
      `auth/bearer/scopeImplies/mcp admin: is not a valid name: ${token}`,
      `auth/bearer/scopeImplies/mcp:write/0: ${token}`,
      'auth/bearer/scopeImplies/mcp:write: must NOT have duplicate items (items ## 2 and 1 are identical)',
      'auth/bearer/scopeImplies/mcp:x: must NOT have fewer than 1 items',
    ],
  );
  // RFC 6901 §3: a key's `~` and `/` are escaped in its path (`~0`, `~1`), as the config loader
  // escapes them; a scope token may hold both.
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer({ 'mcp/a~b': ['x y'], 'a /b~1': ['ok'] }))),
    [`auth/bearer/scopeImplies/a ~1b~01: is not a valid name: ${token}`, `auth/bearer/scopeImplies/mcp~1a~0b/0: ${token}`],
  );
  // At the bounds (64 scopes, 64 each, 256 characters) and one past each.
  const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, Array.from({ length: 64 }, (_, j) => `t${j}`)]));
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer({ ...many(64), ['x'.repeat(256)]: ['y'.repeat(256)] }))),
    ['auth/bearer/scopeImplies: must NOT have more than 64 properties'],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer({ ...many(63), ['x'.repeat(256)]: ['y'.repeat(256)] }))),
    [],
  );
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(bearer({ a: Array.from({ length: 65 }, (_, j) => `t${j}`), ['x'.repeat(257)]: ['y'.repeat(257)] }))),
    [
      `auth/bearer/scopeImplies/${'x'.repeat(257)}: is not a valid name: must NOT have more than 256 characters`,
      'auth/bearer/scopeImplies/a: must NOT have more than 64 items',
      `auth/bearer/scopeImplies/${'x'.repeat(257)}/0: must NOT have more than 256 characters`,
    ],
  );
});

test('the auth validator and the config loader name the same paths, `~` and `/` in keys escaped (RFC 6901 §3)', () => {
  const sha256 = 'a'.repeat(64);
  const auth = {
    bearer: { issuer: 'https://as.example.com', scopeImplies: { 'a/b~c': ['x y'], 'd /e~f': ['ok'] } },
    apiKeys: [{ name: 'ci', sha256, 'x/y~z': 1 }],
  };
  const want = ['auth/apiKeys/0/x~1y~0z', 'auth/bearer/scopeImplies/a~1b~0c/0', 'auth/bearer/scopeImplies/d ~1e~0f'];
  assert.deepEqual(
    errorsOf(() => resolveAuthConfig(auth))
      .map((e) => e.slice(0, e.indexOf(': ')))
      .sort(),
    want,
  );
  let loaderPaths: string[] = [];
  try {
    validateConfig({ auth, upstreams: { a: { transport: 'embedded' } } }, 'test');
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    loaderPaths = (err.data?.errors as Array<{ path: string }>).map((e) => e.path);
  }
  assert.deepEqual(
    loaderPaths.sort(),
    want.map((p) => `/${p}`),
  );
});

test('credentials: exactly one kind; tokenUrl or issuer; audience or resource for token exchange', () => {
  assert.deepEqual(resolveOutboundConfig({ headers: { 'X-Api-Key': 'k' } }), { headers: { 'X-Api-Key': 'k' } });
  assert.deepEqual(resolveOutboundConfig({ clientCredentials: { tokenUrl: 'https://as.example.com/token', clientId: 'c', clientSecret: 's' } }), {
    clientCredentials: { tokenUrl: 'https://as.example.com/token', clientId: 'c', clientSecret: 's', authMethod: 'client_secret_basic', timeoutMs: 5000 },
  });
  assert.deepEqual(
    resolveOutboundConfig({ tokenExchange: { issuer: 'https://as.example.com', clientId: 'c', clientSecret: 's', resource: 'https://up.example.com/mcp' } }),
    {
      tokenExchange: {
        issuer: 'https://as.example.com',
        clientId: 'c',
        clientSecret: 's',
        resource: 'https://up.example.com/mcp',
        authMethod: 'client_secret_basic',
        timeoutMs: 5000,
        cacheMaxEntries: 10000,
      },
    },
  );
  assert.deepEqual(
    errorsOf(() => resolveOutboundConfig({ headers: { 'X-A': 'a' }, clientCredentials: { tokenUrl: 'https://a/t', clientId: 'c', clientSecret: 's' } })),
    ['credentials: must NOT have more than 1 properties'],
  );
  assert.deepEqual(
    errorsOf(() => resolveOutboundConfig({ clientCredentials: { tokenUrl: 'https://a/t', issuer: 'https://a', clientId: 'c', clientSecret: 's' } })),
    ['credentials/clientCredentials: must match exactly one schema in oneOf'],
  );
  assert.deepEqual(
    errorsOf(() => resolveOutboundConfig({ headers: { 'Bad Name': 'x' } })),
    ['credentials/headers/Bad Name: is not a valid name: must match pattern "^[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,64}$"'],
  );
});

test('the YAML examples of docs/security.md validate against the fragments', () => {
  const md = readFileSync(path.join(REPO_ROOT, 'docs/security.md'), 'utf8');
  let auth = 0;
  let credentials = 0;
  for (const m of md.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)) {
    for (const doc of parseAllDocuments(m[1])) {
      const v = doc.toJS() as { auth?: unknown; credentials?: unknown };
      if (v.auth !== undefined) {
        auth++;
        resolveAuthConfig(v.auth);
      }
      if (v.credentials !== undefined) {
        credentials++;
        resolveOutboundConfig(v.credentials);
      }
    }
  }
  assert.deepEqual([auth, credentials], [2, 3]);
});
