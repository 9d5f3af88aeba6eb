// Found by an operator trial: started as the README shows (`npm start -- --config FILE` or
// `npx switchyard --config FILE`), the process the operator knows is npm, which does not pass
// SIGHUP on: `kill -HUP` on it ended npm and left the gateway running on its old config, with
// nothing in the log. Nothing the gateway wrote named its own process. The `listening` log line
// now carries `pid`, the process SIGHUP and SIGTERM must reach (docs/operations.md, "Hot reload").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';

test('the listening line names the gateway pid, and a SIGHUP sent to it reloads the config', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-pid-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'upstreams:\n  demo: { transport: embedded }\n');
  const cli = await startCli(t, ['--no-admin', '--config', file]);
  const listening = cli.records().find((r) => r.msg === 'listening');
  assert.equal(listening?.pid, cli.child.pid);
  process.kill(Number(listening?.pid), 'SIGHUP');
  for (let i = 0; i < 200 && !cli.records().some((r) => r.msg === 'config reloaded'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(
    cli
      .records()
      .filter((r) => r.msg === 'config reloaded')
      .map((r) => [r.added, r.removed, r.changed]),
    [[[], [], []]],
  );
  assert.equal(await cli.stop('SIGTERM'), 0);
});
