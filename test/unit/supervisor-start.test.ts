// The supervisor's first attempt: a failed start() marks the upstream down and neither logs nor
// retries until the caller calls beginReconnects() (the runtime decides when: docs/operations.md,
// "Upstream health"). It was an option, `deferReconnect`; the form without it (log and retry at
// once) was used by nothing and is gone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import type { Upstream } from '../../src/core/upstream.js';
import { superviseUpstream } from '../../src/upstreams/supervisor.js';

test('a failed first attempt: down, not logged and not retried until beginReconnects(), which does it once', async () => {
  const lines: string[] = [];
  const log = {
    debug() {},
    info: (_o: unknown, m: string) => lines.push(m),
    warn: (_o: unknown, m: string) => lines.push(m),
    error: (_o: unknown, m: string) => lines.push(m),
  };
  let starts = 0;
  // An upstream that cannot be reached, at the first attempt and every one after.
  const unreachable = () =>
    ({
      name: 'gone',
      start: async () => {
        starts++;
        throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'connect ECONNREFUSED' });
      },
      close: async () => {},
    }) as unknown as Upstream;
  const supervised = superviseUpstream({
    name: 'gone',
    transport: 'http',
    create: unreachable,
    limits: { upstreamBackoffMinMs: 10, upstreamBackoffMaxMs: 10, upstreamBreakerFailures: 5, upstreamBreakerCooldownMs: 1_000 },
    log,
  });
  await assert.rejects(supervised.start(), { code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', message: 'Upstream unavailable: connect ECONNREFUSED' });
  assert.equal(supervised.state, 'down');
  assert.equal(supervised.lastError, 'Upstream unavailable: connect ECONNREFUSED');
  // Twenty backoff delays pass: nothing logged, no second attempt.
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual([starts, lines], [1, []]);

  supervised.beginReconnects();
  supervised.beginReconnects();
  const retried = new Promise<void>((resolve) => {
    const poll = () => (starts >= 2 ? resolve() : setTimeout(poll, 10));
    poll();
  });
  await retried;
  assert.deepEqual(lines.slice(0, 2), ['upstream down', 'upstream reconnecting']);
  assert.equal(lines.filter((m) => m === 'upstream down').length, 1);
  await supervised.close();
});
