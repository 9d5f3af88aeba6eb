// Regression from a stdio-user trial (helper h-t4): `switchyard --serve-stdio` logged `upstream
// ready` twice for one start, once by the upstream's supervisor and once more by the stdio front
// door (with `transport: "stdio"`), so a log reader counted two starts. The supervisor's line is
// the one kept (it is also the one logged after each restart).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { everythingStdioCommand } from '../helpers/gateway.js';

/** Runs `switchyard --serve-stdio ARGS` with stdin closed at once; resolves with its exit code and log records. */
function run(args: string[]): Promise<{ code: number | null; records: Array<Record<string, unknown>> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--serve-stdio', ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`--serve-stdio did not exit: ${err}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const records = err
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, records });
    });
    child.stdin.end();
  });
}

for (const [name, args] of [
  ['the embedded demo', []],
  ['a stdio child', ['--stdio', everythingStdioCommand()]],
] as const) {
  test(`--serve-stdio logs 'upstream ready' once for ${name}`, async () => {
    const { code, records } = await run([...args]);
    assert.equal(code, 0);
    assert.equal(records.filter((r) => r.msg === 'upstream ready').length, 1, JSON.stringify(records.filter((r) => r.msg === 'upstream ready')));
  });
}
