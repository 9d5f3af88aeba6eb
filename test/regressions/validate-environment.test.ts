// Found by h-docs (2026-12): `switchyard validate FILE` read the file alone, without the
// SWITCHYARD_* variables the start lays over it (`--help`: "a flag, then the environment, then the
// config file"). A file that leaves `cluster.key` to SWITCHYARD_CLUSTER_KEY was refused with
// "/cluster/key: is required with cluster.redis (set SWITCHYARD_CLUSTER_KEY …)" while that variable
// was set and the gateway started with it, and `validate --effective` ("file, environment and
// defaults merged") printed the file's port, not the SWITCHYARD_PORT the gateway binds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI } from '../helpers/cli.js';

async function validate(args: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'validate', ...args], { env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
}

test('validate lays the SWITCHYARD_* variables over the file, as the start does', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-validate-env-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'listen: { port: 7711 }\ncluster:\n  redis: redis://127.0.0.1:6379/0\nupstreams:\n  a: { transport: embedded }\n');
  const key = Buffer.alloc(32, 7).toString('base64');
  const ok = await validate([file], { SWITCHYARD_CLUSTER_KEY: key });
  assert.deepEqual(ok, { code: 0, stdout: 'ok: 1 upstream\n' });
  const eff = await validate(['--effective', file], { SWITCHYARD_CLUSTER_KEY: key, SWITCHYARD_PORT: '7722', SWITCHYARD_REPLICA_ID: 'r-9' });
  assert.equal(eff.code, 0, eff.stdout);
  const config = JSON.parse(eff.stdout) as { listen: { port: number }; cluster: { key: string; replicaId: string } };
  assert.equal(config.listen.port, 7722);
  assert.equal(config.cluster.replicaId, 'r-9');
  // Without the variable the file is still refused, with the message that names it.
  const { SWITCHYARD_CLUSTER_KEY: _drop, ...rest } = process.env;
  const refused = await promisify(execFile)(process.execPath, [CLI, 'validate', file], { env: rest }).then(
    () => 0,
    (e: { code: number }) => e.code,
  );
  assert.equal(refused, 1);
});

// Also found by h-docs: `validate` said `ok` for a file whose listener is beyond loopback with a
// mount that has no `auth`, which the start refuses (SWY_ERR_AUTH_OPEN_LISTENER) unless given
// --allow-unauthenticated; validate now refuses it alike, and takes the same flag.
test('validate refuses an open listener as the start does, and accepts it with --allow-unauthenticated', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-validate-open-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'listen: { host: 0.0.0.0, port: 7712 }\nupstreams:\n  a: { transport: embedded }\n');
  const open = await validate([file], {});
  assert.equal(open.code, 1);
  assert.equal(
    open.stdout,
    `${file}: Refusing to serve without authentication on a non-loopback address: 0.0.0.0: /a/mcp has no \`auth\`; ` +
      'configure `auth` (or `auth: { none: true }` to mean it), or pass --allow-unauthenticated\n',
  );
  assert.deepEqual(await validate([file, '--allow-unauthenticated'], {}), { code: 0, stdout: 'ok: 1 upstream\n' });
  writeFileSync(file, 'listen: { host: 0.0.0.0, port: 7712 }\nauth: { none: true }\nupstreams:\n  a: { transport: embedded }\n');
  assert.deepEqual(await validate([file], {}), { code: 0, stdout: 'ok: 1 upstream\n' });
});
