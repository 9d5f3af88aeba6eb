// The list cache as an interceptor over the real embedded demo upstream: what it keys on, when it
// serves, when it forgets, and its bounds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createListCache, type ListCacheOptions } from '../../src/core/list-cache.js';
import type { Dispatch } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';

async function demo(t: { after(fn: () => Promise<void>): void }) {
  const up = createDemoUpstream({ version: '1.0.0' });
  await up.start();
  t.after(() => up.close());
  const calls: string[] = [];
  const base: Dispatch = (ctx) => {
    calls.push(`${ctx.method} ${typeof ctx.params.cursor === 'string' ? ctx.params.cursor : ''}`);
    return up.request(ctx);
  };
  return { calls, base };
}

function ctx(method: string, params: JsonObject = {}, caps: JsonObject = {}): RequestContext {
  return {
    method,
    params,
    protocolVersion: '2026-07-28',
    clientInfo: undefined,
    clientCapabilities: caps,
    logLevel: undefined,
    identity: null,
    upstream: 'demo',
    signal: new AbortController().signal,
    progressToken: undefined,
    onProgress: () => {},
    onLog: () => {},
    ask: undefined,
  };
}

function cache(over: Partial<ListCacheOptions> = {}) {
  let clock = 1_000_000;
  const c = createListCache({ ttlMs: 5_000, maxAgeMs: 600_000, maxEntries: 100, announces: () => true, now: () => clock, ...over });
  return { c, tick: (ms: number) => (clock += ms) };
}

test('a list is fetched once and served from the cache after; other methods pass through', async (t) => {
  const { calls, base } = await demo(t);
  const { c } = cache();
  const d = c.interceptor(base);
  const a = await d(ctx('tools/list'));
  const b = await d(ctx('tools/list'));
  assert.deepEqual(b, a);
  assert.notEqual(b, a, 'served as a copy');
  await d(ctx('tools/call', { name: 'echo', arguments: { message: 'x' } }));
  await d(ctx('tools/call', { name: 'echo', arguments: { message: 'x' } }));
  assert.deepEqual(calls, ['tools/list ', 'tools/call ', 'tools/call ']);
  assert.deepEqual(c.stats, { hits: 1, misses: 1 });
});

test('the key holds the cursor and the client capabilities (in any key order)', async (t) => {
  const { calls, base } = await demo(t);
  const { c } = cache();
  const d = c.interceptor(base);
  await d(ctx('tools/list', {}, { elicitation: {}, sampling: {} }));
  await d(ctx('tools/list', {}, { sampling: {}, elicitation: {} }));
  await d(ctx('tools/list', {}, {}));
  await d(ctx('tools/list', { cursor: 'c1' }, {}));
  assert.deepEqual(calls, ['tools/list ', 'tools/list ', 'tools/list c1']);
});

// Found by a trial (2026-12-04): the key was JSON.stringify with every distinct key as the
// replacer list, so its cost was objects × keys: 20,000 experimental capability keys held the
// event loop for 37.7 s on one tools/list.
test(
  'capabilities with 20,000 keys make one key, in linear time; the same set in another order hits it, another set misses',
  { timeout: 20_000 },
  async (t) => {
    const { calls, base } = await demo(t);
    const { c } = cache();
    const d = c.interceptor(base);
    const names = Array.from({ length: 20_000 }, (_, i) => `k${i}`);
    const caps = (order: string[], extra: string) => ({ experimental: Object.fromEntries(order.map((k) => [k, {}])), sampling: { [extra]: {} } });
    await d(ctx('tools/list', {}, caps(names, 'a')));
    await d(ctx('tools/list', {}, caps([...names].reverse(), 'a')));
    await d(ctx('tools/list', {}, caps(names, 'b')));
    assert.deepEqual(calls, ['tools/list ', 'tools/list ']);
    assert.deepEqual(c.stats, { hits: 1, misses: 2 });
  },
);

test('invalidate drops a method of an upstream; a fetch that raced an invalidation is not stored', async (t) => {
  const { calls, base } = await demo(t);
  const { c } = cache();
  const d = c.interceptor(base);
  await d(ctx('tools/list'));
  await d(ctx('prompts/list'));
  c.invalidate('demo', 'tools/list');
  await d(ctx('tools/list'));
  await d(ctx('prompts/list'));
  assert.deepEqual(calls, ['tools/list ', 'prompts/list ', 'tools/list ']);
  // An invalidation while a fetch is under way: that (older) answer must not be kept.
  const slow: Dispatch = async (x) => {
    const r = await base(x);
    c.invalidate('demo');
    return r;
  };
  const d2 = c.interceptor(slow);
  c.invalidate('demo');
  await d2(ctx('resources/list'));
  await d2(ctx('resources/list'));
  assert.equal(calls.filter((x) => x.startsWith('resources/list')).length, 2);
});

test('a list whose upstream announces no changes lives ttlMs and says the time left; ttlMs 0 caches nothing', async (t) => {
  const { calls, base } = await demo(t);
  const { c, tick } = cache({ announces: () => false });
  const d = c.interceptor(base);
  await d(ctx('prompts/list'));
  tick(2_000);
  const r = await d(ctx('prompts/list'));
  assert.equal(r.ttlMs, 3_000);
  tick(3_000);
  await d(ctx('prompts/list'));
  assert.deepEqual(calls, ['prompts/list ', 'prompts/list ']);
  const off = cache({ announces: () => false, ttlMs: 0 }).c.interceptor(base);
  await off(ctx('prompts/list'));
  await off(ctx('prompts/list'));
  assert.equal(calls.length, 4);
});

test('for an upstream that announces no changes, its own ttlMs caps the life of a list (the demo lists resources with ttlMs 60000)', async (t) => {
  const { calls, base } = await demo(t);
  const { c, tick } = cache({ announces: () => false, ttlMs: 600_000 });
  const d = c.interceptor(base);
  const first = await d(ctx('resources/list'));
  assert.equal(first.ttlMs, 60_000);
  tick(59_000);
  assert.equal((await d(ctx('resources/list'))).ttlMs, 1_000);
  tick(1_000);
  await d(ctx('resources/list'));
  assert.deepEqual(calls, ['resources/list ', 'resources/list ']);
});

test('concurrent misses for one key go upstream once', async (t) => {
  const { calls, base } = await demo(t);
  const { c } = cache();
  const d = c.interceptor(base);
  const all = await Promise.all(Array.from({ length: 20 }, () => d(ctx('tools/list'))));
  assert.equal(calls.length, 1);
  for (const r of all) assert.deepEqual(r, all[0]);
});

test('bounded: at most maxEntries lists, the least recently used dropped; bypassed upstreams are never cached', async (t) => {
  const { calls, base } = await demo(t);
  const { c } = cache({ maxEntries: 2 });
  const d = c.interceptor(base);
  for (const cursor of ['a', 'b', 'c']) await d(ctx('tools/list', { cursor }));
  assert.equal(c.size, 2);
  await d(ctx('tools/list', { cursor: 'a' }));
  assert.equal(calls.length, 4);
  const bypassed = cache({ bypass: () => true }).c.interceptor(base);
  await bypassed(ctx('tools/list'));
  await bypassed(ctx('tools/list'));
  assert.equal(calls.length, 6);
});

test('a list whose upstream announces changes lives until it does (or maxAgeMs), whatever its own ttlMs says', async (t) => {
  const { calls, base } = await demo(t);
  const { c, tick } = cache({ maxAgeMs: 100_000 });
  const d = c.interceptor(base);
  await d(ctx('resources/list'));
  tick(99_000);
  assert.equal((await d(ctx('resources/list'))).ttlMs, 60_000, "the upstream's own hint is passed on unchanged");
  tick(1_000);
  await d(ctx('resources/list'));
  assert.deepEqual(calls, ['resources/list ', 'resources/list ']);
});
