// The in-memory event store (src/cluster/event-store.ts): exact replay after an id, the bounds
// (events and bytes per stream, streams, total bytes), TTL, and hostile Last-Event-ID values.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { createMemoryEventStore, streamOfEventId } from '../../src/cluster/event-store.js';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof SwitchyardError ? `${err.code}: ${err.message}` : `not a SwitchyardError: ${String(err)}`;
  }
  return 'resolved';
}

test('replayAfter returns exactly the events after the given id, for that stream only', async () => {
  const s = createMemoryEventStore();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await s.append('sess1/get', `m${i}`));
  const other = await s.append('sess1/post-7', 'other');
  assert.deepEqual(ids, ['sess1/get.1', 'sess1/get.2', 'sess1/get.3', 'sess1/get.4', 'sess1/get.5']);
  assert.equal(other, 'sess1/post-7.6');
  assert.equal(streamOfEventId(ids[2]), 'sess1/get');
  assert.deepEqual(await s.replayAfter('sess1/get', ids[2]), [
    { id: 'sess1/get.4', data: 'm3' },
    { id: 'sess1/get.5', data: 'm4' },
  ]);
  assert.deepEqual(await s.replayAfter('sess1/get', ids[4]), []);
  // 2025-11-25 basic/transports#resumability-and-redelivery: MUST NOT replay messages of another stream.
  assert.equal(await s.replayAfter('sess1/post-7', ids[2]), undefined);
  assert.equal(await s.replayAfter('sess1/get', other), undefined);
  assert.equal(await s.replayAfter('unknown', 'unknown.1'), undefined);
});

test('per-stream event bound: the oldest are dropped, and an id that fell out cannot be replayed', async () => {
  const s = createMemoryEventStore({ maxEventsPerStream: 3 });
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await s.append('a', `e${i}`));
  assert.equal(await s.replayAfter('a', ids[0]), undefined);
  assert.equal(await s.replayAfter('a', ids[2]), undefined);
  assert.deepEqual(await s.replayAfter('a', ids[3]), [
    { id: ids[4], data: 'e4' },
    { id: ids[5], data: 'e5' },
  ]);
});

test('per-stream byte bound and the event size limit', async () => {
  const s = createMemoryEventStore({ maxBytesPerStream: 10, maxEventBytes: 8 });
  const a = await s.append('a', '1234');
  const b = await s.append('a', '5678');
  const c = await s.append('a', '90');
  // 4 + 4 + 2 = 10: all kept; one more byte drops the oldest.
  assert.deepEqual(await s.replayAfter('a', a), [
    { id: b, data: '5678' },
    { id: c, data: '90' },
  ]);
  const d = await s.append('a', 'x');
  assert.equal(await s.replayAfter('a', a), undefined);
  assert.deepEqual(await s.replayAfter('a', b), [
    { id: c, data: '90' },
    { id: d, data: 'x' },
  ]);
  // At the limit is fine, one byte more is refused (UTF-8 bytes, not characters).
  await s.append('b', '12345678');
  assert.equal(await codeOf(s.append('b', '123456789')), 'SWY_ERR_CLUSTER_EVENT_TOO_LARGE: Event too large for the resumption buffer: 9 bytes, limit 8');
  assert.equal(await codeOf(s.append('b', 'ééééé')), 'SWY_ERR_CLUSTER_EVENT_TOO_LARGE: Event too large for the resumption buffer: 10 bytes, limit 8');
});

test('stream bound: past maxStreams the least recently appended stream is dropped', async () => {
  const s = createMemoryEventStore({ maxStreams: 2 });
  const a = await s.append('a', '1');
  const b = await s.append('b', '1');
  await s.append('a', '2');
  const c = await s.append('c', '1');
  assert.equal(await s.replayAfter('b', b), undefined);
  assert.deepEqual(await s.replayAfter('a', a), [{ id: 'a.3', data: '2' }]);
  assert.deepEqual(await s.replayAfter('c', c), []);
});

test('total byte bound across streams', async () => {
  const s = createMemoryEventStore({ maxBytesPerStream: 10, maxTotalBytes: 25 });
  const a = await s.append('a', '0123456789');
  const b = await s.append('b', '0123456789');
  // a (10+1) + b (10+1) = 22 ≤ 25; c makes 33: a, the least recent, goes.
  const c = await s.append('c', '0123456789');
  assert.equal(await s.replayAfter('a', a), undefined);
  assert.deepEqual(await s.replayAfter('b', b), []);
  assert.deepEqual(await s.replayAfter('c', c), []);
});

test('TTL: a stream expires ttlMs after its last append', async () => {
  let clock = 1_000;
  const s = createMemoryEventStore({ ttlMs: 100, now: () => clock });
  const a = await s.append('a', '1');
  clock = 1_099;
  const a2 = await s.append('a', '2');
  clock = 1_198;
  assert.deepEqual(await s.replayAfter('a', a), [{ id: a2, data: '2' }]);
  clock = 1_200;
  assert.equal(await s.replayAfter('a', a), undefined);
});

test('ids never repeat, even for a stream dropped and created again', async () => {
  const s = createMemoryEventStore();
  const first = await s.append('a', 'old');
  await s.drop('a');
  assert.equal(await s.replayAfter('a', first), undefined);
  const second = await s.append('a', 'new');
  assert.notEqual(first, second);
  assert.equal(await s.replayAfter('a', first), undefined);
});

test('hostile Last-Event-ID values never throw and never replay', async () => {
  const s = createMemoryEventStore();
  await s.append('a', 'x');
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.string(), fc.constantFrom('a.', 'a.0', 'a.01', 'a.-1', 'a.1e3', 'a.99999999999999999999', '.1', 'a.1.1', 'a..1')),
      async (id) => {
        fc.pre(id !== 'a.1');
        assert.equal(await s.replayAfter('a', id), undefined);
      },
    ),
  );
  for (const bad of [undefined, null, 1, {}, ['a.1']]) assert.equal(await s.replayAfter('a', bad as string), undefined);
  assert.equal(streamOfEventId('no-dot'), undefined);
  assert.equal(streamOfEventId('a b.1'), undefined);
});

test('a stream id must be 1-128 visible ASCII characters (it goes into SSE ids and Last-Event-ID headers)', async () => {
  const s = createMemoryEventStore();
  for (const bad of ['', 'a b', 'a\nb', 'é', 'x'.repeat(129)])
    assert.equal(await codeOf(s.append(bad, 'x')), 'SWY_ERR_INTERNAL_FAULT: Internal error: event store: streamId must be 1-128 visible ASCII characters');
  assert.match(await s.append('x'.repeat(128), 'x'), /^x{128}\.1$/);
});

test('put: the producer numbers its events (0 for priming); replay as for append; seq must grow', async () => {
  const store = createMemoryEventStore();
  for (let seq = 0; seq <= 4; seq++) await store.put('p~1', seq, seq === 0 ? '' : `e${seq}`);
  assert.deepEqual(
    await store.replayAfter('p~1', 'p~1.0'),
    [1, 2, 3, 4].map((i) => ({ id: `p~1.${i}`, data: `e${i}` })),
  );
  assert.deepEqual(await store.replayAfter('p~1', 'p~1.3'), [{ id: 'p~1.4', data: 'e4' }]);
  assert.deepEqual(await store.replayAfter('p~1', 'p~1.4'), []);
  assert.equal(await store.replayAfter('p~1', 'p~1.5'), undefined);
  await assert.rejects(store.put('p~1', 4, 'again'), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT');
  await assert.rejects(store.put('p~1', 5, 'x', 0), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT');
});

// A GET stream resumes from an id older than its buffer with what is left (docs/dialects.md):
// `allowGap` gives every kept event after such an id, and still nothing for an id the stream never
// had (past its last event) or for another stream's.
test('replayAfter with allowGap: an id older than the oldest kept event gives every kept event; unknown, future and foreign ids still give nothing', async () => {
  const s = createMemoryEventStore({ maxEventsPerStream: 3 });
  for (let seq = 0; seq <= 6; seq++) await s.put('g', seq, seq === 0 ? '' : `e${seq}`);
  await s.put('other', 0, '');
  const kept = [4, 5, 6].map((n) => ({ id: `g.${n}`, data: `e${n}` }));
  assert.equal(await s.replayAfter('g', 'g.1'), undefined);
  assert.deepEqual(await s.replayAfter('g', 'g.1', { allowGap: true }), kept);
  assert.deepEqual(await s.replayAfter('g', 'g.0', { allowGap: true }), kept);
  // Within the buffer it is the exact replay, with or without the option.
  assert.deepEqual(await s.replayAfter('g', 'g.4', { allowGap: true }), kept.slice(1));
  assert.equal(await s.replayAfter('g', 'g.7', { allowGap: true }), undefined);
  assert.equal(await s.replayAfter('g', 'other.0', { allowGap: true }), undefined);
  assert.equal(await s.replayAfter('unknown', 'unknown.0', { allowGap: true }), undefined);
  for (const bad of ['g', 'g.', 'g.-1', 'g.01', 'g.1e0']) assert.equal(await s.replayAfter('g', bad, { allowGap: true }), undefined, bad);
});
