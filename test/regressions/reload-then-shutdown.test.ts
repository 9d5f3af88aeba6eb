// Regression (found by an operations trial): a SIGTERM while a reload was starting a new upstream
// (its first attempt: about 16 s for an HTTP upstream that accepts and never answers, up to
// upstreamStartTimeoutMs) waited for that attempt before the drain began. Meanwhile /readyz said
// `draining` but every mount went on admitting new requests (200), in-flight calls got their
// shutdownGraceMs only after it, the new upstream was logged as served without and set
// reconnecting, and the given-up reload was logged at error with a stack. Now admission ends
// when the shutdown begins, the upstream still starting is stopped at once, and the reload is
// logged as given up (info).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { silentHttp } from '../helpers/stub-http.js';

test('SIGTERM during a reload that starts a new upstream: new requests are refused at once, the reload is given up', async (t) => {
  const silent = await silentHttp(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-reload-shutdown-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.json');
  writeFileSync(file, JSON.stringify({ upstreams: { demo: { transport: 'embedded' } } }));
  const run = await startCli(t, ['--config', file, '--no-admin']);
  const call = () => post(run.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal((await call()).status, 200);

  writeFileSync(file, JSON.stringify({ upstreams: { demo: { transport: 'embedded' }, silent: { url: silent.url } } }));
  run.child.kill('SIGHUP');
  // The reload's first attempt at the new upstream is under way: its probe waits for an answer.
  while (silent.seen.length === 0) await new Promise((r) => setTimeout(r, 20));
  run.child.kill('SIGTERM');
  while (!run.records().some((r) => r.msg === 'shutting down')) await new Promise((r) => setTimeout(r, 20));

  const refused = await call();
  assert.equal(refused.status, 503);
  assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Server is shutting down' } });
  assert.equal(await run.exited, 0);
  const after = run.records().slice(run.records().findIndex((r) => r.msg === 'shutting down'));
  assert.deepEqual(
    after.filter((r) => /reload|serving without|upstream down|reconnect/.test(String(r.msg))).map((r) => [r.level, r.msg]),
    [[30, 'config reload given up: shutting down']],
  );
});
