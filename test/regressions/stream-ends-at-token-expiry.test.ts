// A stream opened with a bearer JWT ends when the token expires. It lived on past `exp` for as long
// as the client kept it, delivering notifications on a credential every request was refused with,
// while a client that reconnects must present a fresh token. The mount's open streams are checked
// with the front door at their credential's expiry (and every EXPIRED_RECHECK_MS while the door's
// clock tolerance still accepts it): docs/security.md, "Revoking a key".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthServer } from '../fixtures/auth-server.js';
import { forge } from '../helpers/oauth.js';
import { modernBody, modernHeaders, openSse, type SseReader } from '../helpers/http.js';
import { gatewayFromConfig, openSession } from '../helpers/identity.js';

/** Resolves true once `sse` ended, false when it is still open after `ms`. */
const endsWithin = (sse: SseReader, ms: number) =>
  Promise.race([sse.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

test('a listen and a 2025 GET stream opened with a JWT end at its exp (clockToleranceSec 0); a stream of a longer-lived token stays open', async (t) => {
  const as = await startAuthServer(t);
  const gw = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer, clockToleranceSec: 0 } }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const now = Math.floor(Date.now() / 1000);
  const token = (sub: string, exp: number) => forge(as.privateJwk, { iss: as.issuer, sub, aud: url, iat: now, exp });
  const short = `Bearer ${await token('short', now + 3)}`;
  const long = `Bearer ${await token('long', now + 600)}`;

  const listen = async (authorization: string) => {
    const body = JSON.stringify(modernBody(7, 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
    const sse = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization }, body);
    t.after(() => sse.close());
    assert.equal(sse.status, 200);
    assert.equal(JSON.parse((await sse.next()).data).method, 'notifications/subscriptions/acknowledged');
    return sse;
  };
  const shortListen = await listen(short);
  const longListen = await listen(long);
  const sid = await openSession(url, short);
  const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26', authorization: short });
  t.after(() => get.close());
  assert.equal(get.status, 200);

  // exp is at most 3 s away; the bound leaves room for a loaded machine.
  assert.equal(await endsWithin(shortListen, 20_000), true, 'the short token listen ended');
  assert.equal(await endsWithin(get, 5_000), true, 'the short token GET stream ended');
  assert.ok(Date.now() >= (now + 3) * 1000, 'not before exp');
  assert.match(shortListen.raw(), /"id":7,"error":\{"code":-32000,"message":"Unauthorized: invalid access token: [^"]*"\}/);
  const lines = gw.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes');
  assert.deepEqual(lines.map((r) => [r.kind, r.cause, r.code, (r.principal as { sub: string }).sub]).sort(), [
    ['get', 'expired', 'SWY_ERR_AUTH_INVALID_TOKEN', 'short'],
    ['listen', 'expired', 'SWY_ERR_AUTH_INVALID_TOKEN', 'short'],
  ]);
  assert.equal(await endsWithin(longListen, 0), false, 'the long token listen is open');
});

test('within the clock tolerance the front door still accepts the token, and the stream stays open until it no longer does (no cut-and-reconnect loop)', async (t) => {
  const as = await startAuthServer(t);
  const gw = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer, clockToleranceSec: 2 } }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const now = Math.floor(Date.now() / 1000);
  const authorization = `Bearer ${await forge(as.privateJwk, { iss: as.issuer, sub: 'short', aud: url, iat: now, exp: now + 2 })}`;
  const body = JSON.stringify(modernBody(7, 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
  const sse = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization }, body);
  t.after(() => sse.close());
  assert.equal(JSON.parse((await sse.next()).data).method, 'notifications/subscriptions/acknowledged');
  // Past exp, within the tolerance: a request with the token passes, and the stream is open.
  await new Promise((resolve) => setTimeout(resolve, (now + 2) * 1000 - Date.now() + 300));
  assert.equal(await endsWithin(sse, 0), false, 'open within the tolerance');
  // Refused from exp + 2 s on; checked again every EXPIRED_RECHECK_MS (5 s).
  assert.equal(await endsWithin(sse, 20_000), true, 'ended once refused');
  assert.ok(Date.now() >= (now + 4) * 1000, 'not before exp + the tolerance');
  assert.equal(gw.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes' && r.cause === 'expired').length, 1);
});
