// The breaker's own trial (`check`) when its timer fires before the breaker's clock says the
// cool-down is over. Node's timers keep their own clock, and one can fire a millisecond early
// against Date.now(): the trial found the breaker still open and gave up without looking again,
// so an HTTP upstream nobody called stayed down for good (seen as a flaky ops-breaker test in a
// fresh-clone CI run). A clock held still makes the early timer certain.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import type { RequestContext } from '../../src/core/request.js';
import type { Upstream } from '../../src/core/upstream.js';
import { superviseUpstream } from '../../src/upstreams/supervisor.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

test("the breaker's trial looks again when its timer fired before the cool-down ended on the breaker's clock", async () => {
  let clock = 1_000;
  let checks = 0;
  // An upstream whose every call fails as an unreachable server's does.
  const unreachable = {
    name: 'flaky',
    start: async () => {},
    request: async () => {
      throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'connect ECONNREFUSED' });
    },
    close: async () => {},
  } as unknown as Upstream;
  const supervised = superviseUpstream({
    name: 'flaky',
    transport: 'http',
    create: () => unreachable,
    limits: { upstreamBackoffMinMs: 10, upstreamBackoffMaxMs: 10, upstreamBreakerFailures: 1, upstreamBreakerCooldownMs: 20 },
    log: quiet,
    breaker: true,
    check: async () => {
      checks++;
    },
    now: () => clock,
  });
  await supervised.start();
  const ctx = { signal: new AbortController().signal } as unknown as RequestContext;
  await assert.rejects(supervised.request(ctx), { code: 'SWY_ERR_UPSTREAM_UNAVAILABLE' });
  assert.equal(supervised.state, 'down');

  // Several cool-downs of real time pass while the breaker's clock stands still: every timer is early.
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(checks, 0);
  assert.equal(supervised.state, 'down');

  const up = new Promise<string>((resolve) => supervised.onChange((s) => s === 'up' && resolve(s)));
  clock += 20;
  let wait: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (wait = setTimeout(() => resolve(`still ${supervised.state}`), 1_000)));
  assert.equal(await Promise.race([up, late]), 'up');
  clearTimeout(wait);
  assert.equal(checks, 1);
  await supervised.close();
});
