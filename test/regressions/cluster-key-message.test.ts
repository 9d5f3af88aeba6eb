// Found by a trial (2026-12): `SWITCHYARD_CLUSTER_KEY=short switchyard validate FILE` printed the
// raw schema text `/cluster/key: must NOT have fewer than 43 characters`, where other fields get
// a message that says what to write. It now says what a key is and how to make one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI } from '../helpers/cli.js';

async function validate(file: string, key: string): Promise<{ code: number; stdout: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'validate', file], { env: { ...process.env, SWITCHYARD_CLUSTER_KEY: key } }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
}

test('validate: a cluster key shorter than 32 bytes of base64 is told what a key is and how to make one; 43 characters pass', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-cluster-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'cluster:\n  redis: redis://127.0.0.1:6379/0\n  key: ${SWITCHYARD_CLUSTER_KEY}\n');
  const short = await validate(file, 'short');
  assert.equal(short.code, 1);
  assert.equal(
    short.stdout,
    `${file}: invalid config, 1 error\n  /cluster/key: must be 32 random bytes in base64 (43 characters or more), e.g. made with \`openssl rand -base64 32\`\n`,
  );
  const ok = await validate(file, Buffer.alloc(32, 9).toString('base64'));
  assert.equal(ok.code, 0, ok.stdout);
});
