// Found by an operator trial: `switchyard --port 7601` (a second gateway beside one on 7600) and
// `switchyard --config FILE --port 7601` stopped with `/admin/port: is the MCP listener's port
// (7601); the admin listener needs its own`, naming a key the operator never wrote (the admin
// listener's default port is 7601) and no way out. The message now names the setting and the
// flags that settle it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';

const HINT =
  "  /admin/port: is the MCP listener's port (7601); the admin listener needs its own: another admin.port (--admin-port; 0 picks a free one), or admin: false (--no-admin)";

function run(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }));
  });
}

test('--port on the admin listener default port: the error says how to move or turn off the admin listener', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-admin-clash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'upstreams:\n  demo: { transport: embedded }\n');
  const flags = await run(['--port', '7601']);
  assert.deepEqual(flags, { code: 2, stderr: `switchyard: Invalid configuration: command line: 1 error\n${HINT}\n` });
  const withFile = await run(['--config', file, '--port', '7601']);
  assert.deepEqual(withFile, { code: 1, stderr: `switchyard: Invalid configuration: ${file}: 1 error\n${HINT}\n` });
});
