// Found by the client-author trial h-redir: `switchyard emulate --upstream URL` with nothing
// listening at URL (connection refused) started, logged "serving without an upstream that did
// not start" and reconnected for ever, while the client under test met 503s and the report gave
// a verdict on them. docs/testing-clients.md does not make that a choice. The emulator now starts
// its upstream as the gateway's `requireUpstreams` does: a dead one fails the start (exit 1),
// naming it and what to do; the library's startEmulator rejects.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator } from '../../src/emulate/index.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { CLI } from '../helpers/cli.js';

/** A loopback URL nothing listens at: a port 0 server's port, closed again. */
async function deadUrl(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}/mcp`;
}

test('emulate --upstream at a refused connection does not start: exit 1, naming the upstream and what to do', async () => {
  const url = await deadUrl();
  const origin = new URL(url).origin;
  // SIGKILL at the timeout: an emulator that started (the fault) must not outlive the test.
  const r = spawnSync(process.execPath, [CLI, 'emulate', '--era', '2025-11-25', '--port', '0', '--upstream', url], {
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(r.status, 1, r.stderr);
  assert.equal(
    r.stderr,
    `switchyard emulate: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: ${origin}: connect ECONNREFUSED ${origin.slice('http://'.length)} (upstream default); emulate does not start without its upstream: start it first, or leave out --upstream to front the embedded demo\n`,
  );
  assert.equal(r.stdout, '');
});

test('emulate --stdio with a command that does not run does not start either (exit 1)', () => {
  const r = spawnSync(process.execPath, [CLI, 'emulate', '--era', '2025-11-25', '--port', '0', '--stdio', '/nonexistent/mcp-server'], {
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /^switchyard emulate: SWY_ERR_UPSTREAM_UNAVAILABLE: .*; emulate does not start without its upstream: .* leave out --stdio /);
});

test('startEmulator with a dead upstreamUrl rejects with SWY_ERR_UPSTREAM_UNAVAILABLE', async () => {
  const url = await deadUrl();
  await assert.rejects(
    startEmulator({ era: '2024-11-05', port: 0, upstreamUrl: url, logLevel: 'silent' }),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE',
  );
});
