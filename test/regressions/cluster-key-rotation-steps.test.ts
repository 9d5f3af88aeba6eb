// Found by a trial (2026-12, three replicas behind nginx): docs/scaling.md said to rotate the
// cluster key by deploying `NEW,OLD` everywhere, then `NEW`. During that first rolling deploy a
// replica already on `NEW,OLD` seals session ids with NEW, and every replica still on `OLD`
// answers them 404. The documented rotation is now three rollouts, `OLD,NEW`, `NEW,OLD`, `NEW`:
// at every moment of each, an id sealed by any replica opens on every other. This test checks
// both with the real sealer, for every pair of configs that live side by side during a rollout.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSealer, parseClusterKeys } from '../../src/cluster/seal.js';

const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');

/** For a rollout from config `a` to config `b`: does an id sealed under either open under both? */
function rolloutKeepsSessions(a: string, b: string): boolean {
  const sealers = [a, b].map((k) => createSealer({ keys: parseClusterKeys(k) }));
  const expires = Date.now() + 60_000;
  return sealers.every((s) => sealers.every((o) => o.open('session', s.seal('session', { m: 'x' }, expires)) !== undefined));
}

/** Every rollout of a procedure (each step from the one before, starting at OLD) keeps sessions. */
const procedureKeepsSessions = (steps: string[]) => steps.every((b, i) => rolloutKeepsSessions(i === 0 ? OLD : steps[i - 1], b));

test('the documented three-step key rotation keeps every session open during each rollout; the former two-step one did not', () => {
  assert.equal(procedureKeepsSessions([`${OLD},${NEW}`, `${NEW},${OLD}`, NEW]), true);
  assert.equal(procedureKeepsSessions([`${NEW},${OLD}`, NEW]), false);
  assert.equal(rolloutKeepsSessions(OLD, `${NEW},${OLD}`), false);
});
