// Regression (an open item of the admission-refusal notes, checked by h-refuse2): a request refused
// by a rate limit (SWY_ERR_RATE_LIMITED, 429) was answered and published as a request, but not
// counted in switchyard_refusals_total nor listed in /status.json's refusals, while admission's
// refusals of a bound are: an operator watching refusals missed rate limiting. The executor now
// counts it by catalogue code, mount and dialect, once per refused request, from either era.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernCall, openSession, sessionHeaders } from '../helpers/identity.js';
import { post } from '../helpers/http.js';
import { configGateway, countedRefusals, getText } from '../helpers/ops.js';

const echo = { name: 'echo', arguments: { message: 'm' } };

test('a rate-limited request is counted once in switchyard_refusals_total and /status.json, per dialect', async (t) => {
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      rateLimits: [{ name: 'echoes', per: 'principal', ratePerSec: 0.001, burst: 1, tools: ['echo'] }],
      upstreams: { demo: { transport: 'embedded' } },
    },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  assert.equal((await modernCall(gw.url, 1, 'tools/call', echo)).status, 200);
  const limited = await modernCall(gw.url, 2, 'tools/call', echo);
  assert.equal(limited.status, 429);
  assert.equal((limited.json as { error: { code: number } }).error.code, -32011);

  const sid = await openSession(gw.url);
  const old = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: echo }, sessionHeaders(sid));
  assert.equal(old.status, 429);
  assert.equal((old.json as { error: { code: number } }).error.code, -32011);

  const exposition = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(countedRefusals(exposition), [
    [{ code: 'SWY_ERR_RATE_LIMITED', mount: 'demo', dialect: '2026-07-28' }, 1],
    [{ code: 'SWY_ERR_RATE_LIMITED', mount: 'demo', dialect: '2025-03-26' }, 1],
  ]);
  const status = (await getText(`${admin}status.json`)).json as { refusals: Array<Record<string, unknown>> };
  assert.deepEqual(
    status.refusals.map(({ code, status: s, mount, dialect }) => ({ code, status: s, mount, dialect })),
    [
      { code: 'SWY_ERR_RATE_LIMITED', status: 429, mount: 'demo', dialect: '2025-03-26' },
      { code: 'SWY_ERR_RATE_LIMITED', status: 429, mount: 'demo', dialect: '2026-07-28' },
    ],
  );
});
