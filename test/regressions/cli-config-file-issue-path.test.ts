// Found by h-docs (2026-12): a --config file refused as a whole (unreadable, not YAML) was printed
// by the start as `  /: cannot read the file: ENOENT`, where `switchyard validate` and the error's
// own message say `(file)`: `/` is the JSON Pointer of a key named "" (RFC 6901), not of the file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';

test('the start names a whole-file config issue as (file), as validate does', () => {
  const file = '/nonexistent/switchyard.yaml';
  const start = spawnSync(process.execPath, [CLI, '--port', '0', '--no-admin', '--config', file], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(start.status, 1);
  assert.equal(start.stderr, `switchyard: Invalid configuration: ${file}: 1 error\n  (file): cannot read the file: ENOENT\n`);
  const validate = spawnSync(process.execPath, [CLI, 'validate', file], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(validate.stdout, `${file}: invalid config, 1 error\n  (file): cannot read the file: ENOENT\n`);
});
