// Regression (found by h-trial9, a client author's trial of --serve-stdio): `switchyard
// --serve-stdio` installed its SIGINT, SIGTERM and SIGHUP handlers only once its upstream had
// started, and the start waits for the upstream's first attempt (up to upstreamStartTimeoutMs,
// 30 s by default, for a stdio child's `initialize`). A SIGTERM in that window (the SDK stdio
// clients send one 2 s after closing our stdin) ended the process by Node's default action,
// signal SIGTERM, with nothing logged, and a stdio child that does not exit at its own EOF was
// left running with no parent; a SIGHUP ended it too, though docs/stdio.md says SIGHUP is logged
// and ignored. The HTTP gateway had been fixed for this (signal-during-start). Now a signal during
// the start stops the child in order and exits 0, and SIGHUP is ignored there as well.

import { test, type TestContext } from 'node:test';
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

/**
 * Starts `switchyard --serve-stdio` in front of a stubborn child that never answers its start
 * (nor exits at EOF), and resolves once the child said its pid: the gateway's start waits on it.
 */
async function startingServeStdio(t: TestContext) {
  const gw = spawn(process.execPath, [CLI, '--serve-stdio', '--log-level', 'debug', '--stdio', `"${process.execPath}" "${STUBBORN}" hang-start`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => gw.once('exit', (code, signal) => resolve({ code, signal })));
  let err = '';
  let out = '';
  gw.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const pidSeen = new Promise<number>((resolve, reject) => {
    gw.stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      const m = /"line":"pid (\d+)"/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    gw.once('exit', () => reject(new Error(`exited before the child started: ${err}`)));
  });
  const seen: { pid?: number } = {};
  t.after(async () => {
    if (gw.exitCode === null && gw.signalCode === null) {
      gw.kill('SIGKILL');
      await exited;
    }
    if (seen.pid !== undefined && alive(seen.pid)) process.kill(seen.pid, 'SIGKILL');
  });
  const childPid = (seen.pid = await pidSeen);
  return {
    gw,
    exited,
    childPid,
    stdout: () => out,
    records: () =>
      err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test('--serve-stdio: SIGTERM while the start waits on the stdio child stops the child and exits 0', async (t) => {
  const s = await startingServeStdio(t);
  assert.equal(alive(s.childPid), true);
  s.gw.kill('SIGTERM');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  for (let i = 0; i < 50 && alive(s.childPid); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(alive(s.childPid), false, `child ${s.childPid} outlived the gateway`);
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
  const s = await startingServeStdio(t);
  s.gw.kill('SIGHUP');
  for (let i = 0; i < 100 && !s.records().some((r) => r.signal === 'SIGHUP'); i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(
    s
      .records()
      .filter((r) => r.signal === 'SIGHUP')
      .map((r) => [r.level, r.msg]),
    [[40, '--serve-stdio does not reload its config: SIGHUP ignored']],
  );
  assert.equal(s.gw.exitCode, null);
  assert.equal(s.gw.signalCode, null);
  s.gw.kill('SIGTERM');
  assert.deepEqual(await s.exited, { code: 0, signal: null });
  for (let i = 0; i < 50 && alive(s.childPid); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(alive(s.childPid), false, `child ${s.childPid} outlived the gateway`);
});
