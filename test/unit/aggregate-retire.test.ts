// AggregateUpstream.retireMember over the real embedded demo, on real timers: every retirement of
// a member waits for the member's calls, however many wait at once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { createAggregateUpstream } from '../../src/upstreams/aggregate.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { demoContext } from '../helpers/request-context.js';

/** Far longer than the call: a retirement still waiting when the call has ended waits for this. */
const GRACE_MS = 20_000;

/** `p`'s outcome, or 'still waiting' when it has not settled within `ms` (ms). */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

// The member's settle slot held one listener: a second retireMember of the same member while the
// first waited replaced the first's, which then waited out its whole grace (and cut nothing).
test('two retirements of one member at once both resolve when its last call ends, nothing cut', async () => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  const aggregate = createAggregateUpstream(new Map([['demo', demo]]), '__', VERSION);
  await aggregate.start();
  const call = aggregate.request(demoContext('tools/call', { name: 'demo__slow', arguments: { steps: 3, stepMs: 100 } }, { mount: 'aggregate' }));
  const why = new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'retired' });
  const first = aggregate.retireMember(demo, GRACE_MS, why).then(() => 'first settled');
  const second = aggregate.retireMember(demo, GRACE_MS, why).then(() => 'second settled');

  assert.deepEqual(await call, { content: [{ type: 'text', text: 'Finished 3 steps.' }] });
  // Both were told of the end: a few seconds is ample, a fraction of the grace either would wait.
  assert.deepEqual(await Promise.all([within(first, 5_000), within(second, 5_000)]), ['first settled', 'second settled']);
  // A retirement of a member with nothing running resolves at once.
  assert.equal(await within(aggregate.retireMember(demo, GRACE_MS, why), 5_000), undefined);
  await aggregate.close();
  await demo.close();
});

test('two retirements of one member whose call outlives the grace: both cut it with the error, and both resolve', async () => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  const aggregate = createAggregateUpstream(new Map([['demo', demo]]), '__', VERSION);
  await aggregate.start();
  const call = aggregate.request(demoContext('tools/call', { name: 'demo__slow', arguments: { steps: 100, stepMs: 200 } }, { mount: 'aggregate' }));
  const failed = call.then(
    () => 'answered',
    (err: unknown) => err,
  );
  const why = new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'retired' });
  await Promise.all([aggregate.retireMember(demo, 100, why), aggregate.retireMember(demo, 200, why)]);
  assert.equal(await failed, why);
  await aggregate.close();
  await demo.close();
});
