// Authentication before MCP through the real front door, on every era's routes, against a real
// authorization server: each attack answered with its exact status, challenge and body.
// See 2025-11-25 basic/authorization (token handling, audience); RFC 6750 §3.1; RFC 8725 §3.1, §3.2; RFC 9728 §3, §5.1.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { connect } from 'node:net';
import { SignJWT } from 'jose';
import { JWKS_COOLDOWN_MS } from '../../src/auth/bearer.js';
import { Client, request } from 'undici';
import { startAuthServer, type AuthServer } from '../fixtures/auth-server.js';
import { forge, unsigned } from '../helpers/oauth.js';
import { gatewayFromConfig, modernCall, openSession, refusalBody, sessionHeaders, type ConfigGateway } from '../helpers/identity.js';
import { modernBody, modernHeaders, openSse, post, send } from '../helpers/http.js';

interface Setup {
  as: AuthServer;
  gw: ConfigGateway;
  a: string;
  b: string;
  origin: string;
  prmA: string;
}

/** Two embedded-demo mounts `a` and `b` behind one issuer requiring `mcp:read`, HTTP+SSE on. */
async function setup(t: { after(fn: () => Promise<void>): void }): Promise<Setup> {
  const as = await startAuthServer(t, { machines: ['alice', 'bob'] });
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } },
    dialects: { legacySse: true },
    upstreams: { a: { transport: 'embedded' }, b: { transport: 'embedded' } },
  });
  const [a, b] = gw.urls;
  const origin = new URL(a).origin;
  return { as, gw, a, b, origin, prmA: `${origin}/.well-known/oauth-protected-resource/a/mcp` };
}

const invalid = (prm: string, reason: string) => `Bearer resource_metadata="${prm}", error="invalid_token", error_description="${reason}"`;

test('every attack on the token is 401 invalid_token with the reason, before any MCP handling', async (t) => {
  const { as, a, b, prmA, gw } = await setup(t);
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: as.issuer, sub: 'alice', aud: a, iat: now, exp: now + 600, scope: 'mcp:read', client_id: 'alice' };
  const publicPem = createPublicKey({ key: as.privateJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
  const attacks: Record<string, [string, string]> = {
    'wrong audience': [await as.clientCredentialsToken('https://elsewhere.example/mcp', 'mcp:read', 'alice'), 'audience mismatch'],
    'a token for mount b on mount a': [await as.clientCredentialsToken(b, 'mcp:read', 'alice'), 'audience mismatch'],
    'wrong issuer': [await forge(as.privateJwk, { ...claims, iss: 'https://evil.example' }), 'issuer mismatch'],
    expired: [await forge(as.privateJwk, { ...claims, iat: now - 7200, exp: now - 3600 }), 'expired'],
    'not yet valid': [await forge(as.privateJwk, { ...claims, nbf: now + 3600 }), 'not yet valid'],
    'alg none': [unsigned(claims, as.privateJwk.kid), 'signing algorithm not accepted'],
    // RFC 8725 §3.2: the public key used as an HMAC secret.
    'HS256 signed with the public key': [
      await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: as.privateJwk.kid, typ: 'at+jwt' }).sign(new TextEncoder().encode(publicPem)),
      'signing algorithm not accepted',
    ],
    'another signature': [(await forge(as.privateJwk, claims)).replace(/\.[^.]+$/, '.' + 'A'.repeat(342)), 'bad signature'],
    'an unknown key': [await forge({ ...as.privateJwk, kid: 'not-published' }, claims), 'unknown signing key'],
    'opaque garbage': ['opaque-token-value', 'not a JWT and introspection is off'],
  };
  for (const [name, [token, reason]] of Object.entries(attacks)) {
    const r = await modernCall(a, 1, 'tools/list', {}, `Bearer ${token}`);
    assert.equal(r.status, 401, name);
    assert.equal(r.headers['www-authenticate'], invalid(prmA, reason), name);
    assert.deepEqual(r.json, refusalBody(`Unauthorized: invalid access token: ${reason}`), name);
  }
  // The token itself is never logged, only its SHA-256.
  const logged = JSON.stringify(gw.records);
  for (const [token] of Object.values(attacks)) assert.ok(!logged.includes(token));
  assert.ok(gw.records.some((r) => r.msg === 'authentication refused' && typeof r.tokenSha256 === 'string'));
});

test('no token, another scheme, two Authorization fields, a missing scope: 401, 401, 400, 403', async (t) => {
  const { as, a, prmA } = await setup(t);
  const none = await modernCall(a, 1, 'tools/list', {});
  assert.equal(none.status, 401);
  assert.equal(none.headers['www-authenticate'], `Bearer resource_metadata="${prmA}", scope="mcp:read"`);
  assert.deepEqual(none.json, refusalBody('Unauthorized: an access token is required'));

  const basic = await modernCall(a, 1, 'tools/list', {}, 'Basic YWxpY2U6c2VjcmV0');
  assert.equal(basic.status, 401);
  assert.equal(basic.headers['www-authenticate'], `Bearer resource_metadata="${prmA}", scope="mcp:read"`);

  const good = await as.clientCredentialsToken(a, 'mcp:read', 'alice');
  // Node keeps only the first field in req.headers; the front door reads them all.
  const twice = await request(a, {
    method: 'POST',
    headers: [
      'content-type',
      'application/json',
      'accept',
      'application/json, text/event-stream',
      'authorization',
      `Bearer ${good}`,
      'authorization',
      'Bearer other',
    ],
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
  });
  assert.equal(twice.statusCode, 400);
  assert.equal(
    twice.headers['www-authenticate'],
    `Bearer resource_metadata="${prmA}", error="invalid_request", error_description="the Bearer credential is not exactly one b64token"`,
  );
  assert.deepEqual(await twice.body.json(), refusalBody('Bad Request: malformed Authorization header: the Bearer credential is not exactly one b64token'));

  const narrow = await as.clientCredentialsToken(a, 'mcp:write', 'alice');
  const r = await modernCall(a, 1, 'tools/list', {}, `Bearer ${narrow}`);
  assert.equal(r.status, 403);
  assert.equal(r.headers['www-authenticate'], `Bearer resource_metadata="${prmA}", error="insufficient_scope", scope="mcp:read"`);
  assert.deepEqual(r.json, refusalBody('Forbidden: the access token lacks a required scope: missing mcp:read'));

  const ok = await modernCall(a, 1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, `Bearer ${good}`);
  assert.equal(ok.status, 200);
  assert.deepEqual((ok.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);
});

test("the same challenge on every era's routes: 2026 POST, 2025 POST, GET and DELETE, HTTP+SSE GET and POST", async (t) => {
  const { as, a, origin, prmA } = await setup(t);
  const token = `Bearer ${await as.clientCredentialsToken(a, 'mcp:read', 'alice')}`;
  const sid = await openSession(a, token);
  const challenge = `Bearer resource_metadata="${prmA}", scope="mcp:read"`;
  const expect401 = (r: { status: number; headers: Record<string, unknown>; json: unknown }, what: string) => {
    assert.equal(r.status, 401, what);
    assert.equal(r.headers['www-authenticate'], challenge, what);
    assert.deepEqual(r.json, refusalBody('Unauthorized: an access token is required'), what);
  };
  expect401(await modernCall(a, 1, 'tools/list', {}), '2026 POST');
  expect401(
    await post(
      a,
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      sessionHeaders(),
    ),
    '2025 initialize',
  );
  expect401(await post(a, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, sessionHeaders(sid)), '2025 POST');
  expect401(await send(a, 'GET', undefined, { accept: 'text/event-stream', 'mcp-session-id': sid }), '2025 GET');
  expect401(await send(a, 'DELETE', undefined, { 'mcp-session-id': sid }), '2025 DELETE');
  expect401(await send(`${origin}/a/sse`, 'GET', undefined, { accept: 'text/event-stream' }), 'HTTP+SSE GET');
  expect401(await send(a, 'GET', undefined, { accept: 'text/event-stream' }), 'HTTP+SSE GET on the MCP path');
  expect401(await post(`${origin}/a/messages?sessionId=x`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-type': 'application/json' }), 'HTTP+SSE POST');

  // With the token, the HTTP+SSE stream opens and names its endpoint.
  const sse = await openSse(`${origin}/a/sse`, 'GET', { accept: 'text/event-stream', authorization: token });
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  assert.equal((await sse.next()).event, 'endpoint');
});

test('each mount publishes its own metadata; no bare well-known document with two mounts; metadata needs no token', async (t) => {
  const { as, a, b, origin } = await setup(t);
  for (const [mount, url] of [
    ['a', a],
    ['b', b],
  ]) {
    const res = await request(`${origin}/.well-known/oauth-protected-resource/${mount}/mcp`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), {
      resource: url,
      authorization_servers: [as.issuer],
      scopes_supported: ['mcp:read'],
      bearer_methods_supported: ['header'],
    });
  }
  const bare = await request(`${origin}/.well-known/oauth-protected-resource`);
  assert.equal(bare.statusCode, 404);
  await bare.body.dump();
  // Origin checks still apply to the metadata routes.
  const foreign = await request(`${origin}/.well-known/oauth-protected-resource/a/mcp`, { headers: { origin: 'https://evil.example' } });
  assert.equal(foreign.statusCode, 403);
  await foreign.body.dump();
});

test('behind a proxy with a path prefix, the metadata is served at the URL the challenge names (RFC 9728 §3.1)', async (t) => {
  const as = await startAuthServer(t);
  const auth = { bearer: { issuer: as.issuer } };
  const upstreams = { a: { transport: 'embedded' } };
  // publicBaseUrl: a proxy that passes /.well-known/ through as it came, or strips the prefix inside it.
  const fixed = await gatewayFromConfig(t, { auth, upstreams, publicBaseUrl: 'https://mcp.example.com/tenant-7' });
  const origin = new URL(fixed.urls[0]).origin;
  const challenged = await modernCall(`${origin}/a/mcp`, 1, 'tools/list', {});
  assert.equal(challenged.status, 401);
  assert.equal(
    challenged.headers['www-authenticate'],
    'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/tenant-7/a/mcp"',
  );
  const doc = { resource: 'https://mcp.example.com/tenant-7/a/mcp', authorization_servers: [as.issuer], bearer_methods_supported: ['header'] };
  for (const path of ['/.well-known/oauth-protected-resource/tenant-7/a/mcp', '/.well-known/oauth-protected-resource/a/mcp']) {
    const res = await request(`${origin}${path}`);
    assert.equal(res.statusCode, 200, path);
    assert.deepEqual(await res.body.json(), doc, path);
  }
  const other = await request(`${origin}/.well-known/oauth-protected-resource/tenant-8/a/mcp`);
  assert.equal(other.statusCode, 404);
  await other.body.dump();

  // A trusted proxy's X-Forwarded-Prefix: the same two paths.
  const proxied = await gatewayFromConfig(t, { auth, upstreams, trustProxy: ['127.0.0.1'] });
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'mcp.example.com', 'x-forwarded-prefix': '/tenant-7' };
  for (const path of ['/.well-known/oauth-protected-resource/tenant-7/a/mcp', '/.well-known/oauth-protected-resource/a/mcp']) {
    const res = await request(`${new URL(proxied.urls[0]).origin}${path}`, { headers: forwarded });
    assert.equal(res.statusCode, 200, path);
    assert.deepEqual(await res.body.json(), doc, path);
  }
});

// The clock (Date) is the one fake: the JWKS refetch cooldown is a minute.
test('after key rotation a token signed with the new key verifies (one JWKS refetch for the unknown kid)', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const { as, a } = await setup(t);
  const before = `Bearer ${await as.clientCredentialsToken(a, 'mcp:read', 'alice')}`;
  assert.equal((await modernCall(a, 1, 'tools/list', {}, before)).status, 200);
  const jwksBefore = as.count('/jwks');
  t.mock.timers.tick(JWKS_COOLDOWN_MS + 1_000);
  await as.rotateKeys();
  const after = `Bearer ${await as.clientCredentialsToken(a, 'mcp:read', 'alice')}`;
  assert.equal((await modernCall(a, 2, 'tools/list', {}, after)).status, 200);
  assert.equal(as.count('/jwks'), jwksBefore + 1);
  // The old key is still published, so tokens it signed stay valid until they expire.
  assert.equal((await modernCall(a, 3, 'tools/list', {}, before)).status, 200);
});

test('API keys: a known key is its named principal; an unknown one is invalid_token', async (t) => {
  const key = 'k3y-for-ci_0123456789abcdefghijklmnop';
  const { createHash } = await import('node:crypto');
  const gw = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'ci-bot', sha256: createHash('sha256').update(key).digest('hex'), scopes: ['mcp'] }] },
    policy: { default: 'deny', rules: [{ name: 'ci-echo', effect: 'allow', when: "principal.sub == 'ci-bot' && component.name == 'echo'" }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const prm = `${new URL(url).origin}/.well-known/oauth-protected-resource/demo/mcp`;
  const ok = await modernCall(url, 1, 'tools/call', { name: 'echo', arguments: { message: 'ci' } }, `Bearer ${key}`);
  assert.equal(ok.status, 200);
  assert.deepEqual((ok.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: ci' }]);
  const other = await modernCall(url, 2, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, `Bearer ${key}`);
  assert.deepEqual((other.json as { error: unknown }).error, { code: -32010, message: 'Forbidden by policy: tool add', data: { kind: 'tool', name: 'add' } });
  const wrong = await modernCall(url, 3, 'tools/list', {}, 'Bearer not-the-key');
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers['www-authenticate'], invalid(prm, 'unknown API key'));
  // API keys only: the metadata names the resource and no authorization server.
  const doc = await request(prm);
  assert.deepEqual(await doc.body.json(), { resource: url, bearer_methods_supported: ['header'] });
});

test("a mount's own auth replaces the top-level one there, and only there", async (t) => {
  const { createHash } = await import('node:crypto');
  const key = 'mount-key_0123456789abcdefghijklmnopqrstuv';
  const as = await startAuthServer(t, { machines: ['alice'] });
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer } },
    upstreams: {
      tokens: { transport: 'embedded' },
      keys: { transport: 'embedded', auth: { apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(key).digest('hex') }] } },
      open: { transport: 'embedded', auth: { none: true } },
    },
  });
  const [tokens, keys, open] = gw.urls;
  const origin = new URL(tokens).origin;
  const jwt = await as.clientCredentialsToken(keys, undefined, 'alice');
  assert.equal((await modernCall(keys, 1, 'tools/list', {}, `Bearer ${key}`)).status, 200);
  const withJwt = await modernCall(keys, 2, 'tools/list', {}, `Bearer ${jwt}`);
  assert.equal(withJwt.status, 401);
  assert.equal(withJwt.headers['www-authenticate'], invalid(`${origin}/.well-known/oauth-protected-resource/keys/mcp`, 'unknown API key'));
  const keyOnTokens = await modernCall(tokens, 3, 'tools/list', {}, `Bearer ${key}`);
  assert.equal(
    keyOnTokens.headers['www-authenticate'],
    invalid(`${origin}/.well-known/oauth-protected-resource/tokens/mcp`, 'not a JWT and introspection is off'),
  );
  // `none: true` on its mount: open, with no metadata document.
  assert.equal((await modernCall(open, 4, 'tools/list', {})).status, 200);
  const prm = await request(`${origin}/.well-known/oauth-protected-resource/open/mcp`);
  assert.equal(prm.statusCode, 404);
  await prm.body.dump();
});

test('one keep-alive connection: the identity it proved is reused only for the same Authorization, mount and resource URI', async (t) => {
  const { as, a, b, prmA, gw } = await setup(t);
  const prmB = `${new URL(b).origin}/.well-known/oauth-protected-resource/b/mcp`;
  // One connection for every request below, so that each one meets the connection's memory.
  const client = new Client(new URL(a).origin, { pipelining: 1, connections: 1 } as never);
  t.after(() => client.close());
  let connects = 0;
  client.on('connect', () => connects++);
  const call = async (url: string, authorization?: string, host?: string) => {
    const r = await client.request({
      method: 'POST',
      path: new URL(url).pathname,
      headers: { ...modernHeaders('tools/list'), ...(authorization ? { authorization } : {}), ...(host ? { host } : {}) },
      body: JSON.stringify(modernBody(1, 'tools/list', {})),
    });
    const text = await r.body.text();
    return { status: r.statusCode, challenge: r.headers['www-authenticate'], text };
  };
  const good = `Bearer ${await as.clientCredentialsToken(a, 'mcp:read', 'alice')}`;
  assert.equal((await call(a, good)).status, 200);
  assert.equal((await call(a, good)).status, 200);
  // Another token on the same connection is verified on its own: a forged one is refused.
  const now = Math.floor(Date.now() / 1000);
  const forged = await forge(
    { ...as.privateJwk, kid: 'not-published' },
    { iss: as.issuer, sub: 'mallory', aud: a, iat: now, exp: now + 600, scope: 'mcp:read' },
  );
  const r1 = await call(a, `Bearer ${forged}`);
  assert.equal(r1.status, 401);
  assert.equal(r1.challenge, invalid(prmA, 'unknown signing key'));
  // No Authorization at all after a good one: 401 with the plain challenge.
  const r2 = await call(a);
  assert.equal(r2.status, 401);
  assert.equal(r2.challenge, `Bearer resource_metadata="${prmA}", scope="mcp:read"`);
  // The token of mount a, proved on this connection, is not accepted by mount b.
  const r3 = await call(b, good);
  assert.equal(r3.status, 401);
  assert.equal(r3.challenge, invalid(prmB, 'audience mismatch'));
  // A one-character change of the remembered value is a different credential (inside the
  // signature: its last character also holds padding bits, which jose does not check).
  const k = good.length - 10;
  const r4 = await call(a, `${good.slice(0, k)}${good[k] === 'A' ? 'B' : 'A'}${good.slice(k + 1)}`);
  assert.equal(r4.status, 401);
  assert.equal(r4.challenge, invalid(prmA, 'bad signature'));
  assert.equal((await call(a, good)).status, 200);
  // The same token and mount under another Host: another resource URI (the remembered identity
  // is keyed on the base URL too), so verified again and refused for its audience.
  const other = new URL(a);
  other.hostname = 'localhost';
  const r5 = await call(a, good, other.host);
  assert.equal(r5.status, 401);
  assert.equal(r5.challenge, invalid(`${other.origin}/.well-known/oauth-protected-resource/a/mcp`, 'audience mismatch'));
  assert.equal((await call(a, good)).status, 200);
  // Every request above came over one connection, and each refusal was a verification of its own.
  assert.equal(connects, 1);
  assert.equal(gw.records.filter((r) => r.msg === 'authentication refused').length, 5);
});

test('an absolute-form target: the token audience is the authority the Host check passed (the target), not a Host line it ignored', async (t) => {
  const { as, a, prmA } = await setup(t);
  const { port } = new URL(a);
  // RFC 9112 §3.2.2: the guard checks the target's authority and ignores Host, so Host may name
  // anything; a token minted for that name must not be this resource's.
  const foreign = await as.clientCredentialsToken('http://evil.example/a/mcp', 'mcp:read', 'alice');
  const own = await as.clientCredentialsToken(a, 'mcp:read', 'alice');
  const raw = (token: string) =>
    new Promise<string>((resolve, reject) => {
      const body = JSON.stringify(modernBody(1, 'tools/list'));
      const head = Object.entries({ ...modernHeaders('tools/list'), authorization: `Bearer ${token}`, 'content-length': String(Buffer.byteLength(body)) })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(`POST ${a} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n${head}\r\n${body}`),
      );
      let got = '';
      socket.setEncoding('latin1').on('data', (d: string) => (got += d));
      socket.on('end', () => resolve(got)).on('error', reject);
    });
  const refused = await raw(foreign);
  assert.match(refused, /^HTTP\/1\.1 401 /, refused.slice(0, 200));
  assert.ok(refused.includes(`resource_metadata="${prmA}"`), refused.slice(0, 400));
  assert.match(await raw(own), /^HTTP\/1\.1 200 /);
});
