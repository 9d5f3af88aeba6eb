// Regression (found by h-trial9, a client author's trial of `switchyard emulate`): the bench
// installed its SIGINT and SIGTERM handlers only once it listened, and its start waits for the
// upstream's first attempt (up to upstreamStartTimeoutMs, 30 s, for a `--stdio` child's
// `initialize`). A `kill -INT` in that window (docs/testing-clients.md's CI recipe, after too
// short a `sleep`) ended the process by the default action: no report on stdout, no exit 0, and a
// stdio child that does not exit at its own EOF was left running with no parent. Now the start
// is aborted, the child stopped in order, `--report` prints a report of no requests, exit 0.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const STUBBORN = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');

/** Whether `pid` runs (a zombie, dead but not yet reaped by whoever adopted it, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // Linux: the state follows the command name in parentheses.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`emulate --report: ${signal} while the start waits on its stdio child stops the child, prints the report, exits 0`, async (t) => {
    const emu = spawn(
      process.execPath,
      [CLI, 'emulate', '--era', '2025-11-25', '--port', '0', '--report', '--log-level', 'debug', '--stdio', `"${process.execPath}" "${STUBBORN}" hang-start`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      emu.once('exit', (code, sig) => resolve({ code, signal: sig })),
    );
    let err = '';
    let out = '';
    emu.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const pidSeen = new Promise<number>((resolve, reject) => {
      emu.stderr.on('data', (d: Buffer) => {
        err += d.toString('utf8');
        const m = /"line":"pid (\d+)"/.exec(err);
        if (m) resolve(Number(m[1]));
      });
      emu.once('exit', () => reject(new Error(`exited before the child started: ${err}`)));
    });
    const seen: { pid?: number } = {};
    t.after(async () => {
      if (emu.exitCode === null && emu.signalCode === null) {
        emu.kill('SIGKILL');
        await exited;
      }
      if (seen.pid !== undefined && alive(seen.pid)) process.kill(seen.pid, 'SIGKILL');
    });
    const childPid = (seen.pid = await pidSeen);
    assert.equal(alive(childPid), true);
    emu.kill(signal);
    assert.deepEqual(await exited, { code: 0, signal: null });
    for (let i = 0; i < 50 && alive(childPid); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(childPid), false, `child ${childPid} outlived the emulator`);
    assert.equal(out, 'switchyard emulate --era 2025-11-25 (stopped before it listened)\n(no requests)\nverdict: no client requests\n');
    assert.match(err, new RegExp(`switchyard emulate: stopped by ${signal} before it listened\\n`));
  });
}
