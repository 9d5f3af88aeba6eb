// Regression (found by an operator's trial of the start-up): while the start waited on an
// `optional: true` upstream's first attempt (the MCP listener opens only once every first attempt
// has ended, optional or not), /readyz and /status.json said only `not listening`: an operator
// could not see which upstream held the start back. An optional upstream is never a reason once
// the gateway listens, but while its first attempt holds the start it is named, `upstream NAME is
// starting`, as any other.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { configFile } from '../helpers/ops.js';
import { freePort } from '../helpers/servers.js';
import { silentHttp } from '../helpers/stub-http.js';

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('/readyz names an optional upstream whose first attempt holds the start back', async (t) => {
  const silent = await silentHttp(t);
  const adminPort = await freePort();
  const file = configFile(t, { listen: { port: 0 }, admin: { port: adminPort }, upstreams: { late: { url: silent.url, optional: true } } });
  const child = spawn(process.execPath, [CLI, '--config', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  await until('the probe of the silent upstream', () => silent.seen.length > 0);
  await until('the admin listener', () => /"msg":"admin listener up"/.test(err));

  const res = await fetch(`${admin}/readyz`);
  const body = (await res.json()) as { ready: boolean; reasons: string[] };
  assert.equal(res.status, 503);
  assert.deepEqual(body.reasons, ['not listening', 'upstream late is starting']);

  // Once the start is over, an optional upstream is no reason, down or not.
  silent.release();
  await until('the mounts listener', () => /listening on http:\/\/127\.0\.0\.1:\d+\//.test(err));
  const after = await fetch(`${admin}/readyz`);
  assert.deepEqual([after.status, await after.json()], [200, { ready: true, reasons: [] }]);

  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
