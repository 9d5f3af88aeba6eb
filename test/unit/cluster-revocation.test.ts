// The in-memory session liveness store (src/cluster/revocation.ts): revocation until expiry,
// idle expiry on a clock, and both bounds (revocations refused, activity evicted oldest first).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { createMemorySessionLiveness } from '../../src/cluster/revocation.js';

test('revoke: revoked until untilMs, then the entry lapses; activity is forgotten at once', async () => {
  let clock = 10_000;
  const s = createMemorySessionLiveness({ now: () => clock });
  await s.touch('sess', 60_000);
  assert.equal(await s.lastSeen('sess'), 10_000);
  assert.equal(await s.admit('sess', 60_000), 'live');
  await s.revoke('sess', 20_000);
  assert.equal(await s.isRevoked('sess'), true);
  assert.equal(await s.lastSeen('sess'), undefined);
  assert.equal(await s.admit('sess', 60_000), 'revoked');
  clock = 19_999;
  assert.equal(await s.isRevoked('sess'), true);
  clock = 20_000;
  assert.equal(await s.isRevoked('sess'), false);
  // The sealed token expired at the same moment, so the session cannot come back; touching it starts afresh.
  assert.equal(await s.admit('sess', 60_000), 'idle');
  // A revocation in the past changes nothing but the activity.
  await s.touch('old', 60_000);
  await s.revoke('old', 5_000);
  assert.equal(await s.isRevoked('old'), false);
  assert.equal(await s.lastSeen('old'), undefined);
  // Revoking twice keeps the later end.
  await s.revoke('twice', 50_000);
  await s.revoke('twice', 30_000);
  clock = 40_000;
  assert.equal(await s.isRevoked('twice'), true);
});

test('idle expiry: more than idleMs after the last touch the session is idle; admit renews it', async () => {
  let clock = 0;
  const s = createMemorySessionLiveness({ now: () => clock });
  assert.equal(await s.admit('never', 100), 'idle');
  await s.touch('a', 100);
  clock = 99;
  assert.equal(await s.admit('a', 100), 'live');
  clock = 198;
  assert.equal(await s.lastSeen('a'), 99);
  assert.equal(await s.admit('a', 100), 'live');
  // Like Redis key expiry, idle means more than idleMs since the last touch.
  clock = 298;
  assert.equal(await s.lastSeen('a'), 198);
  clock = 299;
  assert.equal(await s.lastSeen('a'), undefined);
  assert.equal(await s.admit('a', 100), 'idle');
});

test('bounds: live revocations past maxRevoked are refused (never evicted); lapsed ones make room', async () => {
  let clock = 0;
  const s = createMemorySessionLiveness({ maxRevoked: 2, now: () => clock });
  await s.revoke('a', 100);
  await s.revoke('b', 1_000);
  await s.revoke('a', 200); // an existing entry is not a new one
  await assert.rejects(s.revoke('c', 1_000), (err: unknown) => {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_CLUSTER_REVOCATION_LIMIT');
    assert.equal(err.status, 503);
    assert.equal(err.message, 'Too many revoked sessions held');
    return true;
  });
  assert.equal(await s.isRevoked('a'), true);
  assert.equal(await s.isRevoked('b'), true);
  clock = 200;
  await s.revoke('c', 1_000);
  assert.equal(await s.isRevoked('c'), true);
  assert.equal(await s.isRevoked('b'), true);
});

test('bounds: past maxTracked the least recently active session is forgotten (idle)', async () => {
  const s = createMemorySessionLiveness({ maxTracked: 2 });
  await s.touch('a', 60_000);
  await s.touch('b', 60_000);
  assert.equal(await s.admit('a', 60_000), 'live');
  await s.touch('c', 60_000);
  assert.equal(await s.admit('b', 60_000), 'idle');
  assert.equal(await s.admit('a', 60_000), 'live');
  assert.equal(await s.admit('c', 60_000), 'live');
});

test('idleMs must be a positive integer up to a year', async () => {
  const s = createMemorySessionLiveness();
  for (const bad of [0, -1, 1.5, Number.NaN, 400 * 24 * 3_600_000])
    await assert.rejects(s.touch('a', bad), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT');
});

test('changeable state: stored with setState, handed out by admitState with the activity, gone with it, bounded', async () => {
  let clock = 0;
  const s = createMemorySessionLiveness({ now: () => clock });
  assert.deepEqual(await s.admitState('s', 100), { admission: 'idle', state: undefined });
  await s.touch('s', 100);
  assert.deepEqual(await s.admitState('s', 100), { admission: 'live', state: undefined });
  await s.setState('s', '{"l":"info"}', 100);
  clock = 90;
  assert.deepEqual(await s.admitState('s', 100), { admission: 'live', state: '{"l":"info"}' });
  // admitState renewed both: 90 ms later they are still there; 101 ms after the last admit both are gone.
  clock = 180;
  assert.deepEqual(await s.admitState('s', 100), { admission: 'live', state: '{"l":"info"}' });
  clock = 281;
  assert.deepEqual(await s.admitState('s', 100), { admission: 'idle', state: undefined });
  // A revocation drops it too.
  await s.touch('r', 100);
  await s.setState('r', '{}', 100);
  await s.revoke('r', clock + 1_000);
  assert.deepEqual(await s.admitState('r', 100), { admission: 'revoked', state: undefined });
  // Bound: 256 KiB exactly is kept, one byte more refused.
  const at = '"' + 'x'.repeat(256 * 1024 - 2) + '"';
  await s.touch('big', 100);
  await s.setState('big', at, 100);
  await assert.rejects(s.setState('big', at + ' ', 100), (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_SESSION_STATE_TOO_LARGE');
});
