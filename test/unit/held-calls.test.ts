// Held calls: the requestState is bound to the request (its params by content, whatever their key order), single-use, and exact to the character.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSealer, parseClusterKeys } from '../../src/cluster/seal.js';
import { CallQueue, HeldCalls, type HeldCall } from '../../src/core/calls.js';
import { approxJsonBytes } from '../../src/core/json-size.js';
import { SwitchyardError } from '../../src/core/errors.js';

const call = (): HeldCall => ({ queue: new CallQueue(), respond: () => {}, cancel: () => {}, pending: new Map(), inputRequests: {} });

test('take: only the exact state, for the same method and arguments, once', () => {
  const held = new HeldCalls(undefined, 10, 60_000);
  t_each: for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') {
    const state = held.hold(call(), 'tools/call', { name: 'x', arguments: { a: 1 } });
    const altered = state.slice(0, -1) + c;
    if (altered === state) {
      assert.ok(held.take(state, 'tools/call', { name: 'x', arguments: { a: 1 } }));
      continue t_each;
    }
    assert.equal(held.take(altered, 'tools/call', { name: 'x', arguments: { a: 1 } }), undefined, c);
    assert.equal(held.take(state, 'tools/call', { name: 'x', arguments: { a: 2 } }), undefined);
    assert.ok(held.take(state, 'tools/call', { name: 'x', arguments: { a: 1 }, inputResponses: {} }));
    assert.equal(held.take(state, 'tools/call', { name: 'x', arguments: { a: 1 } }), undefined, 'single use');
  }
  held.clear();
});

test('take: the arguments are compared by content, so a retry with their keys in another order is the same request', () => {
  // Found by h-trial4: the digest was of JSON.stringify text, and a client re-serializing the
  // retry (keys in another order) was refused -32602 'requestState is unknown, expired, or bound to another request'.
  const held = new HeldCalls(undefined, 10, 60_000);
  const state = held.hold(call(), 'tools/call', { name: 'x', arguments: { prompt: 'p', maxTokens: 5, nested: { a: 1, b: 2 } } });
  assert.equal(held.take(state, 'tools/call', { name: 'x', arguments: { prompt: 'p', maxTokens: 6, nested: { a: 1, b: 2 } } }), undefined);
  assert.ok(held.take(state, 'tools/call', { arguments: { nested: { b: 2, a: 1 }, maxTokens: 5, prompt: 'p' }, name: 'x' }));
  held.clear();
});

test('sealed states (cluster): swy2., bound like swy1, naming the replica; a state of another replica is located there, not taken', () => {
  const keys = parseClusterKeys(randomBytes(32).toString('base64'));
  const seal = createSealer({ keys });
  const a = new HeldCalls(undefined, 10, 60_000, { seal, replicaId: 'replica-a' });
  const b = new HeldCalls(undefined, 10, 60_000, { seal, replicaId: 'replica-b' });
  const params = { name: 'x', arguments: { a: 1 } };
  const state = a.hold(call(), 'tools/call', params, 'mount\0p');
  assert.match(state, /^swy2\.v1\./);
  assert.equal(HeldCalls.isOurs(state), true);
  // Another replica finds where it lives without taking anything; the holder takes it once.
  assert.deepEqual(b.locate(state, 'tools/call', params, 'mount\0p'), { replica: 'replica-a' });
  assert.equal(b.take(state, 'tools/call', params, 'mount\0p'), undefined);
  assert.equal(b.locate(state, 'tools/call', { ...params, arguments: { a: 2 } }, 'mount\0p'), undefined);
  assert.equal(b.locate(state, 'tools/call', params, 'mount\0other'), undefined);
  assert.ok(a.take(state, 'tools/call', params, 'mount\0p'));
  assert.equal(a.take(state, 'tools/call', params, 'mount\0p'), undefined, 'single use');
  // An HMAC state means nothing to a sealing table, and a sealed one nothing to an HMAC table.
  const local = new HeldCalls(undefined, 10, 60_000);
  const hmac = local.hold(call(), 'tools/call', params);
  assert.equal(a.locate(hmac, 'tools/call', params), undefined);
  const sealed = a.hold(call(), 'tools/call', params);
  assert.equal(local.locate(sealed, 'tools/call', params), undefined);
  // Another key does not open it.
  const other = new HeldCalls(undefined, 10, 60_000, {
    seal: createSealer({ keys: parseClusterKeys(randomBytes(32).toString('base64')) }),
    replicaId: 'replica-a',
  });
  assert.equal(other.locate(sealed, 'tools/call', params), undefined);
  for (const h of [a, b, local, other]) h.clear();
});

test('cancelled by the gateway: the upstream is told, and a retry gets the cancelling error until the state expires (clear, cancelOwned)', () => {
  const held = new HeldCalls(undefined, 10, 60_000);
  const told: string[] = [];
  const on = (tag: string, owner?: object): HeldCall => ({ ...call(), cancel: (reason) => told.push(`${tag}: ${reason}`), ...(owner ? { owner } : {}) });
  const params = { name: 'x', arguments: {} };
  const a = {};
  const b = {};
  const sa = held.scoped(a).hold(on('a'), 'tools/call', params);
  const sb = held.scoped(b).hold(on('b'), 'tools/call', params);
  assert.equal(held.busy, 2);
  assert.equal(held.heldHere(sa), true);
  assert.equal(held.heldHere(`${sa}x`), false);
  assert.equal(held.heldHere('not ours'), false);
  const reload = new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'mount a was removed or replaced by a config reload; request aborted' });
  assert.equal(held.cancelOwned(a, reload), 1);
  assert.deepEqual(told, ['a: Upstream unavailable: mount a was removed or replaced by a config reload; request aborted']);
  assert.equal(held.heldHere(sa), false);
  assert.throws(
    () => held.take(sa, 'tools/call', params),
    (err) => err === reload,
  );
  // Bound to another request: unknown, as before (the cancellation tells nothing of it).
  assert.equal(held.take(sa, 'tools/call', { ...params, arguments: { y: 1 } }), undefined);
  held.clear();
  assert.deepEqual(told.at(-1), 'b: shutting down');
  assert.equal(held.busy, 0);
  assert.throws(
    () => held.take(sb, 'tools/call', params),
    (err) => err instanceof SwitchyardError && err.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN' && err.message === 'Server is shutting down: held call cancelled',
  );
});

test('busy counts held calls and resumes tracked for another replica; onSettle hears each fall', async () => {
  const held = new HeldCalls(undefined, 10, 60_000);
  const params = { name: 'x', arguments: {} };
  let heard = 0;
  const off = held.onSettle(() => heard++);
  const state = held.hold(call(), 'tools/call', params);
  assert.ok(held.take(state, 'tools/call', params));
  let finish!: () => void;
  const tracked = held.track(new Promise<void>((r) => (finish = r)));
  assert.equal(held.busy, 1);
  finish();
  await tracked;
  assert.equal(held.busy, 0);
  await Promise.resolve();
  assert.equal(heard, 2);
  off();
});

test('cutResumed: a drain whose grace ended cuts each resume tracked with a cut, with its error, and every later one at once', async () => {
  const held = new HeldCalls(undefined, 10, 60_000);
  const drain = new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'request aborted' });
  /** Work that settles only when cut, with the cut's error. */
  const cuttable = () => {
    let cut!: (err: SwitchyardError) => void;
    const work = new Promise<never>((_resolve, reject) => (cut = reject));
    return { work, cut: (err: SwitchyardError) => cut(err) };
  };
  const a = cuttable();
  const running = held.track(a.work, a.cut);
  let finish!: () => void;
  // Tracked without a cut: counted, never cut.
  const uncut = held.track(new Promise<void>((r) => (finish = r)));
  assert.equal(held.busy, 2);
  assert.equal(held.cutResumed(drain), 1);
  await assert.rejects(running, (err) => err === drain);
  assert.equal(held.busy, 1);
  // A retry taken after the grace ended (its message was on its way) is cut as it starts.
  const b = cuttable();
  await assert.rejects(held.track(b.work, b.cut), (err) => err === drain);
  finish();
  await uncut;
  assert.equal(held.busy, 0);
  assert.equal(held.cutResumed(drain), 0);
});

test('CallQueue: progress, logs and server requests buffered past maxBytes fail the call; what was buffered comes first, then the error, and nothing more is taken', async () => {
  // Each progress event counts 255 bytes (approxJsonBytes of its params).
  const q = new CallQueue(10_000, 1100);
  const progress = (n: number) => ({ kind: 'progress' as const, params: { progressToken: 't', progress: n, message: 'x'.repeat(200) } });
  for (let n = 1; n <= 4; n++) q.push(progress(n));
  // The fifth passes 1,100 bytes: the call fails, the event is not kept.
  q.push(progress(5));
  q.push({ kind: 'result', result: { content: [] } });
  const signal = new AbortController().signal;
  for (let n = 1; n <= 4; n++) assert.deepEqual(await q.next(signal), progress(n));
  await assert.rejects(q.next(signal), {
    code: 'SWY_ERR_UPSTREAM_PROTOCOL',
    message: 'Upstream protocol error: more than 1100 bytes of events buffered for one call',
  });
});

test('CallQueue: events taken give their bytes back, and a result counts nothing', async () => {
  const q = new CallQueue(10_000, 1000);
  const signal = new AbortController().signal;
  const log = { kind: 'log' as const, params: { level: 'info', data: 'y'.repeat(400) } };
  for (let n = 0; n < 10; n++) {
    q.push(log);
    q.push(log);
    assert.deepEqual(await q.next(signal), log);
    assert.deepEqual(await q.next(signal), log);
  }
  q.push({ kind: 'result', result: { content: [{ type: 'text', text: 'z'.repeat(5000) }] } });
  assert.equal((await q.next(signal)).kind, 'result');
});

test('approxJsonBytes: about the JSON length, from string lengths and member names', () => {
  const v = { a: 'x'.repeat(1000), list: [1, 'two', null, { b: true }] };
  const n = approxJsonBytes(v);
  assert.ok(n >= JSON.stringify(v).length && n <= JSON.stringify(v).length + 64, `${n} for ${JSON.stringify(v).length}`);
});
