// Cancellation: the executor's view of a request's cancellation, without an AbortController until
// a real AbortSignal is asked for. It must behave as the AbortSignal it stands in for.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cancellation, Deadline, deadlineReached, watchAbort, withinDeadline } from '../../src/core/cancel.js';
import { SwitchyardError } from '../../src/core/errors.js';

test('Cancellation: listeners run once, in order, and a removed one not at all; the first reason stays', () => {
  const c = new Cancellation();
  const seen: string[] = [];
  const a = () => seen.push('a');
  const b = () => seen.push('b');
  const gone = () => seen.push('gone');
  c.addEventListener('abort', a);
  c.addEventListener('abort', gone);
  c.addEventListener('abort', b);
  c.removeEventListener('abort', gone);
  c.removeEventListener('abort', () => {}); // not added: nothing happens
  assert.equal(c.aborted, false);
  const why = new SwitchyardError('SWY_ERR_SESSION_ENDED');
  c.abort(why);
  c.abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
  assert.deepEqual(seen, ['a', 'b']);
  assert.equal(c.aborted, true);
  assert.equal(c.reason, why);
  // A listener added after the abort is not kept (callers read `aborted` first, as with AbortSignal).
  c.addEventListener('abort', a);
  c.abort();
  assert.deepEqual(seen, ['a', 'b']);
});

test('Cancellation: the real signal follows it, whether made before or after the abort, with the same reason', () => {
  const before = new Cancellation();
  const early = before.signal;
  assert.equal(before.signal, early, 'one signal, made once');
  let heard: unknown;
  early.addEventListener('abort', () => (heard = early.reason));
  before.abort('why');
  assert.equal(early.aborted, true);
  assert.equal(heard, 'why');

  const after = new Cancellation();
  after.abort();
  assert.ok(after.reason instanceof DOMException && after.reason.name === 'AbortError', String(after.reason));
  assert.equal(after.signal.aborted, true);
  assert.equal(after.signal.reason, after.reason);
});

test('watchAbort: 64 watchers of one AbortSignal share one listener, each runs once on abort, and the listener goes with the last watcher', () => {
  const ac = new AbortController();
  const seen: number[] = [];
  const stops = Array.from({ length: 64 }, (_, i) => watchAbort(ac.signal, () => seen.push(i)));
  assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
  stops[0]();
  stops[0](); // twice: nothing more happens
  assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
  ac.abort();
  assert.deepEqual(
    seen,
    Array.from({ length: 63 }, (_, i) => i + 1),
  );
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);

  const quiet = new AbortController();
  const all = Array.from({ length: 12 }, () => watchAbort(quiet.signal, () => assert.fail('not aborted')));
  for (const stop of all) stop();
  assert.equal(getEventListeners(quiet.signal, 'abort').length, 0);
  // Watched again after the last watcher left: a new listener.
  const again = watchAbort(quiet.signal, () => {});
  assert.equal(getEventListeners(quiet.signal, 'abort').length, 1);
  again();
  assert.equal(getEventListeners(quiet.signal, 'abort').length, 0);
});

/** A SwitchyardError's code and detail, to compare with assert. */
const codeOf = (err: unknown) => (err instanceof SwitchyardError ? { code: err.code, detail: err.detail } : { other: err });

test('withinDeadline: past the deadline it rejects with SWY_ERR_REQ_DEADLINE naming the ms, aborts the work, and leaves no listener on the parent', async (t) => {
  const parent = new AbortController();
  let seen: AbortSignal | undefined;
  const work = (signal: AbortSignal) => ((seen = signal), new Promise<string>(() => {}));
  // The deadline's timer does not hold the process open (unref): this one does, meanwhile.
  const alive = setInterval(() => {}, 1_000);
  t.after(() => clearInterval(alive));
  await assert.rejects(withinDeadline(5, parent.signal, work), (err) => {
    assert.deepEqual(codeOf(err), { code: 'SWY_ERR_REQ_DEADLINE', detail: '5 ms' });
    return true;
  });
  assert.equal(seen!.aborted, true);
  assert.deepEqual(codeOf(seen!.reason), { code: 'SWY_ERR_REQ_DEADLINE', detail: '5 ms' });
  assert.equal(deadlineReached(seen!), true);
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
  assert.equal(parent.signal.aborted, false, 'the parent is not aborted by the deadline');

  // cancelOnExpiry: the same rejection, but the work is told it was cancelled.
  await assert.rejects(withinDeadline(5, parent.signal, work, true), (err) => {
    assert.deepEqual(codeOf(err), { code: 'SWY_ERR_REQ_DEADLINE', detail: '5 ms' });
    return true;
  });
  assert.deepEqual(codeOf(seen!.reason), { code: 'SWY_ERR_REQ_CANCELLED', detail: undefined });
  assert.equal(deadlineReached(seen!), false);
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
});

test('withinDeadline: work that ends first settles it, and the timer and the listener on the parent are gone', async () => {
  const parent = new AbortController();
  let seen: AbortSignal | undefined;
  const value = await withinDeadline(20, parent.signal, (signal) => {
    seen = signal;
    assert.equal(getEventListeners(parent.signal, 'abort').length, 1, 'linked while the work runs');
    return Promise.resolve('done');
  });
  assert.equal(value, 'done');
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
  const failure = new Error('the work failed');
  await assert.rejects(
    withinDeadline(20, parent.signal, () => Promise.reject(failure)),
    (err) => err === failure,
  );
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
  const thrown = new Error('thrown before a promise');
  await assert.rejects(
    withinDeadline(20, parent.signal, () => {
      throw thrown;
    }),
    (err) => err === thrown,
  );
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
  // Had the timer been left, it would abort the work's signal by now.
  await sleep(60);
  assert.equal(seen!.aborted, false);
  parent.abort();
  assert.equal(seen!.aborted, false, 'no longer linked to the parent');
});

test("withinDeadline: a parent aborted before or while the work runs aborts it with the parent's reason", async () => {
  const before = new AbortController();
  const why = new SwitchyardError('SWY_ERR_SESSION_ENDED');
  before.abort(why);
  let started = false;
  await assert.rejects(
    withinDeadline(1_000, before.signal, (signal) => {
      started = true;
      assert.equal(signal.aborted, true);
      assert.equal(signal.reason, why);
      return new Promise<never>(() => {});
    }),
    (err) => err === why,
  );
  assert.equal(started, true, 'the work starts, its signal already aborted');
  assert.equal(getEventListeners(before.signal, 'abort').length, 0);

  const during = new AbortController();
  let seen: AbortSignal | undefined;
  const pending = withinDeadline(1_000, during.signal, (signal) => ((seen = signal), new Promise<never>(() => {})));
  during.abort('gone');
  await assert.rejects(pending, (err) => err === 'gone');
  assert.equal(seen!.reason, 'gone');
  assert.equal(getEventListeners(during.signal, 'abort').length, 0);
});

test('Deadline: the first abort wins, a Cancellation parent is mapped by parentReason, and a signal made late is aborted already', async () => {
  const parent = new Cancellation();
  const d = new Deadline<string>();
  const toCancelled = () => new SwitchyardError('SWY_ERR_REQ_CANCELLED');
  const outcome = d.outcome();
  d.arm(1_000, parent, toCancelled);
  parent.abort('not a catalogue error');
  d.abort(new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN'));
  d.resolve('too late');
  await assert.rejects(outcome, (err) => {
    assert.deepEqual(codeOf(err), { code: 'SWY_ERR_REQ_CANCELLED', detail: undefined });
    return err === d.why;
  });
  assert.equal(d.signal.aborted, true);
  assert.equal(d.signal.reason, d.why);
  d.disarm();

  // Without an outcome nothing rejects unhandled; abort reaches the signal.
  const bare = new Deadline();
  bare.arm(1_000);
  const signal = bare.signal;
  bare.abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
  assert.deepEqual(codeOf(signal.reason), { code: 'SWY_ERR_REQ_CANCELLED', detail: undefined });
  bare.disarm();

  // An outcome asked for after the abort (a parent aborted before arm) is rejected at once with it.
  const early = new Cancellation();
  early.abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
  const late = new Deadline<string>();
  late.arm(1_000, early);
  const lateOutcome = late.outcome();
  late.resolve('ignored');
  await assert.rejects(lateOutcome, (err) => err === early.reason && err === late.why);
  late.disarm();
});

test('Deadline: cancelOnExpiry aborts the work as cancelled while the outcome rejects with the deadline', async (t) => {
  const d = new Deadline<string>();
  d.cancelOnExpiry = true;
  const outcome = d.outcome();
  d.arm(5);
  // The deadline's timer does not hold the process open; this one does, until the outcome.
  const hold = setTimeout(() => {}, 1_000);
  t.after(() => clearTimeout(hold));
  await assert.rejects(outcome, (err) => {
    assert.deepEqual(codeOf(err), { code: 'SWY_ERR_REQ_DEADLINE', detail: '5 ms' });
    return true;
  });
  assert.deepEqual(codeOf(d.signal.reason), { code: 'SWY_ERR_REQ_CANCELLED', detail: undefined });
  d.disarm();
});

test('Deadline: armed without ms it has no timer; the parent and abort() still end it, and disarm removes the listener', async () => {
  const parent = new AbortController();
  const d = new Deadline<string>();
  const outcome = d.outcome();
  d.arm(undefined, parent.signal);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(d.why, undefined);
  d.resolve('done');
  assert.equal(await outcome, 'done');
  d.disarm();
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);

  const cut = new Deadline<string>();
  const cutOutcome = cut.outcome();
  cut.arm(undefined, parent.signal);
  const why = new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'retired' });
  cut.abort(why);
  await assert.rejects(cutOutcome, (err) => err === why);
  assert.equal(cut.signal.reason, why);
  cut.disarm();
  assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
});
