// Found by a review of the start-up lines: the MCP port is tried before the upstreams' first
// attempts (`checkListenable`), and bound after them. A port another process took in between
// failed the bind, and the log then read as the stop of a running gateway: `shutting down` came
// before the start-failure line, for a gateway that never listened. Now the failure line follows
// the start's own lines directly, with no `shutting down`, and the exit code is a failed start's (1).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { freePort } from '../helpers/servers.js';
import { silentHttp } from '../helpers/stub-http.js';

test('an MCP port taken while the upstreams make their first attempts: the failure first, no `shutting down`, exit 1', async (t) => {
  const port = await freePort();
  // The gateway's first attempts wait on this upstream until release(): the port is free when the
  // start tries it, and taken when the listener binds. The stdio child is up by then, and stopped.
  const upstream = await silentHttp(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-listen-taken-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.json');
  const config = {
    listen: { host: '127.0.0.1', port },
    admin: false,
    limits: { upstreamBackoffMinMs: 10 },
    upstreams: { held: { url: upstream.url }, child: { command: process.execPath, args: [path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs'), 'stdio'] } },
  };
  writeFileSync(file, JSON.stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k.startsWith('SWITCHYARD_')) delete env[k];
  const child = spawn(process.execPath, [CLI, '--config', file], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  while (upstream.seen.length === 0) {
    assert.equal(child.exitCode, null, err);
    await new Promise((r) => setTimeout(r, 20));
  }
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  upstream.release();
  assert.equal(await exited, 1);

  // Log records by message, and the CLI's plain lines as they are, in the order written. The held
  // upstream fails once released (500) and reconnects from then on, during the start (how many
  // times before the bind fails depends on the machine): its `upstream down` and reconnect lines
  // are the start's own, and none comes after the failure line (its reconnects were stopped).
  const written = err.split('\n').filter((l) => l !== '');
  const record = (l: string) => (l.startsWith('{') ? (JSON.parse(l) as { msg: string; upstream?: string }) : undefined);
  const retrying = (r: { msg: string; upstream?: string } | undefined) =>
    r?.upstream === 'held' && /^upstream (down|reconnecting|reconnect failed)$/.test(r.msg);
  const lines = written.filter((l) => !retrying(record(l))).map((l) => (l.startsWith('{') ? `log: ${record(l)!.msg}` : l));
  assert.deepEqual(lines, [
    'log: upstream starting',
    'log: upstream ready',
    `switchyard: SWY_ERR_LISTEN_FAILED: Cannot listen: MCP listener 127.0.0.1:${port}: address already in use (EADDRINUSE); free that port, or pick another with --port (0 picks a free one)`,
  ]);
  assert.equal(written.at(-1), lines.at(-1));
});
