// A stream whose token reached its expiry while the authorization server could not be asked
// (introspection answering 500) was kept, logged "open stream kept: its credential could not be
// checked", and never checked again: it lived on past its token's exp for as long as the client
// kept it. Such a stream is now checked again every EXPIRED_RECHECK_MS, as one the front door still
// accepts within its clock tolerance is, and ends once the front door refuses the token
// (docs/security.md, "Revoking a key (or changing `auth`)").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gatewayFromConfig } from '../helpers/identity.js';
import { modernBody, modernHeaders, openSse, type SseReader } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';
import { listenForTest } from '../helpers/stub-http.js';

/** Resolves true once `sse` ended, false when it is still open after `ms`. */
const endsWithin = (sse: SseReader, ms: number) =>
  Promise.race([sse.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

test('a listen whose opaque token expires while introspection answers 500 is kept, checked again, and ends once the token is refused', async (t) => {
  const state = { mode: 'active' as 'active' | '500' | 'inactive', audience: '', exp: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (state.mode === '500') return void res.writeHead(500).end();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(state.mode === 'inactive' ? { active: false } : { active: true, sub: 'alice', aud: state.audience, exp: state.exp }));
    });
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: 'http://127.0.0.1:1', timeoutMs: 3000, clockToleranceSec: 0, introspection: { clientId: 'rs', clientSecret: 's', endpoint } } },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  state.audience = url;
  state.exp = Math.floor(Date.now() / 1000) + 2;
  const body = JSON.stringify(modernBody(7, 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
  const sse = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization: 'Bearer opaque-expiring_0123456789' }, body);
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  assert.equal(JSON.parse((await sse.next()).data).method, 'notifications/subscriptions/acknowledged');

  // At exp the authorization server cannot answer: kept, said at warn.
  state.mode = '500';
  await until(() => gw.records.some((r) => r.msg === 'open stream kept: its credential could not be checked'), 'the unchecked line', 15_000);
  const kept = gw.records.find((r) => r.msg === 'open stream kept: its credential could not be checked')!;
  assert.deepEqual([kept.level, kept.kind, kept.cause, kept.code], [40, 'listen', 'expired', 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE']);
  assert.equal(await endsWithin(sse, 0), false, 'kept while undecided');

  // Once it answers again, the token is refused and the listen ends (checked every 5 s).
  state.mode = 'inactive';
  assert.equal(await endsWithin(sse, 15_000), true, 'ended once refused');
  assert.match(sse.raw(), /"id":7,"error":\{"code":-32000,"message":"Unauthorized: invalid access token: inactive"\}/);
  const ended = gw.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes');
  assert.deepEqual(
    ended.map((r) => [r.kind, r.cause, r.code]),
    [['listen', 'expired', 'SWY_ERR_AUTH_INVALID_TOKEN']],
  );
});
