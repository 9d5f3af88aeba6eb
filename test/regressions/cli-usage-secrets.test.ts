// Regression (found by h-secrets): a usage error echoed the argument it refused, whole, on stderr
// (which a container's log collects): `--upstream needs an http(s) URL, got
// ftp://app:PASSWORD@…?token=…`, `--upstream-header expects K:V, got Authorization Bearer TOKEN`
// (a colon forgotten), and `switchyard probe`'s `not an http(s) URL: …`. A URL is now named as a
// stdio child's argv is (`argForDisplay`: userinfo and credential query values `[redacted]`), a
// header argument up to its first space or `=`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';

const SECRET = 'PLANTED_CLI_9d41';

test('usage errors name a refused URL and header argument without the credential in them (exit 2)', () => {
  for (const [args, stderr] of [
    [
      ['--upstream', `ftp://app:${SECRET}@db.internal/x?token=${SECRET}&region=eu`, '--no-admin'],
      'switchyard: Invalid command line: --upstream needs an http(s) URL, got ftp://app:[redacted]@db.internal/x?token=[redacted]&region=eu\n',
    ],
    [
      ['--upstream', 'http://127.0.0.1:1/mcp', '--upstream-header', `Authorization Bearer ${SECRET}`, '--no-admin'],
      'switchyard: Invalid command line: --upstream-header expects K:V, got Authorization …\n',
    ],
    [
      ['--upstream', 'http://127.0.0.1:1/mcp', '--upstream-header', `X-Api-Key=${SECRET}`, '--no-admin'],
      'switchyard: Invalid command line: --upstream-header expects K:V, got X-Api-Key=…\n',
    ],
    [
      ['probe', '--header', `Authorization Basic ${SECRET}:x`, 'http://127.0.0.1:1/mcp'],
      'switchyard probe: Invalid command line: invalid header name "Authorization …": a name is a token (letters, digits, !#$%&\'*+-.^_`|~), no spaces\n',
    ],
    [['probe', `ws://${SECRET}@127.0.0.1:1/mcp`], 'switchyard probe: Invalid command line: not an http(s) URL: ws://[redacted]@127.0.0.1:1/mcp\n'],
    [
      ['emulate', '--era', '2025-11-25', '--upstream', `ftp://u:${SECRET}@h/`],
      'switchyard emulate: Invalid command line: --upstream needs an http(s) URL, got ftp://u:[redacted]@h/\n',
    ],
  ] as const) {
    const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' });
    assert.deepEqual({ status: r.status, stderr: r.stderr, stdout: r.stdout }, { status: 2, stderr, stdout: '' }, args.join(' '));
  }
});
