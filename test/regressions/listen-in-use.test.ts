// Regression: a port in use stopped the start with its cause said two or three times
// (`Cannot listen: admin listener 127.0.0.1:P: listen EADDRINUSE: address already in use
// 127.0.0.1:P (listen EADDRINUSE: address already in use 127.0.0.1:P)`). The line now names the
// listener, the address and the cause once, then what to do. And with an upstream that did not
// start either, the log also said `serving without an upstream that did not start` (warn) and
// scheduled its reconnects for a gateway that never served: only the listen failure is reported.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { freePort } from '../helpers/servers.js';

/** A listener on 127.0.0.1 that holds a port for the test; resolves with the port. */
async function occupied(t: { after(fn: () => Promise<void>): void }): Promise<number> {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  return (blocker.address() as net.AddressInfo).port;
}

/** Runs the CLI to its exit (SIGKILL after 20 s); resolves with the exit code, the stderr lines that are not JSON log records, and the records. */
async function runToExit(
  t: { after(fn: () => void): void },
  args: string[],
): Promise<{ code: number | null; lines: string[]; records: Array<{ level: number; msg: string }> }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
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
    records: all.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string }),
  };
}

test('an admin port in use: exit 1 with one line naming the admin listener, the address and the cause once, then what to do', async (t) => {
  const port = await occupied(t);
  const r = await runToExit(t, ['--port', '0', '--admin-port', String(port)]);
  assert.equal(r.code, 1);
  assert.deepEqual(r.lines, [
    `switchyard: SWY_ERR_LISTEN_FAILED: Cannot listen: admin listener 127.0.0.1:${port}: address already in use (EADDRINUSE); ` +
      'free that port, pick another with --admin-port (0 picks a free one), or turn the admin listener off with --no-admin',
  ]);
  // The admin port is checked before anything is prepared: nothing started, so nothing is said to
  // shut down (before, `shutting down` came first, as if a running gateway had stopped).
  assert.deepEqual(
    r.records.map((x) => x.msg),
    [],
  );
});

test('an MCP port in use: exit 1 with one line naming the MCP listener, the address and the cause once, then what to do', async (t) => {
  const port = await occupied(t);
  const r = await runToExit(t, ['--port', String(port), '--no-admin']);
  assert.equal(r.code, 1);
  assert.deepEqual(r.lines, [
    `switchyard: SWY_ERR_LISTEN_FAILED: Cannot listen: MCP listener 127.0.0.1:${port}: address already in use (EADDRINUSE); free that port, or pick another with --port (0 picks a free one)`,
  ]);
});

for (const which of ['MCP', 'admin'] as const) {
  test(`an ${which} port in use and an upstream that did not start: only the listen failure, nothing about serving without it or reconnecting`, async (t) => {
    const port = await occupied(t);
    const dead = await freePort();
    const ports = which === 'MCP' ? ['--port', String(port), '--no-admin'] : ['--port', '0', '--admin-port', String(port)];
    const r = await runToExit(t, [...ports, '--upstream', `http://127.0.0.1:${dead}/mcp`]);
    assert.equal(r.code, 1);
    assert.equal(r.lines.length, 1);
    assert.match(
      r.lines[0],
      new RegExp(`^switchyard: SWY_ERR_LISTEN_FAILED: Cannot listen: ${which} listener 127\\.0\\.0\\.1:${port}: address already in use`),
    );
    assert.deepEqual(
      r.records.filter((x) => x.level >= 40 || /upstream|serving/.test(x.msg)),
      [],
    );
  });
}

test('an MCP port in use fails the start before any upstream starts: no stdio child is spawned', async (t) => {
  // Found by an operator trial: the port was tried only after every upstream's first attempt, so
  // children were spawned for nothing and, beside a hanging HTTP upstream, the failure took 16 s.
  const port = await occupied(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-listen-first-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'spawned');
  const script = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x'); setInterval(() => {}, 1000);`;
  const r = await runToExit(t, ['--port', String(port), '--no-admin', '--stdio', `"${process.execPath}" -e "${script.replace(/"/g, '\\"')}"`]);
  assert.equal(r.code, 1);
  assert.match(r.lines[0] ?? '', new RegExp(`^switchyard: SWY_ERR_LISTEN_FAILED: Cannot listen: MCP listener 127\\.0\\.0\\.1:${port}: address already in use`));
  assert.equal(existsSync(marker), false, 'the stdio child was spawned before the port was tried');
});
