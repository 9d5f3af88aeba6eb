// After a large message, one young-generation collection (src/io/large-message.ts): from the
// threshold on, once per turn of the event loop, never below it, and V8's gc never left on a
// global where the process or a later vm context could call it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { runInNewContext } from 'node:vm';
import { afterLargeMessage, LARGE_MESSAGE_BYTES, largeMessageCollections } from '../../src/io/large-message.js';

const nextTurn = () => new Promise<void>((r) => setImmediate(() => setImmediate(r)));

/** The young-generation collections V8 reports while `fn` runs and one turn after. */
async function minorCollectionsDuring(fn: () => void): Promise<number> {
  const seen: PerformanceEntry[] = [];
  const obs = new PerformanceObserver((list) => seen.push(...list.getEntries()));
  obs.observe({ entryTypes: ['gc'] });
  fn();
  await nextTurn();
  // The observer's callback runs on a later turn than the collection.
  await new Promise((r) => setTimeout(r, 20));
  obs.disconnect();
  return seen.filter((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR).length;
}

test('a message of LARGE_MESSAGE_BYTES or more runs one young-generation collection on the next turn', async () => {
  const before = largeMessageCollections();
  const minors = await minorCollectionsDuring(() => afterLargeMessage(LARGE_MESSAGE_BYTES));
  assert.equal(largeMessageCollections() - before, 1);
  assert.ok(minors >= 1, `V8 reported ${minors} young-generation collections`);
});

test('a message one byte under the threshold runs none', async () => {
  const before = largeMessageCollections();
  afterLargeMessage(LARGE_MESSAGE_BYTES - 1);
  await nextTurn();
  assert.equal(largeMessageCollections() - before, 0);
});

test('the large messages of one turn share one collection; the next turn gets its own', async () => {
  const before = largeMessageCollections();
  for (let i = 0; i < 5; i++) afterLargeMessage(8 * LARGE_MESSAGE_BYTES);
  await nextTurn();
  assert.equal(largeMessageCollections() - before, 1);
  afterLargeMessage(LARGE_MESSAGE_BYTES);
  await nextTurn();
  assert.equal(largeMessageCollections() - before, 2);
});

test('V8 gc is on no global: not the process own, not a vm context made afterwards', async () => {
  afterLargeMessage(LARGE_MESSAGE_BYTES);
  await nextTurn();
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
  assert.equal(runInNewContext('typeof gc'), 'undefined');
});

test('a process started with --expose-gc keeps its flag: its later vm contexts still get gc', async () => {
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const mod = fileURLToPath(new URL('../../src/io/large-message.js', import.meta.url));
  const script = `
    const { afterLargeMessage, LARGE_MESSAGE_BYTES, largeMessageCollections } = await import(${JSON.stringify(mod)});
    afterLargeMessage(LARGE_MESSAGE_BYTES);
    await new Promise((r) => setImmediate(() => setImmediate(r)));
    const { runInNewContext } = await import('node:vm');
    process.stdout.write(JSON.stringify({ runs: largeMessageCollections(), vm: runInNewContext('typeof gc') }));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { runs: 1, vm: 'function' });
});
