// Cancellation: the executor's view of a request's cancellation, without an AbortController until
// a real AbortSignal is asked for. It must behave as the AbortSignal it stands in for.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Cancellation, watchAbort } from '../../src/core/cancel.js';
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
