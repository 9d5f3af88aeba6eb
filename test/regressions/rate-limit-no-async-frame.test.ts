// The rate limiter was an async function: every request of an upstream with `rateLimits` paid an
// async function's promise and an await per limit, though the default in-memory bucket store
// decides at once (found by review: the request hot path must add no async frames). Now a store
// that answers at once is not waited for, and the upstream's own promise comes back through the
// limiter; a store that answers with a promise (Redis) is still waited for, in order. Counted with
// async_hooks (promises the limiter makes, not the upstream), over the real embedded demo.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compose } from '../../src/core/interceptor.js';
import { SwitchyardError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/message.js';
import { createMemoryBucketStore, createRateLimiter, type BucketStore } from '../../src/policy/index.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { demoContext, promiseCounting } from '../helpers/request-context.js';

const bob = { issuer: 'https://issuer.test', subject: 'bob', scopes: [], claims: {}, source: 'jwt' as const };
const echo = (message: string) => demoContext('tools/call', { name: 'echo', arguments: { message } }, { identity: bob });
const LIMITS = [
  { name: 'per-user', per: 'principal' as const, ratePerSec: 1, burst: 2 },
  { name: 'per-tool', per: 'principal+tool' as const, ratePerSec: 1, burst: 5 },
];

test('with the in-memory bucket store, a request gets the upstream promise itself through the rate limiter; an empty bucket is refused as a rejection', async (t) => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  t.after(() => demo.close());
  const counting = promiseCounting((ctx) => demo.request(ctx));
  const dispatch = compose(counting.counted, [
    createRateLimiter({ rateLimits: LIMITS, store: createMemoryBucketStore({ maxBuckets: 10 }), now: () => 1_700_000_000_000 }),
  ]);

  for (const message of ['one', 'two']) {
    const r = await counting.count(dispatch, echo(message));
    assert.deepEqual([r.same, r.made], [true, 0], message);
    assert.deepEqual(r.result.content, [{ type: 'text', text: `Echo: ${message}` }]);
  }
  // The per-user bucket (burst 2) is empty: refused as a rejection (not a synchronous throw), the upstream not called.
  counting.forget();
  let p: Promise<JsonObject> | undefined;
  assert.doesNotThrow(() => (p = dispatch(echo('three'))));
  await assert.rejects(p!, (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_RATE_LIMITED' && err.status === 429);
  assert.equal(counting.last(), undefined);
});

test('a bucket store that answers with a promise is waited for, limit by limit in config order, and its refusal stops the request', async (t) => {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  t.after(() => demo.close());
  const memory = createMemoryBucketStore({ maxBuckets: 10 });
  const asked: string[] = [];
  // A shared store's shape (as Redis's): every take answers later.
  const later: BucketStore = {
    take: (key, ...rest) =>
      new Promise((resolve) =>
        setImmediate(() => {
          asked.push(key.split('@')[0]);
          resolve(memory.take(key, ...rest));
        }),
      ),
  };
  let upstreamCalls = 0;
  const dispatch = compose(
    (ctx) => {
      upstreamCalls++;
      return demo.request(ctx);
    },
    [createRateLimiter({ rateLimits: LIMITS, store: later, now: () => 1_700_000_000_000 })],
  );
  assert.deepEqual((await dispatch(echo('one'))).content, [{ type: 'text', text: 'Echo: one' }]);
  assert.deepEqual(asked, ['per-user', 'per-tool']);
  await dispatch(echo('two'));
  await assert.rejects(dispatch(echo('three')), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_RATE_LIMITED');
  // The third request stopped at the first empty bucket: per-tool was not asked for it.
  assert.deepEqual(asked, ['per-user', 'per-tool', 'per-user', 'per-tool', 'per-user']);
  assert.equal(upstreamCalls, 2);
});
