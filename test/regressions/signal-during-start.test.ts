// Regression (found by an operations trial): the CLI installed its SIGINT, SIGTERM and SIGHUP
// handlers only once the gateway listened, and a start waits for every upstream's first attempt
// (about 16 s for an HTTP upstream that accepts and never answers; up to upstreamStartTimeoutMs
// for a slow stdio child). A SIGHUP in that window (a reload sent by a supervisor right after a
// restart) ended the process with Node's default action, exit 129, no word logged. A SIGTERM
// ended it with 143 at once, and a stdio child that does not exit at stdin EOF was left running,
// its parent gone. Now SIGTERM/SIGINT during the start stop the upstreams started so far in order
// and exit 0, and a SIGHUP is kept for once the gateway listens.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { silentHttp } from '../helpers/stub-http.js';

const STUBBORN = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts `switchyard --config` on a stubborn stdio child and `upstreamUrl`, and resolves once the
 * child said its pid (it has started; the gateway still waits on the other upstream).
 */
async function startingGateway(t: TestContext, upstreamUrl: string, extraArgs: string[] = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-signal-start-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.json');
  writeFileSync(
    file,
    JSON.stringify({
      listen: { port: 0 },
      admin: false,
      upstreams: { stub: { command: process.execPath, args: [STUBBORN] }, silent: { url: upstreamUrl } },
    }),
  );
  // debug: the child's stderr (its `pid N`) is logged there.
  const child = spawn(process.execPath, [CLI, '--config', file, '--log-level', 'debug', ...extraArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const waiters = new Set<() => void>();
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString('utf8');
    for (const w of [...waiters]) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const waitFor = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const look = () => {
        const m = re.exec(err);
        if (m) {
          waiters.delete(look);
          resolve(m);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(look);
          reject(new Error(`exited before ${re}: ${err}`));
        }
      };
      waiters.add(look);
      child.once('exit', look);
      look();
    });
  const stubPid = Number((await waitFor(/pid (\d+)/))[1]);
  t.after(() => {
    if (alive(stubPid)) process.kill(stubPid, 'SIGKILL');
  });
  return {
    file,
    child,
    exited,
    stubPid,
    waitFor,
    records: () =>
      err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test('SIGTERM while the start waits on an upstream: the started stdio child is stopped, exit 0', async (t) => {
  const silent = await silentHttp(t);
  const gw = await startingGateway(t, silent.url);
  assert.equal(alive(gw.stubPid), true);
  gw.child.kill('SIGTERM');
  assert.deepEqual(await gw.exited, { code: 0, signal: null });
  // The child (which ignores stdin EOF) was stopped in order, not left behind.
  assert.equal(alive(gw.stubPid), false);
  assert.deepEqual(
    gw
      .records()
      .filter((r) => r.msg === 'shutting down')
      .map((r) => r.signal),
    ['SIGTERM'],
  );
});

test('SIGHUP while the start waits on an upstream: the gateway goes on starting and reloads once it listens', async (t) => {
  const silent = await silentHttp(t);
  const gw = await startingGateway(t, silent.url);
  gw.child.kill('SIGHUP');
  await gw.waitFor(/"msg":"reload requested while starting/);
  // The silent upstream gives up at once: the start goes on (it is served as down).
  silent.release();
  await gw.waitFor(/listening on http/);
  await gw.waitFor(/"msg":"config reloaded"/);
  assert.equal(gw.child.exitCode, null);
  assert.equal(gw.child.signalCode, null);
  gw.child.kill('SIGTERM');
  assert.deepEqual(await gw.exited, { code: 0, signal: null });
});

test('--watch: an edit of the config file while the start waits on an upstream is applied once the gateway listens', { timeout: 30_000 }, async (t) => {
  const silent = await silentHttp(t);
  const gw = await startingGateway(t, silent.url, ['--watch']);
  // The edit comes before the watch begins: the silent upstream is taken out of the config.
  writeFileSync(gw.file, JSON.stringify({ listen: { port: 0 }, admin: false, upstreams: { stub: { command: process.execPath, args: [STUBBORN] } } }));
  silent.release();
  await gw.waitFor(/listening on http/);
  await gw.waitFor(/"msg":"config reloaded"/);
  assert.deepEqual(
    gw
      .records()
      .filter((r) => r.msg === 'config reloaded')
      .map((r) => r.removed),
    [['silent']],
  );
  gw.child.kill('SIGTERM');
  assert.deepEqual(await gw.exited, { code: 0, signal: null });
});
