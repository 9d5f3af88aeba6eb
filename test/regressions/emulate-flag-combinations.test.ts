// Found by the client-author trial h-redir: `switchyard emulate --probe-body html` without
// `--probe-status` started and served the era as if the flag were not there (the body belongs to
// the --probe-status answer, which never comes). It is now a usage error (exit 2) naming both
// flags, as the other bad combinations are; with --probe-status it starts as before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { H2025, post } from '../helpers/http.js';

test('emulate --probe-body without --probe-status is a usage error naming both flags (exit 2)', () => {
  // SIGKILL at the timeout: an emulator that started (the fault) must not outlive the test.
  const r = spawnSync(process.execPath, [CLI, 'emulate', '--era', '2024-11-05', '--port', '0', '--probe-body', 'html'], {
    encoding: 'utf8',
    timeout: 10_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'switchyard emulate: Invalid command line: --probe-body needs --probe-status (it is the body of that answer)\n');
  assert.equal(r.stdout, '');
});

test('emulate --probe-body with --probe-status starts, and its first POST gets that body', async (t) => {
  const child = spawn(process.execPath, [CLI, 'emulate', '--era', '2024-11-05', '--port', '0', '--probe-status', '404', '--probe-body', 'html'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not started within 20 s: ${err}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /emulating 2024-11-05 on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const r = await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, H2025);
  assert.equal(r.status, 404);
  assert.match(r.text, /^<html>/);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
