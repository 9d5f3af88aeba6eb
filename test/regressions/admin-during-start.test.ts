// Regression (left open by an operations trial): the admin listener opened only once every
// upstream's first attempt had ended, after the mounts' listener, so while a start waited (about
// 16 s for an HTTP upstream that accepts and never answers) /healthz and /readyz did not answer
// at all: a probe could not tell a slow start from a dead process, and `starting` was never seen
// on /readyz. Now the admin listener opens before the first attempts: /healthz answers 200 and
// /readyz 503 naming `not listening` and the upstream that is starting; the mounts' listener
// still opens after the attempts.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { configFile, freePort } from '../helpers/ops.js';
import { silentHttp } from '../helpers/stub-http.js';

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function readyz(base: string): Promise<{ status: number; body: { ready: boolean; reasons: string[] } }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as { ready: boolean; reasons: string[] } };
}

/**
 * Starts `switchyard --config` on `upstreams` (default: the embedded demo and `silent`, an HTTP
 * upstream at `silentUrl`), its admin listener on a port of its own; resolves once that answers.
 */
async function startingGateway(
  t: TestContext,
  silentUrl: string,
  upstreams: Record<string, unknown> = { demo: { transport: 'embedded' }, silent: { url: silentUrl } },
) {
  const adminPort = await freePort();
  const file = configFile(t, { listen: { port: 0 }, admin: { port: adminPort }, upstreams });
  const child = spawn(process.execPath, [CLI, '--config', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  const out = { err: '' };
  child.stderr.on('data', (d: Buffer) => (out.err += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  await until('the admin listener', () =>
    fetch(`${admin}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    ),
  );
  return { child, out, exited, admin };
}

test('the admin listener answers while an upstream still makes its first attempt', async (t) => {
  const silent = await silentHttp(t);
  const { child, out, exited, admin } = await startingGateway(t, silent.url);
  // The gateway waits on the silent upstream: its probe has arrived and is held.
  await until('the probe of the silent upstream', () => silent.seen.length > 0);
  const during = await readyz(admin);
  assert.equal(during.status, 503);
  assert.equal(during.body.ready, false);
  assert.ok(during.body.reasons.includes('not listening'), JSON.stringify(during.body));
  assert.ok(
    during.body.reasons.some((r) => r.startsWith('upstream silent is starting')),
    JSON.stringify(during.body),
  );
  assert.doesNotMatch(out.err, /listening on/, 'the mounts listener opens after the first attempts');
  assert.match(out.err, /"msg":"admin listener up"/);

  // The attempt ends (500: the probe gives up): the mounts listen, the upstream is down, reconnecting.
  silent.release();
  await until('the mounts listener', () => /listening on http:\/\/127\.0\.0\.1:\d+\//.test(out.err));
  const after = await readyz(admin);
  assert.equal(after.status, 503);
  assert.ok(!after.body.reasons.includes('not listening'), JSON.stringify(after.body));
  assert.ok(
    after.body.reasons.some((r) => r.startsWith('upstream silent is down')),
    JSON.stringify(after.body),
  );

  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('a SIGTERM during the start, with the admin listener open, stops the start and exits 0', async (t) => {
  const silent = await silentHttp(t);
  const { child, out, exited } = await startingGateway(t, silent.url);
  await until('the probe of the silent upstream', () => silent.seen.length > 0);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.match(out.err, /"msg":"shutting down"/);
  assert.match(out.err, /"msg":"stopped"/);
});

// Found by an operator's trial of the start-up: while the start waited on an `optional: true`
// upstream's first attempt (the MCP listener opens only once every first attempt has ended,
// optional or not), /readyz said only `not listening`: an operator could not see which upstream
// held the start back. An optional upstream is never a reason once the gateway listens, but while
// its first attempt holds the start it is named, `upstream NAME is starting`, as any other.
test('/readyz names an optional upstream whose first attempt holds the start back', async (t) => {
  const silent = await silentHttp(t);
  const { child, out, exited, admin } = await startingGateway(t, silent.url, { late: { url: silent.url, optional: true } });
  await until('the probe of the silent upstream', () => silent.seen.length > 0);
  const during = await readyz(admin);
  assert.deepEqual([during.status, during.body.reasons], [503, ['not listening', 'upstream late is starting']]);

  // Once the start is over, an optional upstream is no reason, down or not.
  silent.release();
  await until('the mounts listener', () => /listening on http:\/\/127\.0\.0\.1:\d+\//.test(out.err));
  const after = await readyz(admin);
  assert.deepEqual([after.status, after.body], [200, { ready: true, reasons: [] }]);

  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
