// Regressions from a user trial: failure messages that name their cause (an HTTP+SSE upstream
// on a dead port, a stdio command that does not exist), and a stdio child that sees only an
// allowlisted environment, never the gateway's secrets.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import pino from 'pino';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { INHERITED_ENV_VARS } from '../../src/upstreams/stdio/index.js';
import { connect } from '../helpers/clients.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const require = createRequire(import.meta.url);
const CLI = path.join(REPO_ROOT, 'dist/src/cli/main.js');

/** A port nothing listens on (bound, read back, closed). */
async function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Runs the CLI to its exit; resolves with the exit code, its `switchyard:` stderr lines (the JSON log lines left out) and all of stderr. */
function cli(args: string[]): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    // --require-upstreams: the start fails (and the CLI exits) on an upstream that cannot start.
    const child = spawn(process.execPath, [CLI, '--port', '0', '--no-admin', '--require-upstreams', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit: ${err}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, lines: err.split('\n').filter((l) => l.startsWith('switchyard:')), stderr: err });
    });
  });
}

test('an HTTP+SSE upstream on a dead port: the URL and the connection error, once', async () => {
  const port = await deadPort();
  const url = `http://127.0.0.1:${port}/sse`;
  const pinned = await cli(['--upstream', url, '--upstream-era', '2024-11-05']);
  assert.equal(pinned.code, 1);
  assert.deepEqual(pinned.lines, [
    `switchyard: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: ${new URL(url).origin}: connect ECONNREFUSED 127.0.0.1:${port} (upstream default)`,
  ]);
  const probed = await cli(['--upstream', url]);
  assert.equal(probed.code, 1);
  assert.deepEqual(probed.lines, [
    `switchyard: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: ${new URL(url).origin}: connect ECONNREFUSED 127.0.0.1:${port} (upstream default)`,
  ]);
});

test('a stdio command that does not exist: ENOENT and the command', async () => {
  const r = await cli(['--stdio', 'switchyard-no-such-command-xyz']);
  assert.equal(r.code, 1);
  assert.deepEqual(r.lines, [
    'switchyard: SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: cannot run switchyard-no-such-command-xyz: ENOENT (command not found) (upstream default)',
  ]);
  // The start fails: the log must not say it serves on without the upstream (a trial read both).
  assert.doesNotMatch(r.stderr, /serving without an upstream/);
});

test('a stdio child sees the allowlisted variables and its config env, not a secret of the gateway', async (t) => {
  process.env.SWITCHYARD_TEST_SECRET = 'hunter2';
  t.after(() => delete process.env.SWITCHYARD_TEST_SECRET);
  const config = validateConfig(
    {
      listen: { port: 0 },
      upstreams: {
        everything: {
          command: process.execPath,
          args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
          env: { EVERYTHING_MODE: 'test' },
        },
      },
    },
    'test',
  );
  const gw = await startGatewayFromConfig(config, pino({ level: 'silent' }));
  t.after(() => gw.close());
  const client = await connect('v2-default', gw.mounts[0].url);
  t.after(() => client.close());
  const r = await client.callTool({ name: 'get-env', arguments: {} });
  const env = JSON.parse(String(r.content?.[0]?.text)) as Record<string, string>;
  const inherited = Object.fromEntries(
    INHERITED_ENV_VARS.filter((k) => process.env[k] !== undefined && !process.env[k].startsWith('()')).map((k) => [k, process.env[k]!]),
  );
  // While coverage is collected, Node hands NODE_V8_COVERAGE to every child it spawns; under npm test,
  // test/coverage-preload.cjs takes the variable out of this process and gives none to server-everything.
  const coverage = process.env.NODE_V8_COVERAGE === undefined ? {} : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE };
  assert.deepEqual(env, { ...inherited, EVERYTHING_MODE: 'test', ...coverage });
});
