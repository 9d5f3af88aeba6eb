// Token-bucket rate limits over the real embedded demo upstream, with an injected clock: refusal
// with HTTP 429 and Retry-After, recovery after the refill, per principal and per tool.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError, toRpcError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { compose, type Dispatch } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { createMemoryBucketStore, createRateLimiter, type BucketStore, type RateLimitConfig } from '../../src/policy/index.js';
import { demoContext } from '../helpers/request-context.js';

const who = (subject: string): Identity => ({ issuer: 'https://issuer.test', subject, scopes: [], claims: {}, source: 'jwt' });
const bob = who('bob');
const alice = who('alice');

/** A context as the executor builds it for one upstream call. */
/** The demo's 2026-07-28 request context for `identity` (test/helpers/request-context.ts). */
function ctxOf(method: string, params: JsonObject, identity: Identity | null): RequestContext {
  return demoContext(method, params, { identity, clientInfo: { name: 'policy-test', version: '1.0.0' } });
}

async function demoDispatch(): Promise<Dispatch> {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  return (ctx) => demo.request(ctx);
}

async function errorOf(p: Promise<unknown>): Promise<SwitchyardError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SwitchyardError, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

const echo = (identity: Identity | null) => ctxOf('tools/call', { name: 'echo', arguments: { message: 'x' } }, identity);
const add = (identity: Identity | null) => ctxOf('tools/call', { name: 'add', arguments: { a: 1, b: 1 } }, identity);
const ECHOED = { content: [{ type: 'text', text: 'Echo: x' }] };

async function limited(rateLimits: RateLimitConfig[], store: BucketStore = createMemoryBucketStore({ maxBuckets: 100 })) {
  const clock = { nowMs: 1_700_000_000_000 };
  const chain = compose(await demoDispatch(), [createRateLimiter({ rateLimits, store, now: () => clock.nowMs })]);
  return { chain, clock };
}

test('an empty bucket refuses with 429 and Retry-After, and the principal recovers once it refills', async () => {
  const { chain, clock } = await limited([{ name: 'per-user', per: 'principal', ratePerSec: 2, burst: 2 }]);
  assert.deepEqual(await chain(echo(bob)), ECHOED);
  assert.deepEqual(await chain(ctxOf('tools/list', {}, bob)).then((r) => (r.tools as unknown[]).length), 6);

  const refused = await errorOf(chain(echo(bob)));
  assert.equal(refused.code, 'SWY_ERR_RATE_LIMITED');
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.headers, { 'retry-after': '1' });
  assert.deepEqual(toRpcError(refused), {
    code: -32011,
    message: 'Too many requests: rate limit exceeded: per-user; retry after 1 s',
    data: { limit: 'per-user', retryAfterMs: 500 },
  });
  // Others have their own bucket.
  assert.deepEqual(await chain(echo(alice)), ECHOED);
  assert.deepEqual(await chain(echo(null)), ECHOED);

  clock.nowMs += 499;
  assert.deepEqual((await errorOf(chain(echo(bob)))).data, { limit: 'per-user', retryAfterMs: 1 });
  clock.nowMs += 1;
  assert.deepEqual(await chain(echo(bob)), ECHOED);
  assert.equal((await errorOf(chain(echo(bob)))).code, 'SWY_ERR_RATE_LIMITED');
  // A long idle period refills to the burst, not beyond.
  clock.nowMs += 60_000;
  assert.deepEqual(await chain(echo(bob)), ECHOED);
  assert.deepEqual(await chain(echo(bob)), ECHOED);
  assert.equal((await errorOf(chain(echo(bob)))).code, 'SWY_ERR_RATE_LIMITED');
});

test('Retry-After is whole seconds, rounded up', async () => {
  const { chain } = await limited([{ name: 'slow-lane', per: 'principal', ratePerSec: 0.4, burst: 1 }]);
  await chain(echo(bob));
  const refused = await errorOf(chain(echo(bob)));
  assert.deepEqual(refused.headers, { 'retry-after': '3' });
  assert.deepEqual(refused.data, { limit: 'slow-lane', retryAfterMs: 2_500 });
});

test('per principal+tool: one bucket per tool; a `tools` glob limits which calls count', async () => {
  const { chain } = await limited([
    { name: 'each-tool', per: 'principal+tool', ratePerSec: 1, burst: 2 },
    { name: 'adds', per: 'principal', ratePerSec: 1, burst: 1, tools: ['a?d'] },
  ]);
  assert.deepEqual(await chain(add(bob)), { content: [{ type: 'text', text: '2' }], structuredContent: { sum: 2 } });
  // `adds` is empty for bob; `each-tool` still has a token for add.
  assert.deepEqual((await errorOf(chain(add(bob)))).data, { limit: 'adds', retryAfterMs: 1_000 });
  assert.deepEqual(await chain(echo(bob)), ECHOED);
  assert.deepEqual(await chain(echo(bob)), ECHOED);
  assert.deepEqual((await errorOf(chain(echo(bob)))).data, { limit: 'each-tool', retryAfterMs: 1_000 });
  // Lists are not tool calls: neither limit applies.
  for (let i = 0; i < 3; i++) await chain(ctxOf('tools/list', {}, bob));
  assert.deepEqual(await chain(add(alice)), { content: [{ type: 'text', text: '2' }], structuredContent: { sum: 2 } });
});

test('the memory store is bounded: evicting a bucket forgets its debt', async () => {
  const { chain } = await limited([{ name: 'tight', per: 'principal', ratePerSec: 0.001, burst: 1 }], createMemoryBucketStore({ maxBuckets: 1 }));
  await chain(echo(bob));
  assert.equal((await errorOf(chain(echo(bob)))).code, 'SWY_ERR_RATE_LIMITED');
  // alice's bucket takes the only slot; bob comes back full.
  await chain(echo(alice));
  assert.deepEqual(await chain(echo(bob)), ECHOED);
});

test('bad rate-limit config lists every failing path', () => {
  const store = createMemoryBucketStore({ maxBuckets: 1 });
  try {
    createRateLimiter({
      store,
      rateLimits: [
        { name: 'a', per: 'principal', ratePerSec: 0, burst: 1 },
        { name: 'a', per: 'tool' as never, ratePerSec: 1, burst: 1.5 },
      ],
    });
    assert.fail('expected a config error');
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.deepEqual(err.data, {
      source: 'policy',
      errors: [
        { path: '/rateLimits/0/ratePerSec', message: 'must be >= 0.00001' },
        { path: '/rateLimits/1/per', message: 'must be one of "principal", "principal+tool"' },
        { path: '/rateLimits/1/burst', message: 'must be integer' },
      ],
    });
  }
  try {
    createRateLimiter({
      store,
      rateLimits: [
        { name: 'a', per: 'principal', ratePerSec: 1, burst: 1 },
        { name: 'a', per: 'principal', ratePerSec: 2, burst: 2 },
      ],
    });
    assert.fail('expected a config error');
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.deepEqual(err.data, { source: 'policy', errors: [{ path: '/rateLimits/1/name', message: 'duplicate limit name a (also /rateLimits/0/name)' }] });
  }
});
