// A reload's re-check of open streams made its introspection POSTs through the front door's
// bound (`auth.bearer.introspection.maxConcurrent`) but, at that bound, was refused
// SWY_ERR_AUTH_INTROSPECTION_BUSY like a request: with more opaque-token streams than free
// places, the streams past the bound were kept unchecked ("open stream kept: its credential could
// not be checked"), so a token the authorization server had revoked went on streaming. The
// re-checks now wait for a place under the same bound (first come, first served; freed places go
// to them before new requests), so every stream is decided and the endpoint never sees more than
// `maxConcurrent` POSTs at once (docs/security.md, "Revoking a key (or changing `auth`)").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createBearerVerifier, MAX_INTROSPECTION_WAITERS } from '../../src/auth/bearer.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { gatewayFromConfig, introspectionConfig, reloadFromConfig } from '../helpers/identity.js';
import { modernBody, modernHeaders, openSse, type SseReader } from '../helpers/http.js';
import { listenForTest } from '../helpers/stub-http.js';

/**
 * An introspection endpoint on 127.0.0.1 that answers each POST after `delayMs`: active for
 * `audience` (10 minutes left) until `revoked`, inactive after; it counts the POSTs in flight.
 */
async function slowIntrospection(t: { after(fn: () => Promise<void>): void }, delayMs: number) {
  const state = { audience: '', revoked: false, inFlight: 0, maxInFlight: 0, posts: 0 };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const token = new URLSearchParams(text).get('token') ?? '';
      state.posts++;
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      setTimeout(() => {
        state.inFlight--;
        res.setHeader('content-type', 'application/json');
        const sub = token.slice(0, token.indexOf('_'));
        res.end(JSON.stringify(state.revoked ? { active: false } : { active: true, sub, aud: state.audience, exp: Math.floor(Date.now() / 1000) + 600 }));
      }, delayMs);
    });
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  return { endpoint, state };
}

/** Resolves true once `sse` ended, false when it is still open after `ms`. */
const endsWithin = (sse: SseReader, ms: number) =>
  Promise.race([sse.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

test('a reload re-checks six opaque-token listens through maxConcurrent 2: every one is decided (all end, the tokens revoked), never more than 2 POSTs at once', async (t) => {
  const as = await slowIntrospection(t, 200);
  const configOf = (clockToleranceSec: number) => introspectionConfig(as.endpoint, clockToleranceSec, { maxConcurrent: 2 });
  const gw = await gatewayFromConfig(t, configOf(60));
  const url = gw.urls[0];
  as.state.audience = url;

  const listens: SseReader[] = [];
  for (let i = 1; i <= 6; i++) {
    const body = JSON.stringify(modernBody(i, 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
    const sse = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization: `Bearer user${i}_opaque-token-0123456789` }, body);
    t.after(() => sse.close());
    assert.equal(sse.status, 200);
    assert.equal(JSON.parse((await sse.next()).data).method, 'notifications/subscriptions/acknowledged');
    listens.push(sse);
  }
  assert.equal(as.state.posts, 6);

  // The authorization server revokes every token; a reload that changes the mount's `auth` checks them again.
  as.state.revoked = true;
  as.state.maxInFlight = 0;
  await reloadFromConfig(gw, configOf(30));

  // The reload resolves once every check settled: each listen was decided and ended.
  for (const [i, sse] of listens.entries()) {
    assert.equal(await endsWithin(sse, 5_000), true, `listen ${i + 1} ended`);
    assert.match(sse.raw(), new RegExp(`"id":${i + 1},"error":\\{"code":-32000,"message":"Unauthorized: invalid access token: inactive"\\}`));
  }
  assert.equal(gw.records.filter((r) => r.msg === 'open stream kept: its credential could not be checked').length, 0);
  const ended = gw.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes');
  assert.deepEqual(ended.map((r) => (r.principal as { sub: string }).sub).sort(), ['user1', 'user2', 'user3', 'user4', 'user5', 'user6']);
  assert.equal(as.state.posts, 12);
  assert.equal(as.state.maxInFlight, 2);
});

test('waiting verifications are bounded: MAX_INTROSPECTION_WAITERS wait, one more is refused BUSY at once; a request is still refused BUSY, a freed place goes to the first waiter', async (t) => {
  // Held until released: every POST waits for `release`.
  const held: http.ServerResponse[] = [];
  const order: string[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      order.push(new URLSearchParams(text).get('token') ?? '');
      held.push(res);
    });
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  t.after(() => {
    for (const res of held.splice(0)) res.end();
  });
  const resource = 'http://127.0.0.1:9/mcp';
  const verifier = createBearerVerifier({
    issuer: 'http://127.0.0.1:1',
    timeoutMs: 10_000,
    introspection: { clientId: 'rs', clientSecret: 's', endpoint, maxConcurrent: 1 },
  });
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (err: unknown) => (err instanceof SwitchyardError ? err.code : String(err)),
    );
  const first = outcome(verifier.verify('first_0123456789', resource));
  while (order.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  // The one place is taken: MAX_INTROSPECTION_WAITERS background checks wait, the next one and a request are refused.
  const waiting = Array.from({ length: MAX_INTROSPECTION_WAITERS }, (_, i) =>
    outcome(verifier.verify(`wait${i}_0123456789`, resource, { waitForPlace: true })),
  );
  assert.equal(await outcome(verifier.verify('one-more_0123456789', resource, { waitForPlace: true })), 'SWY_ERR_AUTH_INTROSPECTION_BUSY');
  assert.equal(await outcome(verifier.verify('request_0123456789', resource)), 'SWY_ERR_AUTH_INTROSPECTION_BUSY');
  // The first POST answered (inactive): its place goes to the first waiter, not to a request arriving meanwhile.
  const res = held.shift()!;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ active: false }));
  assert.equal(await first, 'SWY_ERR_AUTH_INVALID_TOKEN');
  while (order.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await outcome(verifier.verify('request-2_0123456789', resource)), 'SWY_ERR_AUTH_INTROSPECTION_BUSY');
  assert.deepEqual(order, ['first_0123456789', 'wait0_0123456789']);
  // Answering each in turn serves every waiter, in order, one POST at a time.
  for (let n = 2; n <= 4; n++) {
    const r = held.shift()!;
    r.setHeader('content-type', 'application/json');
    r.end(JSON.stringify({ active: false }));
    while (order.length < n + 1) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(held.length, 1);
  }
  assert.deepEqual(order.slice(1), ['wait0_0123456789', 'wait1_0123456789', 'wait2_0123456789', 'wait3_0123456789']);
  assert.deepEqual(await Promise.all(waiting.slice(0, 3)), Array(3).fill('SWY_ERR_AUTH_INVALID_TOKEN'));
});
