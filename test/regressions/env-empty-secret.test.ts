// Found by an operator trial: `Authorization: Bearer ${MODERN_TOKEN}` with MODERN_TOKEN exported
// empty (what Compose passes for `MODERN_TOKEN: ${MODERN_TOKEN}` when the host has none) validated
// and started, and every request went upstream as `Authorization: Bearer `, failing there as a
// refused credential. `${NAME:?message}` now refuses an empty or unset NAME, as the shell and
// Compose do, so a secret can be required; `${NAME}` keeps expanding an empty value to ''.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { CLI } from '../helpers/cli.js';

const file = (token: string) => ({ upstreams: { gh: { url: 'https://mcp.example.com/mcp', headers: { Authorization: `Bearer ${token}` } } } });

test('${NAME:?message}: an empty or unset variable is an error naming the path, a set one expands', () => {
  const headers = (env: Record<string, string>) =>
    (validateConfig(file('${GH_TOKEN:?the token of the gh upstream}'), 'test', { env }).upstreams.gh as { headers?: unknown }).headers;
  assert.deepEqual(headers({ GH_TOKEN: 'abc' }), { Authorization: 'Bearer abc' });
  for (const [env, what] of [
    [{ GH_TOKEN: '' }, 'empty'],
    [{}, 'not set'],
  ] as const) {
    assert.throws(() => validateConfig(file('${GH_TOKEN:?the token of the gh upstream}'), 'test', { env }), {
      code: 'SWY_ERR_CONFIG_INVALID',
      data: {
        source: 'test',
        errors: [{ path: '/upstreams/gh/headers/Authorization', message: `environment variable GH_TOKEN is ${what}: the token of the gh upstream` }],
      },
    });
  }
  assert.throws(() => validateConfig(file('${GH_TOKEN:?}'), 'test', { env: { GH_TOKEN: '' } }), {
    data: { source: 'test', errors: [{ path: '/upstreams/gh/headers/Authorization', message: 'environment variable GH_TOKEN is empty' }] },
  });
  // ${NAME} alone is as before: an empty value expands to ''.
  assert.deepEqual((validateConfig(file('${GH_TOKEN}'), 'test', { env: { GH_TOKEN: '' } }).upstreams.gh as { headers?: unknown }).headers, {
    Authorization: 'Bearer ',
  });
});

test('switchyard validate refuses a required secret exported empty (exit 1, the path on stdout)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-env-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'switchyard.yaml');
  writeFileSync(f, 'upstreams:\n  gh:\n    url: https://mcp.example.com/mcp\n    headers:\n      Authorization: Bearer ${GH_TOKEN:?}\n');
  const r = await new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile(process.execPath, [CLI, 'validate', f], { env: { ...process.env, GH_TOKEN: '' } }, (err, stdout) =>
      resolve({ code: err ? Number((err as { code?: number }).code) : 0, stdout }),
    ),
  );
  assert.deepEqual(r, { code: 1, stdout: `${f}: invalid config, 1 error\n  /upstreams/gh/headers/Authorization: environment variable GH_TOKEN is empty\n` });
});
