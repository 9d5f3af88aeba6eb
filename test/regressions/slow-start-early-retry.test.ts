// Regression (found by an operator trial of a slow start): an upstream whose first attempt failed
// was not retried until every other upstream's first attempt had ended. With a stdio child slow to
// answer `initialize` (up to upstreamStartTimeoutMs, 30 s by default) and an HTTP upstream that was
// not up yet and came up 2 s later, /readyz on the admin listener (open during the start) showed
// the HTTP one `down` for as long as the child took, though it was reachable. Now a failed first
// attempt begins its reconnects (the usual backoff) as soon as it failed, except while the start
// may still be given up (`requireUpstreams` and a required upstream not up yet): that start still
// fails with its one line and no down or reconnect lines. A SIGTERM during the start stops the
// reconnects with everything else and exits 0.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { freePort, stopChild } from '../helpers/servers.js';

const SLOW = path.join(REPO_ROOT, 'test/fixtures/slow-restart-server.mjs');
const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');

type LogRecord = { level: number; msg: string; upstream?: string; attempt?: number };

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A stdio upstream that answers `initialize` only after `delayMs`: the slow-restart fixture, whose
 * marker file already exists, so that its first run is slow too. `dir` holds the marker and its log.
 */
function slowChild(dir: string, delayMs: number): { command: string; args: string[] } {
  const marker = path.join(dir, 'marker');
  writeFileSync(marker, '');
  return { command: process.execPath, args: [SLOW, marker, path.join(dir, 'slow.log'), String(delayMs)] };
}

/**
 * Starts `switchyard --config` on `config` (written into `dir`, its ports as it sets them) without
 * waiting for it to listen ({@link spawnCli}: these starts are slow, or fail); its log records typed.
 */
function runCli(t: TestContext, dir: string, config: unknown, args: string[] = []) {
  const file = path.join(dir, 'switchyard.json');
  writeFileSync(file, JSON.stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k.startsWith('SWITCHYARD_')) delete env[k];
  const cli = spawnCli(t, ['--config', file, ...args], { env, freePorts: false });
  return { ...cli, records: () => cli.records() as LogRecord[] };
}

/** Starts the 2026-07-28 fixture over HTTP on `port` (reserved for it), stopped at teardown. */
function lateServer(t: TestContext, port: number): void {
  const server = spawn(process.execPath, [RAW, 'http'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  t.after(() => stopChild(server));
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-slow-start-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function readyz(admin: string): Promise<{ status: number; reasons: string[] }> {
  const res = await fetch(`${admin}/readyz`);
  return { status: res.status, reasons: ((await res.json()) as { reasons: string[] }).reasons };
}

test('an upstream whose first attempt failed is retried, and up, while a slow stdio child still makes its first attempt', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const [latePort, adminPort] = [await freePort(), await freePort()];
  const gw = runCli(t, dir, {
    listen: { port: 0 },
    admin: { port: adminPort },
    limits: { upstreamBackoffMinMs: 100, upstreamBackoffMaxMs: 400 },
    upstreams: { slow: slowChild(dir, 6_000), late: { url: `http://127.0.0.1:${latePort}/mcp` } },
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  const about = (name: string, msg: string) => gw.records().filter((r) => r.upstream === name && r.msg === msg);

  // `late` is not up yet: its first attempt fails at once, and it is logged down then.
  await until('late to be logged down', () => about('late', 'upstream down').length > 0);
  // It comes up (the 2026-07-28 fixture on the port reserved for it).
  lateServer(t, latePort);

  // Until `late` is up or `slow`'s first attempt is over, whichever comes first: the snapshot then
  // must show `late` up (no reason) while the start still waits on `slow`.
  let seen = await readyz(admin);
  await until('late up, or slow no longer starting', async () => {
    seen = await readyz(admin);
    return !seen.reasons.some((r) => r.startsWith('upstream late ')) || !seen.reasons.includes('upstream slow is starting');
  });
  assert.deepEqual(seen, { status: 503, reasons: ['not listening', 'upstream slow is starting'] });
  // The log line may reach this test's pipe after /readyz already shows the state (pino writes
  // asynchronously): wait for it, then it is the only one.
  await until('late logged ready', () => about('late', 'upstream ready').length > 0, 5_000);
  assert.equal(about('late', 'upstream ready').length, 1);
  assert.equal(about('late', 'upstream reconnecting')[0]?.attempt, 1);

  // The start goes on once `slow` answered; `late` serves by then, so nothing is served without.
  await until('the mounts listener', () => gw.lines().some((l) => /listening on http:\/\/127\.0\.0\.1:\d+\/late\/mcp/.test(l)));
  assert.deepEqual(await readyz(admin), { status: 200, reasons: [] });
  assert.deepEqual(
    gw.records().filter((r) => r.msg === 'serving without an upstream that did not start'),
    [],
  );
  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0);
});

test('SIGTERM while a failed upstream reconnects during a slow start: everything stops, no attempt after it, exit 0', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const deadPort = await freePort();
  const gw = runCli(t, dir, {
    listen: { port: 0 },
    admin: false,
    limits: { upstreamBackoffMinMs: 50, upstreamBackoffMaxMs: 100 },
    upstreams: { slow: slowChild(dir, 20_000), dead: { url: `http://127.0.0.1:${deadPort}/mcp` } },
  });
  // The dead upstream is being retried while the start waits on `slow`.
  await until('a failed reconnect of dead', () => gw.records().some((r) => r.upstream === 'dead' && r.msg === 'upstream reconnect failed'));
  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0);
  const msgs = gw.records().map((r) => r.msg);
  const stop = msgs.indexOf('shutting down');
  assert.ok(stop > 0, msgs.join('\n'));
  assert.deepEqual(
    msgs.slice(stop).filter((m) => /reconnect/.test(m)),
    [],
  );
  assert.equal(msgs.at(-1), 'stopped');
});

test(
  '--require-upstreams, a required upstream that fails at once and a slow one: the one-line failure, no down or reconnect lines',
  { timeout: 60_000 },
  async (t) => {
    const dir = tempDir(t);
    const deadPort = await freePort();
    const gw = runCli(
      t,
      dir,
      {
        listen: { port: 0 },
        admin: false,
        limits: { upstreamBackoffMinMs: 50, upstreamBackoffMaxMs: 100 },
        upstreams: {
          slow: slowChild(dir, 2_000),
          dead: { url: `http://127.0.0.1:${deadPort}/mcp` },
          spare: { url: `http://127.0.0.1:${deadPort}/mcp`, optional: true },
        },
      },
      ['--require-upstreams'],
    );
    assert.equal(await gw.exited, 1);
    assert.deepEqual(gw.lines(), [
      `switchyard: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: http://127.0.0.1:${deadPort}: connect ECONNREFUSED 127.0.0.1:${deadPort} (upstream dead)`,
    ]);
    assert.deepEqual(
      gw.records().filter((r) => r.level >= 40 || /reconnect|serving/.test(r.msg)),
      [],
    );
  },
);

test(
  '--require-upstreams: an optional upstream that failed reconnects once every required one is up, while a slow optional one starts',
  { timeout: 60_000 },
  async (t) => {
    const dir = tempDir(t);
    const latePort = await freePort();
    const gw = runCli(
      t,
      dir,
      {
        listen: { port: 0 },
        admin: false,
        limits: { upstreamBackoffMinMs: 100, upstreamBackoffMaxMs: 400 },
        upstreams: {
          demo: { transport: 'embedded' },
          slow: { ...slowChild(dir, 6_000), optional: true },
          late: { url: `http://127.0.0.1:${latePort}/mcp`, optional: true },
        },
      },
      ['--require-upstreams'],
    );
    await until('late to be logged down', () => gw.records().some((r) => r.upstream === 'late' && r.msg === 'upstream down'));
    lateServer(t, latePort);
    await until('late up', () => gw.records().some((r) => r.upstream === 'late' && r.msg === 'upstream ready'));
    // `slow` (optional) still held the start back then: no mount listened yet.
    assert.deepEqual(
      gw.lines().filter((l) => l.includes('listening on')),
      [],
    );
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  },
);
