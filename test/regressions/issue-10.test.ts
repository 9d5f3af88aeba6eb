// The acceptance lines of "Identity and policy", as written: a gateway whose config sets
// auth.bearer.issuer to a running authorization server, with server-everything as upstream `ev`.
// See 2025-11-25 basic/authorization; RFC 9728 §3, §5.1; RFC 6750 §3.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startAuthServer, type AuthServer } from '../fixtures/auth-server.js';
import { forge, unsigned } from '../helpers/oauth.js';
import {
  AUTH_CLIENT_KINDS,
  connectWithToken,
  everythingUpstream,
  gatewayFromConfig,
  modernCall,
  openSession,
  refusalBody,
  sessionHeaders,
  type ConfigGateway,
} from '../helpers/identity.js';
import { post } from '../helpers/http.js';

const NO_SUMS_FOR_BOB = {
  default: 'allow',
  rules: [{ name: 'no-sums-for-bob', effect: 'deny', when: "principal.sub == 'bob' && component.kind == 'tool' && component.name == 'get-sum'" }],
};

async function setup(
  t: { after(fn: () => Promise<void>): void },
  extra: Record<string, unknown> = {},
): Promise<{ as: AuthServer; gw: ConfigGateway; url: string; origin: string }> {
  const as = await startAuthServer(t, { machines: ['alice', 'bob'] });
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer } },
    dialects: { legacySse: true },
    upstreams: { ev: everythingUpstream() },
    ...extra,
  });
  const url = gw.urls[0];
  return { as, gw, url, origin: new URL(url).origin };
}

test('acceptance 1: a POST without a token gets 401 naming the PRM, which names the resource and the issuer', async (t) => {
  const { as, url, origin } = await setup(t);
  assert.equal(url, `${origin}/ev/mcp`);
  const r = await modernCall(url, 1, 'tools/list', {});
  assert.equal(r.status, 401);
  assert.equal(r.headers['www-authenticate'], `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/ev/mcp"`);
  assert.deepEqual(r.json, refusalBody('Unauthorized: an access token is required'));

  for (const path of ['/.well-known/oauth-protected-resource/ev/mcp', '/.well-known/oauth-protected-resource']) {
    const res = await request(`${origin}${path}`);
    assert.equal(res.statusCode, 200, path);
    assert.equal(res.headers['content-type'], 'application/json', path);
    assert.deepEqual(await res.body.json(), { resource: `${origin}/ev/mcp`, authorization_servers: [as.issuer], bearer_methods_supported: ['header'] }, path);
  }
});

test("acceptance 2: a client-credentials token lists and calls through every era's client; other audiences, expired and unsigned tokens get 401", async (t) => {
  const { as, url, origin } = await setup(t);
  const token = await as.clientCredentialsToken(url);
  for (const kind of AUTH_CLIENT_KINDS) {
    const client = await connectWithToken(kind, url, token);
    const { tools } = await client.listTools();
    assert.ok(
      tools.some((x) => x.name === 'get-sum'),
      kind,
    );
    const r = await client.callTool('get-sum', { a: 2, b: 3 });
    assert.deepEqual(r.content, [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }], kind);
    await client.close();
  }

  const prm = `${origin}/.well-known/oauth-protected-resource/ev/mcp`;
  const now = Math.floor(Date.now() / 1000);
  const refused = {
    'audience mismatch': await as.clientCredentialsToken('http://127.0.0.1:1/other/mcp'),
    expired: await forge(as.privateJwk, { iss: as.issuer, sub: 'alice', aud: url, iat: now - 3600, exp: now - 600, client_id: 'alice' }),
    'signing algorithm not accepted': unsigned({ iss: as.issuer, sub: 'alice', aud: url, iat: now, exp: now + 600 }, as.privateJwk.kid),
  };
  for (const [reason, bad] of Object.entries(refused)) {
    const r = await modernCall(url, 2, 'tools/list', {}, `Bearer ${bad}`);
    assert.equal(r.status, 401, reason);
    assert.equal(r.headers['www-authenticate'], `Bearer resource_metadata="${prm}", error="invalid_token", error_description="${reason}"`, reason);
    assert.deepEqual(r.json, refusalBody(`Unauthorized: invalid access token: ${reason}`), reason);
  }
});

test('acceptance 3: a policy denying get-sum to bob hides it from his list and refuses his call in-band; alice calls it; no client token reaches the upstream', async (t) => {
  const { as, url, gw } = await setup(t, { policy: NO_SUMS_FOR_BOB });
  const bob = `Bearer ${await as.clientCredentialsToken(url, undefined, 'bob')}`;
  const aliceToken = await as.clientCredentialsToken(url, undefined, 'alice');
  const alice = `Bearer ${aliceToken}`;

  const listOf = async (authorization: string) => {
    const r = await modernCall(url, 1, 'tools/list', {}, authorization);
    assert.equal(r.status, 200);
    return ((r.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((x) => x.name);
  };
  const bobs = await listOf(bob);
  const alices = await listOf(alice);
  assert.ok(!bobs.includes('get-sum'));
  assert.ok(alices.includes('get-sum'));
  assert.deepEqual(
    alices.filter((n) => n !== 'get-sum'),
    bobs,
  );

  const denied = await modernCall(url, 2, 'tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 } }, bob);
  assert.equal(denied.status, 200);
  assert.deepEqual(denied.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32010, message: 'Forbidden by policy: tool get-sum', data: { kind: 'tool', name: 'get-sum' } },
  });
  const code = (denied.json as { error: { code: number } }).error.code;
  assert.ok(code <= -32000 && code >= -32099);

  const ok = await modernCall(url, 3, 'tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 } }, alice);
  assert.equal(ok.status, 200);
  assert.deepEqual((ok.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'The sum of 1 and 2 is 3.' }]);

  // The stdio child's whole environment: the client's token is nowhere in it.
  const env = await modernCall(url, 4, 'tools/call', { name: 'get-env', arguments: {} }, alice);
  assert.equal(env.status, 200);
  assert.ok(env.text.includes('PATH'));
  assert.ok(!env.text.includes(aliceToken));

  // One audit line per decision, naming the principal, the component, the decision and the rule.
  const line = (sub: string, name: string, decision: string, rule: string | null) => ({
    level: 30,
    component: { kind: 'tool', name, upstream: 'ev' },
    principal: { sub, iss: as.issuer },
    method: 'tools/call',
    decision,
    rule,
    msg: 'policy decision',
  });
  assert.deepEqual(
    gw.records.filter((r) => r.msg === 'policy decision'),
    [line('bob', 'get-sum', 'deny', 'no-sums-for-bob'), line('alice', 'get-sum', 'allow', null), line('alice', 'get-env', 'allow', null)],
  );
});

test("acceptance 4: a 2025 session opened with alice's token and used with bob's gets 404", async (t) => {
  const { as, url } = await setup(t);
  const alice = `Bearer ${await as.clientCredentialsToken(url, undefined, 'alice')}`;
  const bob = `Bearer ${await as.clientCredentialsToken(url, undefined, 'bob')}`;
  const sid = await openSession(url, alice);
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const mine = await post(url, list, sessionHeaders(sid, alice));
  assert.equal(mine.status, 200);
  const theirs = await post(url, list, sessionHeaders(sid, bob));
  assert.equal(theirs.status, 404);
  assert.deepEqual(theirs.json, { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Session not found' } });
});
