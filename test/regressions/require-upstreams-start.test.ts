// Regression: with --require-upstreams, an upstream that failed at start was logged down and its
// reconnects were scheduled (`upstream down`, `upstream reconnecting`, then `upstream reconnect
// failed` while the other upstreams were still trying) before the start gave up and the CLI
// exited 1; with several failing, the error named only the first. A start that is given up now
// schedules and logs nothing of the kind, and its one error names every required upstream that
// failed. An optional upstream that fails is still logged down and reconnected.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { CLI } from '../helpers/cli.js';
import { recordingLogger } from '../helpers/gateway.js';
import { freePort } from '../helpers/servers.js';

/** A child that exits with 3 before it answers anything. */
const EXITING = { command: process.execPath, args: ['-e', 'process.exit(3)'] };

/** Runs the CLI to its exit (SIGKILL after 30 s): the exit code, the stderr lines that are not JSON, and the JSON records. */
async function runToExit(
  t: { after(fn: () => void): void },
  args: string[],
): Promise<{ code: number | null; lines: string[]; records: Array<{ level: number; msg: string; upstream?: string }> }> {
  const child = spawn(process.execPath, [CLI, '--port', '0', '--no-admin', '--require-upstreams', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  t.after(() => {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  const all = err.split('\n').filter((l) => l !== '');
  return {
    code,
    lines: all.filter((l) => !l.startsWith('{')),
    records: all.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; upstream?: string }),
  };
}

test('--require-upstreams and an unreachable upstream: exit 1 with one error naming it, and no down or reconnect lines', async (t) => {
  const port = await freePort();
  const r = await runToExit(t, ['--upstream', `http://127.0.0.1:${port}/mcp`]);
  assert.equal(r.code, 1);
  assert.deepEqual(r.lines, [
    `switchyard: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port} (upstream default)`,
  ]);
  assert.deepEqual(
    r.records.filter((x) => x.level >= 40 || /reconnect/.test(x.msg)),
    [],
  );
});

test('--require-upstreams and two upstreams that fail: one error naming both, and nothing reconnects meanwhile', async (t) => {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-require-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'two.json');
  writeFileSync(file, JSON.stringify({ upstreams: { a: { url: `http://127.0.0.1:${port}/mcp` }, b: EXITING } }));
  const r = await runToExit(t, ['--config', file]);
  assert.equal(r.code, 1);
  assert.deepEqual(r.lines, [
    `switchyard: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port} (upstream a); ` +
      'upstream b: child exited during start (3)',
  ]);
  assert.deepEqual(
    r.records.filter((x) => x.level >= 40 || /reconnect/.test(x.msg)),
    [],
  );
});

test('requireUpstreams and an optional upstream that fails: the gateway starts, the upstream is logged down and reconnects', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const config = validateConfig(
    {
      listen: { port: 0 },
      requireUpstreams: true,
      admin: false,
      // A minute before the next attempt, so that exactly one is scheduled while the test looks.
      limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
      upstreams: { spare: { ...EXITING, optional: true } },
    },
    'test',
  );
  const gw = await startGatewayFromConfig(config, recordingLogger(records));
  t.after(() => gw.close());
  const about = (msg: string) => records.filter((r) => r.msg === msg && r.upstream === 'spare');
  assert.equal(about('upstream down').length, 1);
  assert.deepEqual(
    about('upstream reconnecting').map((r) => r.attempt),
    [1],
  );
  assert.equal(about('serving without an upstream that did not start').length, 1);
});
