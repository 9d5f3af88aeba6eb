// Regression (found by h-trial9, a client author's trial of --serve-stdio): `switchyard
// --serve-stdio` installed its SIGINT, SIGTERM and SIGHUP handlers only once its upstream had
// started, and the start waits for the upstream's first attempt (up to upstreamStartTimeoutMs,
// 30 s by default, for a stdio child's `initialize`). A SIGTERM in that window (the SDK stdio
// clients send one 2 s after closing our stdin) ended the process by Node's default action,
// signal SIGTERM, with nothing logged, and a stdio child that does not exit at its own EOF was
// left running with no parent; a SIGHUP ended it too, though docs/stdio.md says SIGHUP is logged
// and ignored. The HTTP gateway had been fixed for this (signal-during-start). Now a signal during
// the start stops the child in order and exits 0, and SIGHUP is ignored there as well.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alive, startOnStubbornChild, stillAlive } from '../helpers/cli.js';

test('--serve-stdio: SIGTERM while the start waits on the stdio child stops the child and exits 0', async (t) => {
  const s = await startOnStubbornChild(t, ['--serve-stdio']);
  assert.equal(alive(s.childPid), true);
  s.child.kill('SIGTERM');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.equal(await stillAlive(s.childPid), false, `child ${s.childPid} outlived the gateway`);
  const records = s.records();
  assert.deepEqual(
    records.filter((r) => r.msg === 'shutting down').map((r) => r.signal),
    ['SIGTERM'],
  );
  assert.deepEqual(
    records.filter((r) => r.msg === 'stopped').map((r) => r.code),
    [0],
  );
  // Nothing reached stdout: no protocol message was asked for.
  assert.equal(s.stdout(), '');
});

test('--serve-stdio: SIGHUP while the start waits is logged and ignored; SIGTERM then stops it', async (t) => {
  const s = await startOnStubbornChild(t, ['--serve-stdio']);
  s.child.kill('SIGHUP');
  for (let i = 0; i < 100 && !s.records().some((r) => r.signal === 'SIGHUP'); i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(
    s
      .records()
      .filter((r) => r.signal === 'SIGHUP')
      .map((r) => [r.level, r.msg]),
    [[40, '--serve-stdio does not reload its config: SIGHUP ignored']],
  );
  assert.equal(s.child.exitCode, null);
  assert.equal(s.child.signalCode, null);
  s.child.kill('SIGTERM');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  assert.equal(await stillAlive(s.childPid), false, `child ${s.childPid} outlived the gateway`);
});
