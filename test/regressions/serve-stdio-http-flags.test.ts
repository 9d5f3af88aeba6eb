// Regression: `--serve-stdio --legacy-sse` (and every other flag of the HTTP or admin listener,
// which --serve-stdio does not run) was accepted and did nothing. It is now a usage error, exit 2,
// naming the flags and --serve-stdio, before anything starts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';

/** The CLI with `args` and an empty stdin; SIGKILL at the timeout, so that a start cannot outlive the test. */
function run(args: string[], input = '') {
  return spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });
}

test('--serve-stdio with an HTTP listener flag is a usage error naming both', () => {
  for (const [args, named] of [
    [['--legacy-sse'], '--legacy-sse'],
    [['--no-modern'], '--no-modern'],
    [['--admin-port', '0'], '--admin-port'],
    [['--allowed-origin', 'app.example'], '--allowed-origin'],
    [['--max-body-bytes', '1000'], '--max-body-bytes'],
    // The same bounds given through --limit (found by a trial: they were accepted).
    [['--limit', 'maxConnections=5'], '--limit maxConnections'],
    [['--limit', 'firstByteTimeoutMs=100'], '--limit firstByteTimeoutMs'],
  ] as const) {
    const r = run(['--serve-stdio', ...args]);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      `switchyard: Invalid command line: ${named} is an HTTP listener flag, and --serve-stdio serves one client over stdin/stdout instead: drop ${named}, or --serve-stdio to serve HTTP\n`,
    );
  }
  const several = run(['--port', '0', '--serve-stdio', '--legacy-sse']);
  assert.equal(several.status, 2, several.stderr);
  assert.equal(
    several.stderr,
    'switchyard: Invalid command line: --port, --legacy-sse are HTTP listener flags, and --serve-stdio serves one client over stdin/stdout instead: drop them, or --serve-stdio to serve HTTP\n',
  );
});

test('--serve-stdio still takes --no-admin and the flags it uses', () => {
  const r = run(['--serve-stdio', '--no-admin', '--log-level', 'silent', '--max-subscriptions', '4'], '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '{"jsonrpc":"2.0","id":1,"result":{}}\n');
});
