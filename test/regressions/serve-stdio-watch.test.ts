// Regression: `--serve-stdio --watch --config FILE` was accepted and did nothing: the stdio front
// door keeps the config it started with (only the HTTP gateway has a reloader). It is now a usage
// error, exit 2, naming --watch and --serve-stdio, before anything starts. `--redis` stays
// accepted: the stdio front door's rate limiter then keeps its buckets in that Redis (docs/stdio.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';

/** The CLI with `args` and `input` on stdin; SIGKILL at the timeout, so that a start cannot outlive the test. */
function run(args: string[], input = '') {
  return spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });
}

const REFUSED =
  'switchyard: Invalid command line: --watch reloads the config of the HTTP gateway, and --serve-stdio never reloads: drop --watch, or --serve-stdio to serve HTTP\n';

test('--serve-stdio with --watch is a usage error naming both, with or without --config', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-stdio-watch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'upstreams:\n  demo: { transport: embedded }\n');
  for (const args of [
    ['--serve-stdio', '--watch', '--config', file],
    ['--watch', '--config', file, '--serve-stdio'],
    ['--serve-stdio', '--watch'],
  ]) {
    const r = run(args, '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    assert.deepEqual([r.status, r.stdout, r.stderr], [2, '', REFUSED], args.join(' '));
  }
  // The same file without --watch is served.
  const served = run(['--serve-stdio', '--config', file, '--log-level', 'silent'], '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  assert.deepEqual([served.status, served.stdout], [0, '{"jsonrpc":"2.0","id":1,"result":{}}\n'], served.stderr);
});

test('--serve-stdio logs and ignores SIGHUP: the process goes on serving (it was ended by the signal)', async (t) => {
  const child = spawn(process.execPath, [CLI, '--serve-stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const answered = async (n: number) => {
    for (let i = 0; i < 500 && out.split('\n').length <= n; i++) await new Promise((r) => setTimeout(r, 20));
  };
  child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  await answered(1);
  child.kill('SIGHUP');
  for (let i = 0; i < 250 && !err.includes('SIGHUP ignored'); i++) await new Promise((r) => setTimeout(r, 20));
  child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  await answered(2);
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 0);
  assert.equal(out, '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n');
  assert.match(err, /"signal":"SIGHUP","msg":"--serve-stdio does not reload its config: SIGHUP ignored"/);
});
