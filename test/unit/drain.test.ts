// drainThenCut and settledWithin: wait up to a grace for work to settle, cut what is left, and leave no listener or timer behind.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drainThenCut, settledWithin } from '../../src/core/drain.js';

/**
 * Work of `n` pieces with a settle signal, as the executor, the aggregate and HeldCalls give one:
 * `settle(k)` ends `k` pieces and signals every listener (idle or not).
 */
function pieces(n: number) {
  let left = n;
  const listeners = new Set<() => void>();
  let registered = 0;
  return {
    listeners,
    get left() {
      return left;
    },
    get registered() {
      return registered;
    },
    idle: () => left === 0,
    onSettle: (fn: () => void) => {
      registered++;
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    settle: (k = 1) => {
      left -= k;
      for (const f of [...listeners]) f();
    },
  };
}

/** Timers alive in this process now (a drain's grace timer is one of them while it waits). */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('already idle: settled at once, with no listener, no timer and no cut', async () => {
  const w = pieces(0);
  let cuts = 0;
  const before = timers();
  const drained = drainThenCut({ idle: w.idle, onSettle: w.onSettle, graceMs: 60_000, cut: () => ++cuts });
  assert.equal(timers(), before);
  assert.deepEqual(await drained, { settled: true, cut: 0 });
  assert.equal(w.registered, 0);
  assert.equal(cuts, 0);
});

test('settles before the grace: a signal with work left goes on waiting; the last one ends the wait, nothing is cut, the listener and the timer are gone', async () => {
  const w = pieces(2);
  let cuts = 0;
  const before = timers();
  const drained = drainThenCut({ idle: w.idle, onSettle: w.onSettle, graceMs: 60_000, cut: () => ++cuts });
  assert.equal(w.listeners.size, 1);
  assert.equal(timers(), before + 1);
  w.settle();
  await new Promise((r) => setImmediate(r));
  assert.equal(w.listeners.size, 1, 'one piece left: still waiting');
  w.settle();
  assert.deepEqual(await drained, { settled: true, cut: 0 });
  assert.equal(cuts, 0);
  assert.equal(w.listeners.size, 0);
  assert.equal(timers(), before, 'the 60 s grace timer was cleared');
});

test('the grace ends first: cut is called once, its count is reported, and a settle after the cut reaches nothing', async () => {
  const w = pieces(3);
  w.settle(); // one ends within the grace
  let cuts = 0;
  const before = timers();
  const drained = drainThenCut({
    idle: w.idle,
    onSettle: w.onSettle,
    graceMs: 20,
    cut: () => {
      cuts++;
      // The cut work settles at once, signalling as it does.
      const n = w.left;
      w.settle(n);
      return n;
    },
  });
  assert.equal(w.listeners.size, 1);
  assert.deepEqual(await drained, { settled: false, cut: 2 });
  assert.equal(cuts, 1);
  assert.equal(w.listeners.size, 0, 'the listener was removed before the cut');
  assert.equal(timers(), before);
  w.settle(0); // a late signal
  await new Promise((r) => setImmediate(r));
  assert.equal(cuts, 1);
});

test('graceMs 0: busy work is cut after one timer turn, once; work that settles within the current turn is not', async () => {
  const busy = pieces(1);
  let cuts = 0;
  const before = timers();
  assert.deepEqual(await drainThenCut({ idle: busy.idle, onSettle: busy.onSettle, graceMs: 0, cut: () => ++cuts }), { settled: false, cut: 1 });
  assert.equal(cuts, 1);
  assert.equal(busy.listeners.size, 0);
  assert.equal(timers(), before);

  const quick = pieces(1);
  const drained = drainThenCut({ idle: quick.idle, onSettle: quick.onSettle, graceMs: 0, cut: () => ++cuts });
  queueMicrotask(() => quick.settle());
  assert.deepEqual(await drained, { settled: true, cut: 0 });
  assert.equal(cuts, 1);
  assert.equal(quick.listeners.size, 0);
  assert.equal(timers(), before);
});

test('settledWithin: true when the work settles, false at the end of the wait; each leaves no listener or timer behind', async () => {
  const w = pieces(1);
  const before = timers();
  assert.equal(await settledWithin(w, 10), false);
  assert.equal(w.listeners.size, 0);
  assert.equal(timers(), before);
  const waiting = settledWithin(w, 60_000);
  w.settle();
  assert.equal(await waiting, true);
  assert.equal(w.listeners.size, 0);
  assert.equal(timers(), before);
  assert.equal(await settledWithin(w, 60_000), true, 'idle: at once');
  assert.equal(w.registered, 2);
});

test('a cut that throws rejects the drain, after the listener and the timer are gone', async () => {
  const w = pieces(1);
  const before = timers();
  const boom = new Error('cut failed');
  await assert.rejects(
    drainThenCut({
      idle: w.idle,
      onSettle: w.onSettle,
      graceMs: 0,
      cut: () => {
        throw boom;
      },
    }),
    (err) => err === boom,
  );
  assert.equal(w.listeners.size, 0);
  assert.equal(timers(), before);
});
