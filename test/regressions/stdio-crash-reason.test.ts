// Found by an operator trial: a Node MCP server that threw at start (a module not found, a
// missing token) was reported as `child exited during start (1); last stderr line: Node.js
// v20.20.2`, the footer Node prints after every crash, in the log, `/readyz` and the CLI's
// start-failure line, so the operator had to rerun the command by hand to learn why. The line
// quoted is now the last one that is not part of Node's crash trailer (stack frames, the error
// object's properties, the require stack, the footer): the error line itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { validateConfig } from '../../src/config/load.js';
import { recordingLogger } from '../helpers/gateway.js';

test('a Node child that crashes at start: the log quotes its error line, not the Node.js footer', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const missing = path.join(dir, 'server.js');
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      admin: false,
      limits: { upstreamBackoffMinMs: 60000, upstreamBackoffMaxMs: 60000 },
      upstreams: {
        nomodule: { command: process.execPath, args: [missing] },
        throws: { command: process.execPath, args: ['-e', "throw new Error('GITHUB_TOKEN is required')"] },
        esm: { command: process.execPath, args: ['--input-type=module', '-e', "import 'no-such-package-swy'"] },
        plain: { command: process.execPath, args: ['-e', "process.stderr.write('cannot start: no token\\n  \\n'); process.exit(3)"] },
      },
    },
    'test',
    { expandEnv: false },
  );
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config, recordingLogger(records));
  t.after(() => gw.close());
  const down = Object.fromEntries(records.filter((r) => r.msg === 'upstream down').map((r) => [r.upstream, r.err]));
  assert.match(
    String(down.esm),
    /^Upstream unavailable: child exited during start \(1\); last stderr line: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'no-such-package-swy' imported from \S+$/,
  );
  delete down.esm;
  assert.deepEqual(down, {
    nomodule: `Upstream unavailable: child exited during start (1); last stderr line: Error: Cannot find module '${missing}'`,
    throws: 'Upstream unavailable: child exited during start (1); last stderr line: Error: GITHUB_TOKEN is required',
    plain: 'Upstream unavailable: child exited during start (3); last stderr line: cannot start: no token',
  });
});

// Named in the closing notes of the last round: the filter skipped every line that starts with
// `- ` (a require stack's entry) wherever it stood, so a child whose last words were `- config
// missing` was reported by the line before them. Only Node's trailer is skipped now: `- ` lines
// under `Require stack:` right above the frames of an uncaught error, and property-like lines only
// after such frames.
test('a child whose last stderr line merely looks like a trailer line is quoted by it; a real require stack is still skipped', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // a.js requires b.js, which requires a package that is not there: Node prints `Require stack:` and a `- ` line for each.
  writeFileSync(path.join(dir, 'a.js'), "require('./b.js');\n");
  writeFileSync(path.join(dir, 'b.js'), "require('no-such-package-swy');\n");
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      admin: false,
      limits: { upstreamBackoffMinMs: 60000, upstreamBackoffMaxMs: 60000 },
      upstreams: {
        dash: { command: process.execPath, args: ['-e', "process.stderr.write('loading settings\\n- config missing\\n'); process.exit(2)"] },
        indented: { command: process.execPath, args: ['-e', "process.stderr.write('starting\\n  retry: never\\n'); process.exit(4)"] },
        required: { command: process.execPath, args: [path.join(dir, 'a.js')] },
      },
    },
    'test',
    { expandEnv: false },
  );
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config, recordingLogger(records));
  t.after(() => gw.close());
  const down = Object.fromEntries(records.filter((r) => r.msg === 'upstream down').map((r) => [r.upstream, r.err]));
  assert.deepEqual(down, {
    dash: 'Upstream unavailable: child exited during start (2); last stderr line: - config missing',
    indented: 'Upstream unavailable: child exited during start (4); last stderr line:   retry: never',
    required: "Upstream unavailable: child exited during start (1); last stderr line: Error: Cannot find module 'no-such-package-swy'",
  });
});
