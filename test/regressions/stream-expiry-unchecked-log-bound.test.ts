// Each open stream past its token's exp is checked again every EXPIRED_RECHECK_MS (5 s) while the
// authorization server cannot be asked, and each undecided check wrote "open stream kept: its
// credential could not be checked" at warn: with many streams and the issuer down, a line per
// stream every 5 s. The checks at expiry now write at most one such line a minute per mount, with
// the count of undecided checks since the line before (`unchecked`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { EXPIRED_UNCHECKED_LOG_INTERVAL_MS } from '../../src/core/open-streams.js';
import { gatewayFromConfig } from '../helpers/identity.js';
import { openTokenListens } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';
import { listenForTest } from '../helpers/stub-http.js';

const UNCHECKED = 'open stream kept: its credential could not be checked';
/** Listens open at once, each with its own opaque token. */
const N = 10;

test('ten listens past exp while introspection answers 500: one unchecked line a minute per mount, counting every undecided check', async (t) => {
  const state = { mode: 'active' as 'active' | '500' | 'inactive', audience: '', exp: 0, failed: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (state.mode === '500') {
        state.failed++;
        return void res.writeHead(500).end();
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(state.mode === 'inactive' ? { active: false } : { active: true, sub: 'alice', aud: state.audience, exp: state.exp }));
    });
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  const gw = await gatewayFromConfig(t, {
    auth: {
      bearer: {
        issuer: 'http://127.0.0.1:1',
        timeoutMs: 3000,
        clockToleranceSec: 0,
        introspection: { clientId: 'rs', clientSecret: 's', endpoint, cacheMaxMs: 0 },
      },
    },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  state.audience = url;
  state.exp = Math.floor(Date.now() / 1000) + 2;
  const listens = await openTokenListens(t, url, N);
  state.mode = '500';
  const lines = () => gw.records.filter((r) => r.msg === UNCHECKED);

  // Two rounds of checks (at exp, then 5 s later): every stream undecided twice, one line. The
  // wait is for a third round's answers: a stream's next check is armed only once the gateway has
  // taken its last one's 500, so by then it has counted every check of the first two rounds (waiting
  // for the second round's 500s alone raced the gateway under load: `unchecked 16` below).
  await until(() => state.failed >= 3 * N, 'three rounds of undecided checks', 45_000);
  await until(() => lines().length >= 1, 'the unchecked line');
  assert.deepEqual(
    lines().map((r) => [r.level, r.kind, r.cause, r.code, r.unchecked]),
    [[40, 'listen', 'expired', 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE', 1]],
  );

  // A minute later (the clock is the only fake: Date, not the timers), the next undecided check
  // writes the second line, counting the ones held back.
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  t.mock.timers.tick(EXPIRED_UNCHECKED_LOG_INTERVAL_MS);
  await until(() => lines().length >= 2, 'the second unchecked line', 30_000);
  const second = lines()[1];
  assert.equal(second.level, 40);
  assert.ok((second.unchecked as number) >= 2 * N, `unchecked ${String(second.unchecked)}`);
  assert.ok((second.unchecked as number) <= state.failed, `unchecked ${String(second.unchecked)} of ${state.failed}`);

  // The streams still end once the token is refused.
  state.mode = 'inactive';
  for (const sse of listens) await sse.ended;
  assert.equal(lines().length, 2);
});
