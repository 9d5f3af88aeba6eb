// SubscriptionSync (src/upstreams/subscription-sync.ts): one subscription change at a time, each
// URI's want read at its turn, a subscribe that came and went sends nothing, what is still wanted
// sent again after resync, the bound on subscribed URIs, idle() and stop(). The send is a fake
// (the upstream's edge): each change it is given waits until the test answers it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SubscriptionSync } from '../../src/upstreams/subscription-sync.js';

/** A sync over the want set `wants`, whose sends the test answers one by one. */
function harness(o: { maxUris?: number; ready?: () => boolean; notSent?: (err: unknown) => boolean } = {}) {
  const wants = new Set<string>();
  const sent: string[] = [];
  const failed: string[] = [];
  const deferred: string[] = [];
  const bound: string[] = [];
  let inFlight = 0;
  let peak = 0;
  const answers: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const sync = new SubscriptionSync({
    wanted: (uri) => wants.has(uri),
    send: (uri, subscribe) => {
      sent.push(`${subscribe ? '+' : '-'}${uri}`);
      peak = Math.max(peak, ++inFlight);
      return new Promise<void>((resolve, reject) => answers.push({ resolve, reject })).finally(() => inFlight--);
    },
    failed: (uri, subscribe, err) => failed.push(`${subscribe ? '+' : '-'}${uri}: ${(err as Error).message}`),
    deferred: (uri, subscribe, err) => deferred.push(`${subscribe ? '+' : '-'}${uri}: ${(err as Error).message}`),
    atBound: (uri, max) => bound.push(`${uri} at ${max}`),
    ...o,
  });
  const want = (uri: string) => {
    wants.add(uri);
    sync.changed(uri);
  };
  const unwant = (uri: string) => {
    wants.delete(uri);
    sync.changed(uri);
  };
  /** Answers the oldest change sent and lets the next one go out. */
  const answer = async (err?: Error) => {
    const a = answers.shift();
    assert.ok(a, 'a change is in flight');
    if (err) a.reject(err);
    else a.resolve();
    await new Promise((r) => setImmediate(r));
  };
  /** Answers every change until none is in flight. */
  const settle = async () => {
    while (answers.length > 0) await answer();
  };
  return { sync, wants, sent, failed, deferred, bound, want, unwant, answer, settle, peak: () => peak, inFlight: () => inFlight };
}

test('a burst of wants is sent one change at a time, in the order wanted', async () => {
  const h = harness();
  for (let i = 0; i < 5; i++) h.want(`u${i}`);
  assert.deepEqual(h.sent, ['+u0'], 'only the first is in flight');
  await h.settle();
  assert.deepEqual(h.sent, ['+u0', '+u1', '+u2', '+u3', '+u4']);
  assert.equal(h.peak(), 1);
  assert.equal(h.sync.size, 5);
});

test('a subscribe that came and went before its turn sends nothing; one that stayed is sent once', async () => {
  const h = harness();
  h.want('a');
  h.want('b');
  h.unwant('b');
  h.want('c');
  h.want('c');
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+c']);
  // While d is in flight, a is taken back and wanted again before its turn: still subscribed, nothing sent.
  h.want('d');
  h.unwant('a');
  h.want('a');
  h.unwant('c');
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+c', '+d', '-c']);
  assert.equal(h.sync.size, 2);
});

test('a URI wanted again while its unsubscribe is in flight is subscribed again after it', async () => {
  const h = harness();
  h.want('a');
  await h.settle();
  h.unwant('a');
  assert.deepEqual(h.sent, ['+a', '-a']);
  h.want('a');
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '-a', '+a']);
});

test('a failed change is reported and not retried; the next one goes on', async () => {
  const h = harness();
  h.want('a');
  h.want('b');
  await h.answer(new Error('refused'));
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b']);
  assert.deepEqual(h.failed, ['+a: refused']);
});

test('a change refused before it was sent (notSent) is not marked as made: retry() gives it another turn; a change that failed upstream is not retried', async () => {
  const h = harness({ notSent: (err) => (err as Error).message === 'not sent' });
  h.want('a');
  h.want('b');
  await h.answer(new Error('not sent'));
  // a is deferred, not failed; b waits untried (the connection has just refused one), told of once.
  assert.deepEqual([h.sent, h.sync.size, h.failed, h.deferred], [['+a'], 0, [], ['+a: not sent']]);
  // Room again: both get their turn; b is refused by the upstream.
  h.sync.retry();
  await h.answer();
  await h.answer(new Error('refused'));
  assert.deepEqual([h.sent, h.sync.size, h.failed], [['+a', '+a', '+b'], 2, ['+b: refused']]);
  // A change that reached the upstream and failed is not tried again.
  h.sync.retry();
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+a', '+b']);
});

test('an unsubscribe refused before it was sent keeps the URI subscribed, and goes again at the next change of any URI', async () => {
  const h = harness({ notSent: (err) => (err as Error).message === 'not sent' });
  h.want('a');
  await h.settle();
  h.unwant('a');
  await h.answer(new Error('not sent'));
  assert.deepEqual([h.sent, h.sync.size], [['+a', '-a'], 1]);
  h.want('c');
  await h.settle();
  assert.deepEqual([h.sent, h.sync.size], [['+a', '-a', '-a', '+c'], 1]);
});

test('resync and stop() forget the changes refused before they were sent', async () => {
  const h = harness({ notSent: () => true });
  h.want('a');
  await h.answer(new Error('not sent'));
  h.wants.delete('a');
  h.sync.resync(h.wants);
  h.sync.retry();
  await h.settle();
  assert.deepEqual(h.sent, ['+a']);
  h.want('b');
  await h.answer(new Error('not sent'));
  h.sync.stop();
  h.sync.retry();
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b']);
});

test('resync: a new connection is sent every URI still wanted, and none that went meanwhile', async () => {
  const h = harness();
  for (const u of ['a', 'b', 'c']) h.want(u);
  await h.settle();
  h.wants.delete('b');
  h.sync.resync(h.wants);
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b', '+c', '+a', '+c']);
  assert.equal(h.sync.size, 2);
});

test('resync while a change is in flight: the URI is sent again on the new connection', async () => {
  const h = harness();
  h.want('a');
  h.sync.resync(h.wants);
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+a']);
});

test('not ready: a turn sends nothing, and resync sends it once there is a connection', async () => {
  let ready = false;
  const h = harness({ ready: () => ready });
  h.want('a');
  h.want('b');
  await h.settle();
  assert.deepEqual(h.sent, []);
  ready = true;
  h.sync.resync(h.wants);
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b']);
});

test('bound: at maxUris subscribed the next wanted URI is not sent and said once; room made by an unsubscribe is used by its next change', async () => {
  const h = harness({ maxUris: 2 });
  h.want('a');
  h.want('b');
  await h.settle();
  h.want('c');
  h.want('d');
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b']);
  assert.deepEqual(h.bound, ['c at 2']);
  assert.equal(h.sync.size, 2);
  h.unwant('a');
  h.sync.changed('c');
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b', '-a', '+c']);
  // At the bound again: said again, once.
  h.sync.changed('d');
  await h.settle();
  assert.deepEqual(h.bound, ['c at 2', 'd at 2']);
});

test('bound: the queue takes at most maxUris URIs not subscribed; an unsubscribe always finds room', async () => {
  const h = harness({ maxUris: 2 });
  h.want('a');
  h.want('b');
  await h.settle();
  h.wants.clear();
  // In flight: -a. Queued: x and y; z finds the queue full; b (subscribed) still gets in.
  h.sync.changed('a');
  for (const u of ['x', 'y', 'z']) h.want(u);
  h.wants.delete('x');
  h.sync.changed('b');
  assert.deepEqual(h.bound, ['z at 2']);
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b', '-a', '+y', '-b']);
});

test('idle() waits for the changes queued before it, not for later ones', async () => {
  const h = harness();
  await h.sync.idle();
  h.want('a');
  h.want('b');
  let settled = false;
  const idle = h.sync.idle().then(() => (settled = true));
  await h.answer();
  assert.equal(settled, false, 'b has not had its turn');
  h.want('c');
  await h.answer();
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, true, 'a and b had their turn; c is still in flight');
  assert.deepEqual(h.sent, ['+a', '+b', '+c']);
  await idle;
  await h.settle();
});

test('stop(): nothing queued is sent, idle() settles, later changes are ignored, a failure then is not reported', async () => {
  const h = harness();
  h.want('a');
  h.want('b');
  const idle = h.sync.idle();
  h.sync.stop();
  await idle;
  h.want('c');
  await h.answer(new Error('session ended'));
  assert.deepEqual(h.sent, ['+a']);
  assert.deepEqual(h.failed, []);
  assert.equal(h.inFlight(), 0);
});

test('bound: unsubscribes waiting in the queue take no room from subscribes; the URI past the bound is the one turned away', async () => {
  const h = harness({ maxUris: 4 });
  for (const u of ['a', 'b', 'c', 'd']) h.want(u);
  await h.settle();
  // In flight: -a. Queued: -b, -c, -d (subscribed still), then four new URIs: together they make four subscribed.
  for (const u of ['a', 'b', 'c', 'd']) h.unwant(u);
  for (const u of ['e', 'f', 'g', 'h', 'i']) h.want(u);
  assert.deepEqual(h.bound, ['i at 4']);
  await h.settle();
  assert.deepEqual(h.sent, ['+a', '+b', '+c', '+d', '-a', '-b', '-c', '-d', '+e', '+f', '+g', '+h']);
  assert.deepEqual([h.sync.size, h.bound], [4, ['i at 4']]);
});

test('bound: said again after the queue that made it emptied with room, though no unsubscribe was made', async () => {
  const h = harness({ maxUris: 2 });
  // In flight: +a. Queued: b and c (two not subscribed: the queue's bound); d is turned away.
  for (const u of ['a', 'b', 'c', 'd']) h.want(u);
  assert.deepEqual(h.bound, ['d at 2']);
  // b and c go before their turn: nothing is sent for them, and there is room again.
  h.wants.delete('b');
  h.wants.delete('c');
  await h.settle();
  assert.deepEqual([h.sent, h.sync.size], [['+a'], 1]);
  h.want('e');
  h.want('f');
  await h.settle();
  assert.deepEqual([h.sent, h.sync.size], [['+a', '+e'], 2]);
  assert.deepEqual(h.bound, ['d at 2', 'f at 2']);
  // Still at the bound: said no more, however many are turned away.
  for (const u of ['g', 'h', 'i']) h.want(u);
  await h.settle();
  assert.deepEqual(h.bound, ['d at 2', 'f at 2']);
});

test('bound: a subscribe behind an unsubscribe refused unsent is deferred, not turned away, and made once the unsubscribe is', async () => {
  const h = harness({ maxUris: 2, notSent: (err) => (err as Error).message === 'not sent' });
  h.want('a');
  h.want('b');
  await h.settle();
  h.want('x');
  await h.settle();
  assert.deepEqual(h.bound, ['x at 2']);
  // -a is refused unsent (a stays subscribed); y, queued behind it, waits untried.
  h.unwant('a');
  h.want('y');
  await h.answer(new Error('not sent'));
  assert.deepEqual([h.sent, h.sync.size, h.deferred], [['+a', '+b', '-a'], 2, ['-a: not sent']]);
  // Room on the connection again: -a goes first, then y fits; the refused unsubscribe did not make the bound said again.
  h.sync.retry();
  await h.settle();
  assert.deepEqual([h.sent, h.sync.size, h.bound], [['+a', '+b', '-a', '-a', '+y'], 2, ['x at 2']]);
});
