// Regression from a stdio-user trial (helper h-t4): the official SDK stdio clients (and so the
// hosts built on them) close a server by ending its stdin, then SIGTERM after 2 s, then SIGKILL.
// `switchyard --serve-stdio` took its signal handlers away once the client's requests were done,
// while it still stopped its stdio child (stdin closed, SIGTERM after upstreamStopTimeoutMs =
// 2 s): the client's SIGTERM came first and ended the gateway by the default action, and a child
// that had not exited at EOF was left running as an orphan (PPID 1), every time. A signal while
// the gateway is shutting down now exits at once (143 / 130), as in HTTP mode, and no child of
// the gateway outlives its exit: any still running is killed (SIGKILL) as the process exits.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { alive, CLI, stillAlive } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');

for (const mode of ['', 'ignore-term'] as const) {
  test(`EOF then SIGTERM (as the SDK clients close): the gateway exits and its child${mode ? ' (ignoring SIGTERM)' : ''} is not left behind`, async (t) => {
    const gw = spawn(
      process.execPath,
      [CLI, '--serve-stdio', '--log-level', 'debug', '--stdio', `"${process.execPath}" "${FIXTURE}" ${mode}`, '--limit', 'upstreamStopTimeoutMs=3000'],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const seen: { pid?: number } = {};
    t.after(() => {
      if (gw.exitCode === null && gw.signalCode === null) gw.kill('SIGKILL');
      if (seen.pid !== undefined && alive(seen.pid)) process.kill(seen.pid, 'SIGKILL');
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      gw.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let err = '';
    const pidSeen = new Promise<number>((resolve) =>
      gw.stderr.on('data', (d: Buffer) => {
        err += d.toString('utf8');
        const m = /"line":"pid (\d+)"/.exec(err);
        if (m) resolve(Number(m[1]));
      }),
    );
    let out = '';
    const answered = new Promise<void>((resolve) =>
      gw.stdout.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        if (out.includes('\n')) resolve();
      }),
    );
    gw.stdin.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }) + '\n',
    );
    await answered;
    const childPid = (seen.pid = await pidSeen);
    assert.ok(alive(childPid));
    gw.stdin.end();
    // The gateway is now stopping its child, which did not exit at EOF; the client's SIGTERM comes.
    // At EOF the child's stop steps are at most 600 ms (EOF_STOP_STEP_MS): the signal comes well
    // inside the first one, once the stop has begun.
    for (let i = 0; i < 100 && !err.includes('"msg":"shutting down"'); i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    gw.kill('SIGTERM');
    const { code, signal } = await exited;
    assert.deepEqual({ code, signal }, { code: 143, signal: null });
    assert.equal(await stillAlive(childPid), false, `child ${childPid} outlived the gateway`);
  });
}
