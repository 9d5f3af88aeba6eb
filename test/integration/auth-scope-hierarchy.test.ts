// Scope hierarchies through the real front door against a real authorization server (oidc-provider,
// JWT access tokens): `auth.bearer.scopeImplies`, top-level and a mount's own, judges a broad scope
// sufficient for a narrower requirement it implies, transitively; the 403 challenge still names
// every required scope; policy sees the closed set; a reload applies the key.
// 2026-07-28 basic/authorization, step-up authorization flow ("scope hierarchies": broad implies
// narrow; a MUST for the server judging sufficiency), runtime insufficient scope errors (all scopes
// needed in one challenge); RFC 6750 §3.1.
// https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#step-up-authorization-flow

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBearerVerifier } from '../../src/auth/bearer.js';
import { compileScopeHierarchy } from '../../src/auth/scopes.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { validateConfig } from '../../src/config/load.js';
import { gatewayFromConfig, modernCall, refusalBody } from '../helpers/identity.js';

const HIERARCHY = { 'mcp:admin': ['mcp:write'], 'mcp:write': ['mcp:read'] };
const API_KEY = 'admin-key_0123456789abcdefghijklmnopqrstuv';

const prmOf = (url: string) => {
  const u = new URL(url);
  return `${u.origin}/.well-known/oauth-protected-resource${u.pathname}`;
};
const insufficient = (url: string, scope: string) => `Bearer resource_metadata="${prmOf(url)}", error="insufficient_scope", scope="${scope}"`;

/** tools/call echo on `url` with `Bearer token`: the status, the challenge and the body. */
async function echo(url: string, token: string) {
  const r = await modernCall(url, 1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, `Bearer ${token}`);
  return { status: r.status, wwwAuthenticate: r.headers['www-authenticate'], json: r.json as { result?: unknown; error?: unknown } };
}

/**
 * Three embedded-demo mounts behind one issuer:
 * - `top`: the top-level `auth` (scopes [mcp:read], the hierarchy, an API key granting mcp:admin);
 * - `own`: its own `auth` (scopes [mcp:read, mcp:prompts], the hierarchy);
 * - `plain`: its own `auth` (scopes [mcp:read], no `scopeImplies`: exact comparison, as before).
 */
async function setup(t: { after(fn: () => Promise<void>): void }) {
  const as = await startAuthServer(t, { scopes: ['mcp:read', 'mcp:write', 'mcp:admin', 'mcp:prompts'] });
  const issuer = as.issuer;
  const raw = {
    auth: {
      bearer: { issuer, scopes: ['mcp:read'], scopeImplies: HIERARCHY },
      apiKeys: [{ name: 'ops', sha256: createHash('sha256').update(API_KEY).digest('hex'), scopes: ['mcp:admin'] }],
    },
    upstreams: {
      top: { transport: 'embedded' },
      own: { transport: 'embedded', auth: { bearer: { issuer, scopes: ['mcp:read', 'mcp:prompts'], scopeImplies: HIERARCHY } } },
      plain: { transport: 'embedded', auth: { bearer: { issuer, scopes: ['mcp:read'] } } },
    },
  };
  const gw = await gatewayFromConfig(t, raw);
  const [top, own, plain] = gw.urls;
  assert.deepEqual(
    [top, own, plain].map((u) => new URL(u).pathname),
    ['/top/mcp', '/own/mcp', '/plain/mcp'],
  );
  return { as, gw, raw, top, own, plain };
}

const ok = (r: Awaited<ReturnType<typeof echo>>) => {
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.deepEqual((r.json.result as { content?: unknown }).content, [{ type: 'text', text: 'Echo: hi' }]);
};

test('a broad scope meets a narrow requirement it implies, transitively, on the top-level and a mount’s own auth; without scopeImplies it does not', async (t) => {
  const { as, top, own, plain } = await setup(t);
  // mcp:admin → mcp:write → mcp:read: two steps.
  ok(await echo(top, await as.clientCredentialsToken(top, 'mcp:admin')));
  // One step.
  ok(await echo(top, await as.clientCredentialsToken(top, 'mcp:write')));
  // The narrow scope itself, as before.
  ok(await echo(top, await as.clientCredentialsToken(top, 'mcp:read')));
  ok(await echo(own, await as.clientCredentialsToken(own, 'mcp:admin mcp:prompts')));

  // The config silent: exact comparison, the same 403 as before this key existed.
  const admin = await echo(plain, await as.clientCredentialsToken(plain, 'mcp:admin'));
  assert.deepEqual(admin, {
    status: 403,
    wwwAuthenticate: insufficient(plain, 'mcp:read'),
    json: refusalBody('Forbidden: the access token lacks a required scope: missing mcp:read'),
  });
  ok(await echo(plain, await as.clientCredentialsToken(plain, 'mcp:read')));
});

test('a token lacking a required scope gets 403 insufficient_scope naming every required scope; the missing ones are judged through the hierarchy', async (t) => {
  const { as, top, own } = await setup(t);
  // mcp:admin implies mcp:read but nothing implies mcp:prompts: only that one is missing, and the
  // challenge names the whole required set (all needed at once), as for any 403 here.
  assert.deepEqual(await echo(own, await as.clientCredentialsToken(own, 'mcp:admin')), {
    status: 403,
    wwwAuthenticate: insufficient(own, 'mcp:read mcp:prompts'),
    json: refusalBody('Forbidden: the access token lacks a required scope: missing mcp:prompts'),
  });
  // A scope that implies nothing required.
  assert.deepEqual(await echo(own, await as.clientCredentialsToken(own, 'mcp:prompts')), {
    status: 403,
    wwwAuthenticate: insufficient(own, 'mcp:read mcp:prompts'),
    json: refusalBody('Forbidden: the access token lacks a required scope: missing mcp:read'),
  });
  // Implication runs from broad to narrow only: mcp:read does not give mcp:write.
  const narrow = await echo(top, await as.clientCredentialsToken(top, 'mcp:prompts'));
  assert.deepEqual(narrow, {
    status: 403,
    wwwAuthenticate: insufficient(top, 'mcp:read'),
    json: refusalBody('Forbidden: the access token lacks a required scope: missing mcp:read'),
  });
});

test('an API key of the same auth is judged through the same hierarchy', async (t) => {
  const { top } = await setup(t);
  ok(await echo(top, API_KEY));
});

test('policy rules see the closed set: principal.scopes holds what the granted scopes imply', async (t) => {
  const as = await startAuthServer(t);
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer, scopes: ['mcp:read'], scopeImplies: HIERARCHY } },
    policy: {
      default: 'allow',
      rules: [{ name: 'echo-needs-write', effect: 'deny', when: "component.kind == 'tool' && component.name == 'echo' && !('mcp:write' in principal.scopes)" }],
    },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  ok(await echo(url, await as.clientCredentialsToken(url, 'mcp:admin')));
  const reader = await echo(url, await as.clientCredentialsToken(url, 'mcp:read'));
  assert.equal(reader.status, 200);
  assert.deepEqual(reader.json.error, { code: -32010, message: 'Forbidden by policy: tool echo', data: { kind: 'tool', name: 'echo' } });
  const decisions = gw.records.filter((r) => r.msg === 'policy decision').map((r) => [r.decision, r.rule]);
  assert.deepEqual(decisions, [
    ['allow', null],
    ['deny', 'echo-needs-write'],
  ]);
});

test('a reload that adds scopeImplies applies from the next request; one that removes it, too', async (t) => {
  const { as, gw, raw, plain } = await setup(t);
  const token = await as.clientCredentialsToken(plain, 'mcp:admin');
  assert.equal((await echo(plain, token)).status, 403);
  const withKey = structuredClone(raw);
  (withKey.upstreams.plain.auth.bearer as Record<string, unknown>).scopeImplies = HIERARCHY;
  const config = (r: typeof raw) => validateConfig({ ...r, listen: { host: '127.0.0.1', port: 0 } }, 'test', { env: {} });
  const added = await gw.reload(config(withKey));
  assert.deepEqual(added.needRestart, []);
  ok(await echo(plain, token));
  await gw.reload(config(raw));
  assert.deepEqual(await echo(plain, token), {
    status: 403,
    wwwAuthenticate: insufficient(plain, 'mcp:read'),
    json: refusalBody('Forbidden: the access token lacks a required scope: missing mcp:read'),
  });
});

test('an introspected opaque token is judged through the hierarchy too; its identity carries the closed set', async (t) => {
  const resource = 'https://gw.example.com/mcp';
  // A real RFC 7662 endpoint on 127.0.0.1: every token active, granting mcp:admin for `resource`.
  const as = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ active: true, sub: 'carol', scope: 'mcp:admin', aud: resource, exp: Math.floor(Date.now() / 1000) + 300 }));
    });
  });
  await new Promise<void>((resolve) => as.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => as.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(as.address() as AddressInfo).port}`;
  const introspection = { endpoint: `${issuer}/introspect`, clientId: 'rs', clientSecret: 's' };
  const withKey = createBearerVerifier({ issuer, scopes: ['mcp:read'], scopeImplies: HIERARCHY, introspection });
  const id = await withKey.verify('opaque-token-0123456789', resource);
  assert.deepEqual(id.scopes, ['mcp:admin', 'mcp:write', 'mcp:read']);
  // Compiled by the caller (as createAuthenticator does, once for its keys and its verifier): the same closure.
  const given = createBearerVerifier(
    { issuer, scopes: ['mcp:read'], scopeImplies: HIERARCHY, introspection },
    { scopeHierarchy: compileScopeHierarchy(HIERARCHY) },
  );
  assert.deepEqual((await given.verify('opaque-token-0123456789', resource)).scopes, ['mcp:admin', 'mcp:write', 'mcp:read']);
  const exact = createBearerVerifier({ issuer, scopes: ['mcp:read'], introspection });
  await assert.rejects(exact.verify('opaque-token-0123456789', resource), (err: Error & { code?: string; message: string }) => {
    assert.equal(err.code, 'SWY_ERR_AUTH_INSUFFICIENT_SCOPE');
    assert.equal(err.message, 'Forbidden: the access token lacks a required scope: missing mcp:read');
    return true;
  });
});
