// With RFC 7662 introspection on, N concurrent requests carrying the same new opaque token made N
// POSTs to the authorization server, and distinct tokens made as many concurrent POSTs as callers
// sent (docs/security.md said "no bound on concurrent introspection yet"). Concurrent requests
// with one token now share one POST (keyed by its SHA-256, forgotten once answered or failed),
// and at most `introspection.maxConcurrent` POSTs are in flight: one more distinct token is
// refused at once with 503 SWY_ERR_AUTH_INTROSPECTION_BUSY and `Retry-After: 1`, never 401.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createBearerVerifier } from '../../src/auth/bearer.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { gatewayFromConfig, modernCall, refusalBody } from '../helpers/identity.js';
import { until } from '../helpers/replicas.js';
import { listenForTest } from '../helpers/stub-http.js';

/**
 * An introspection endpoint on 127.0.0.1 that holds every POST until `answer` (or forever, for a
 * timeout), then answers each held one: `active` (every token active for `audience`, 10 minutes
 * left) or `500`. `tokens` lists the token of every POST received, in order.
 */
async function heldIntrospection(t: { after(fn: () => Promise<void>): void }) {
  const held: Array<{ res: http.ServerResponse; token: string }> = [];
  const tokens: string[] = [];
  const state = { audience: '' };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const token = new URLSearchParams(text).get('token') ?? '';
      tokens.push(token);
      held.push({ res, token });
    });
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  return {
    endpoint,
    tokens,
    state,
    /** Answers every POST held now. */
    answer(how: 'active' | '500') {
      for (const { res } of held.splice(0)) {
        if (how === '500') res.writeHead(500).end();
        else {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ active: true, sub: 'alice', aud: state.audience, exp: Math.floor(Date.now() / 1000) + 600, scope: 'mcp:read' }));
        }
      }
    },
    /** Drops every POST held now without an answer (the gateway timed out on them). */
    forget() {
      held.splice(0);
    },
  };
}

async function gatewayWith(t: { after(fn: () => Promise<void>): void }, endpoint: string, introspection: Record<string, unknown> = {}, timeoutMs?: number) {
  const gw = await gatewayFromConfig(t, {
    auth: {
      bearer: {
        issuer: 'http://127.0.0.1:1',
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        introspection: { clientId: 'rs', clientSecret: 's', endpoint, ...introspection },
      },
    },
    upstreams: { demo: { transport: 'embedded' } },
  });
  return gw.urls[0];
}

const call = (url: string, id: number, token: string) => modernCall(url, id, 'tools/list', {}, `Bearer ${token}`);
const outcome = (r: { status: number; headers: Record<string, unknown>; json: unknown }) => ({
  status: r.status,
  retryAfter: r.headers['retry-after'],
  wwwAuthenticate: r.headers['www-authenticate'],
  error: (r.json as { error?: unknown }).error,
});
const BUSY = {
  status: 503,
  retryAfter: '1',
  wwwAuthenticate: undefined,
  error: (refusalBody('Authorization server busy: too many introspection requests in flight') as { error: unknown }).error,
};

test('20 concurrent requests with one new opaque token make one introspection POST, and all are served', async (t) => {
  const as = await heldIntrospection(t);
  const url = await gatewayWith(t, as.endpoint);
  as.state.audience = url;
  const token = 'opaque-single-flight_0123456789';
  const replies = Array.from({ length: 20 }, (_, i) => call(url, i + 1, token));
  // Without sharing, all 20 reach the endpoint while the first is held; with it, one does and the
  // others wait on it (or, arriving after the answer, find it cached).
  await until(() => as.tokens.length >= 1, 'the first introspection POST');
  await until(() => as.tokens.length >= 20, 'further POSTs', 1_000).catch(() => undefined);
  as.answer('active');
  const got = await Promise.all(replies);
  assert.deepEqual(
    got.map((r) => r.status),
    Array(20).fill(200),
  );
  assert.deepEqual(as.tokens, [token]);
});

test('at most maxConcurrent introspection POSTs are in flight: the next distinct token gets 503 SWY_ERR_AUTH_INTROSPECTION_BUSY, and the bound frees up after answers, 500s and timeouts', async (t) => {
  const as = await heldIntrospection(t);
  // timeoutMs 3,000: long enough that no held POST times out before it is answered on purpose.
  const url = await gatewayWith(t, as.endpoint, { maxConcurrent: 4 }, 3000);
  as.state.audience = url;
  let id = 0;
  const fill = async (prefix: string) => {
    const tokens = [1, 2, 3, 4].map((i) => `${prefix}-token-${i}_0123456789`);
    const replies = tokens.map((tk) => call(url, ++id, tk));
    await until(() => tokens.every((tk) => as.tokens.includes(tk)), `4 POSTs for ${prefix}`);
    return { tokens, replies };
  };

  // At the limit: four held, a fifth and sixth distinct token are refused at once, as an overload, not an invalid token.
  const first = await fill('a');
  const joiner = call(url, ++id, first.tokens[0]);
  assert.deepEqual(outcome(await call(url, ++id, 'a-token-5_0123456789')), BUSY);
  assert.deepEqual(outcome(await call(url, ++id, 'a-token-6_0123456789')), BUSY);
  assert.equal(as.tokens.length, 4, 'the refused tokens never reached the endpoint');
  as.answer('active');
  assert.deepEqual(
    (await Promise.all([...first.replies, joiner])).map((r) => r.status),
    [200, 200, 200, 200, 200],
  );
  assert.equal(as.tokens.length, 4, 'the fifth request with a held token shared its POST');

  // Failures (a 500, a timeout) free their places too.
  const failing = await fill('b');
  as.answer('500');
  const unavailable = {
    status: 503,
    retryAfter: '10',
    wwwAuthenticate: undefined,
    error: (refusalBody('Authorization server unavailable: introspection answered 500') as { error: unknown }).error,
  };
  assert.deepEqual((await Promise.all(failing.replies)).map(outcome), Array(4).fill(unavailable));
  const timingOut = await fill('c');
  as.forget();
  assert.deepEqual(
    (await Promise.all(timingOut.replies)).map(outcome),
    Array(4).fill({ ...unavailable, error: { code: -32000, message: 'Authorization server unavailable: introspection: timed out after 3000 ms' } }),
  );
  assert.equal(as.tokens.length, 12);

  // Four places again: four new tokens (one that failed before among them, asked anew) are all introspected and served.
  const again = ['b-token-2_0123456789', 'd-token-2_0123456789', 'd-token-3_0123456789', 'd-token-4_0123456789'];
  const replies = again.map((tk) => call(url, ++id, tk));
  await until(() => again.every((tk) => as.tokens.includes(tk)), 'four POSTs after the failures');
  as.answer('active');
  assert.deepEqual(
    (await Promise.all(replies)).map((r) => r.status),
    [200, 200, 200, 200],
  );
  assert.equal(as.tokens.length, 16);
});

test('verifications of one token waiting on the same POST all get its failure, which is not remembered', async (t) => {
  const as = await heldIntrospection(t);
  const resource = { uri: 'http://127.0.0.1:1/mcp', prmUrl: 'http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp' };
  as.state.audience = resource.uri;
  const verifier = createBearerVerifier({ issuer: 'http://127.0.0.1:1', introspection: { clientId: 'rs', clientSecret: 's', endpoint: as.endpoint } });
  const token = 'opaque-shared-failure_0123456789';
  const settle = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (err: unknown) => (err instanceof SwitchyardError ? { code: err.code, status: err.status, message: err.message, headers: err.headers } : err),
    );
  // Started in one tick: each reaches the shared POST before any I/O.
  const waiting = [1, 2, 3].map(() => settle(verifier.verify(token, resource)));
  await until(() => as.tokens.length >= 1, 'the introspection POST');
  as.answer('500');
  assert.deepEqual(
    await Promise.all(waiting),
    Array(3).fill({
      code: 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE',
      status: 503,
      message: 'Authorization server unavailable: introspection answered 500',
      headers: { 'Retry-After': '10' },
    }),
  );
  assert.deepEqual(as.tokens, [token]);
  // Asked again, not answered from a remembered failure; the answer is then shared and cached.
  const next = [1, 2].map(() => verifier.verify(token, resource));
  await until(() => as.tokens.length >= 2, 'a second POST');
  as.answer('active');
  assert.deepEqual(
    (await Promise.all(next)).map((id) => id.subject),
    ['alice', 'alice'],
  );
  assert.equal((await verifier.verify(token, resource)).subject, 'alice');
  assert.deepEqual(as.tokens, [token, token]);
});

// Documented choice (docs/security.md, docs/config.md `cacheMaxMs`): sharing a POST in flight is
// not caching. With `cacheMaxMs: 0` requests that arrive while a token's POST is in flight still
// wait on it and get its answer; once answered, the next request asks again.
test('cacheMaxMs 0: verifications arriving while the POST is in flight share its answer; the next one after it asks again', async (t) => {
  const as = await heldIntrospection(t);
  const resource = { uri: 'http://127.0.0.1:1/mcp', prmUrl: 'http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp' };
  as.state.audience = resource.uri;
  const verifier = createBearerVerifier({
    issuer: 'http://127.0.0.1:1',
    introspection: { clientId: 'rs', clientSecret: 's', endpoint: as.endpoint, cacheMaxMs: 0 },
  });
  const token = 'opaque-uncached-shared_0123456789';
  const first = verifier.verify(token, resource);
  await until(() => as.tokens.length >= 1, 'the introspection POST');
  // Arriving while it is held: joined, no second POST.
  const joined = [1, 2].map(() => verifier.verify(token, resource));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(as.tokens, [token]);
  as.answer('active');
  assert.deepEqual(
    (await Promise.all([first, ...joined])).map((id) => id.subject),
    ['alice', 'alice', 'alice'],
  );
  // Nothing kept: the next verification is a new POST.
  const next = verifier.verify(token, resource);
  await until(() => as.tokens.length >= 2, 'a second POST');
  as.answer('active');
  assert.equal((await next).subject, 'alice');
  assert.deepEqual(as.tokens, [token, token]);
});
