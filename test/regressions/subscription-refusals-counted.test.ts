// A listen stream (2026-07-28 subscriptions/listen) refused by a bound, the client's share
// (SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT, 429) or the mount's (SWY_ERR_SUBSCRIPTION_LIMIT, 503), was
// answered but not counted in switchyard_refusals_total nor listed in /status.json's refusals,
// while the refusals of every other bound are (reported by h-small). Executor.subscribe now counts
// every subscription it refuses for a bound, the upstream's own included, on every door.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { configGateway, countedRefusals, getText } from '../helpers/ops.js';

/** Opens a listen; returns its status, and closes it when the test ends. */
async function listen(t: { after(fn: () => void): void }, url: string, id: number): Promise<number> {
  const res = await request(url, {
    method: 'POST',
    body: JSON.stringify(modernBody(id, 'subscriptions/listen', { notifications: { toolsListChanged: true } })),
    headers: modernHeaders('subscriptions/listen'),
  });
  if (String(res.headers['content-type']).startsWith('text/event-stream')) t.after(() => void res.body.destroy());
  else await res.body.dump();
  return res.statusCode;
}

for (const [limits, code, status] of [
  [{ maxSubscriptionsPerClient: 1 }, 'SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT', 429],
  [{ maxSubscriptions: 1 }, 'SWY_ERR_SUBSCRIPTION_LIMIT', 503],
] as const) {
  test(`a listen refused with ${code} is counted once, with its mount and dialect`, async (t) => {
    const gw = await configGateway(t, { admin: { port: 0 }, limits, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
    const admin = gw.admin!.address().url;
    assert.deepEqual([await listen(t, gw.url, 1), await listen(t, gw.url, 2)], [200, status]);
    const exposition = (await getText(`${admin}metrics`)).text;
    assert.deepEqual(countedRefusals(exposition), [[{ code, mount: 'demo', dialect: '2026-07-28' }, 1]]);
    const refusals = ((await getText(`${admin}status.json`)).json as { refusals: Array<{ code: string }> }).refusals;
    assert.deepEqual(
      refusals.map((r) => r.code),
      [code],
    );
  });
}
