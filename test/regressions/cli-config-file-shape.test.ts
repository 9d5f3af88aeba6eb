// Regression (found by an operator's trial of bad config files): `switchyard validate` refused a
// file that is not a mapping and a file over MAX_CONFIG_FILE_BYTES, but `switchyard --config`
// took both. A file holding a scalar, a list or null gave way to the flags laid over it
// (`--port 0`), and the gateway started on the embedded demo, exit code 0 and no word; the start
// read the file whole, so a 5 MB file was accepted and `--config /dev/zero` ran out of memory
// (a V8 abort with a native stack trace). Both now exit 1 with the same message as `validate`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';

/** Runs `switchyard --config FILE --port 0 --no-admin`; a start that does not fail is stopped after 5 s. */
function start(file: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, '--config', file, '--port', '0', '--no-admin'],
      { timeout: 5000, killSignal: 'SIGKILL' },
      (err, _stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number | null }).code ?? null) : 0, stderr });
      },
    );
    child.stdin?.end();
  });
}

test('--config refuses a file that is not a mapping, as validate does, instead of starting the demo', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-shape-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of [
    ['scalar.yaml', 'just a string\n'],
    ['list.json', '[1, 2]\n'],
    ['null.yaml', 'null\n'],
  ]) {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    const { code, stderr } = await start(file);
    assert.equal(code, 1, `${name}: ${stderr}`);
    assert.match(stderr, /must be an object \(a YAML mapping\)/, name);
    assert.doesNotMatch(stderr, /listening on/, name);
  }
});

test('--config refuses a file larger than MAX_CONFIG_FILE_BYTES and a device, as validate does', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-shape-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const big = path.join(dir, 'big.yaml');
  writeFileSync(big, ' '.repeat(5 * 1024 * 1024) + '\nupstreams: { a: { command: node } }\n');
  for (const file of [big, '/dev/zero']) {
    const { code, stderr } = await start(file);
    assert.equal(code, 1, `${file}: ${stderr.slice(-500)}`);
    assert.match(stderr, /larger than 4194304 bytes: not a config file/, file);
  }
});
