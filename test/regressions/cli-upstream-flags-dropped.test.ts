// Found by h-docs (2026-12): `--upstream-era`, `--isolation` and `--upstream-header` configure the
// single upstream of the command line, and were dropped without a word where they could not
// apply: beside `--config` (whose upstreams the file names; `--path` there was already a usage
// error) and, for the two HTTP-only ones, without `--upstream` (`--stdio`, the embedded demo). An
// operator who added `--upstream-header 'Authorization:Bearer …'` to a `--config` command line got
// a gateway that sent no such header. Each is now a usage error (exit 2) naming what to do.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';

test('the single upstream flags are usage errors where they would be dropped', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-upstream-flags-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'upstreams:\n  a: { transport: embedded }\n');
  for (const [args, message] of [
    [
      ['--config', file, '--upstream-header', 'Authorization:Bearer x'],
      "--upstream-header sets the single upstream's headers; with --config set upstreams.NAME.headers in the file",
    ],
    [['--config', file, '--isolation', 'shared'], "--isolation sets the single upstream's isolation; with --config set upstreams.NAME.isolation in the file"],
    [['--config', file, '--upstream-era', '2025-06-18'], "--upstream-era sets the single upstream's era; with --config set upstreams.NAME.era in the file"],
    [['--stdio', 'node x.mjs', '--upstream-header', 'a:b'], '--upstream-header applies to an HTTP upstream: give --upstream URL'],
    [['--isolation', 'shared'], '--isolation applies to an HTTP upstream: give --upstream URL'],
    // The embedded demo speaks every era: an era for it was dropped too.
    [['--upstream-era', '2025-06-18'], '--upstream-era applies to an upstream: give --upstream URL or --stdio COMMAND'],
  ] as const) {
    const r = spawnSync(process.execPath, [CLI, '--port', '0', '--no-admin', ...args], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, `switchyard: Invalid command line: ${message}\n`, args.join(' '));
  }
});

test('an embedded upstream in a config file refuses the keys of a child or a connection, which it would drop', async () => {
  const { validateConfig } = await import('../../src/config/load.js');
  assert.throws(
    () =>
      validateConfig({ upstreams: { a: { transport: 'embedded', era: '2025-11-25', isolation: 'shared', env: { A: '1' } } } }, 'test', { expandEnv: false }),
    (err: { data?: { errors?: Array<{ path: string; message: string }> } }) => {
      assert.deepEqual(err.data?.errors, [
        { path: '/upstreams/a/env', message: 'is for stdio or HTTP upstreams; the embedded demo takes none' },
        { path: '/upstreams/a/era', message: 'is for stdio or HTTP upstreams; the embedded demo takes none' },
        { path: '/upstreams/a/isolation', message: 'is for stdio or HTTP upstreams; the embedded demo takes none' },
      ]);
      return true;
    },
  );
});
