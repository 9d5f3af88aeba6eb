// Regression (found by h-trial9, a client author's trial of `switchyard emulate`): the bench
// installed its SIGINT and SIGTERM handlers only once it listened, and its start waits for the
// upstream's first attempt (up to upstreamStartTimeoutMs, 30 s, for a `--stdio` child's
// `initialize`). A `kill -INT` in that window (docs/testing-clients.md's CI recipe, after too
// short a `sleep`) ended the process by the default action: no report on stdout, no exit 0, and a
// stdio child that does not exit at its own EOF was left running with no parent. Now the start
// is aborted, the child stopped in order, `--report` prints a report of no requests, exit 0.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alive, startOnStubbornChild, stillAlive } from '../helpers/cli.js';

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`emulate --report: ${signal} while the start waits on its stdio child stops the child, prints the report, exits 0`, async (t) => {
    const emu = await startOnStubbornChild(t, ['emulate', '--era', '2025-11-25', '--port', '0', '--report']);
    assert.equal(alive(emu.childPid), true);
    emu.child.kill(signal);
    assert.deepEqual(await emu.exited, { code: 0, signal: null });
    assert.equal(await stillAlive(emu.childPid), false, `child ${emu.childPid} outlived the emulator`);
    assert.equal(emu.stdout(), 'switchyard emulate --era 2025-11-25 (stopped before it listened)\n(no requests)\nverdict: no client requests\n');
    assert.match(emu.stderr(), new RegExp(`switchyard emulate: stopped by ${signal} before it listened\\n`));
  });
}
