// SWY_ERR_AUTH_INTROSPECTION_BUSY is an internal fault (the gateway's own bound), so every refused
// request wrote an error line `authentication failed`: a flood of new opaque tokens while
// `introspection.maxConcurrent` POSTs were held wrote one line per request. The refusal is now
// logged as the admin listener logs the connections it refuses: at most one line a minute
// (INTROSPECTION_BUSY_LOG_INTERVAL_MS), with `refused`, the count since the last line (src/core/interval-line.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { INTROSPECTION_BUSY_LOG_INTERVAL_MS } from '../../src/auth/authenticate.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';
import { until } from '../helpers/replicas.js';
import { listenForTest } from '../helpers/stub-http.js';

test('N requests refused SWY_ERR_AUTH_INTROSPECTION_BUSY write one line, counting the refusals, and every client still gets its 503', async (t) => {
  // An introspection endpoint that holds every POST: the one place (maxConcurrent 1) stays taken.
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  t.after(async () => {
    for (const res of held) res.destroy();
  });
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: 'http://127.0.0.1:1', timeoutMs: 30_000, introspection: { clientId: 'rs', clientSecret: 's', endpoint, maxConcurrent: 1 } } },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const first = modernCall(url, 1, 'tools/list', {}, 'Bearer held-token_0123456789');
  first.catch(() => undefined);
  await until(() => held.length === 1, 'the held introspection POST');

  const N = 25;
  for (let i = 0; i < N; i++) {
    const r = await modernCall(url, 100 + i, 'tools/list', {}, `Bearer flood-${i}_0123456789`);
    assert.equal(r.status, 503);
    assert.equal(r.headers['retry-after'], '1');
  }
  const busy = gw.records.filter((r) => r.code === 'SWY_ERR_AUTH_INTROSPECTION_BUSY');
  assert.deepEqual(
    busy.map((r) => ({ level: r.level, msg: r.msg, refused: r.refused, status: r.status })),
    [{ level: 50, msg: 'authentication failed', refused: 1, status: 503 }],
    'one line for the first refusal; the next 24 fall within the minute',
  );
  // The line names the mount and the token only by its SHA-256, as every refusal line does.
  assert.equal(typeof busy[0].tokenSha256, 'string');
  assert.equal(busy[0].resource, url);
  // Nothing else was logged per refused request.
  assert.deepEqual(
    gw.records.filter((r) => r.msg !== 'authentication failed' && JSON.stringify(r).includes('flood-')),
    [],
  );

  // A minute later (the clock is the only fake: Date, not the timers), the next refusal writes the
  // second line, counting itself and the 24 the first minute held back.
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  t.mock.timers.tick(INTROSPECTION_BUSY_LOG_INTERVAL_MS);
  const late = await modernCall(url, 200, 'tools/list', {}, 'Bearer flood-late_0123456789');
  assert.equal(late.status, 503);
  assert.deepEqual(
    gw.records.filter((r) => r.code === 'SWY_ERR_AUTH_INTROSPECTION_BUSY').map((r) => r.refused),
    [1, N],
  );
});
