// Regression from a stdio-user trial (helper h-t4): a stdio child that crashed at each restart
// logged every failed attempt twice at error level as `upstream exited`: once with its exit
// status, once more with the start failure as an error object and its stack trace (an expected
// operational event, not a fault of the gateway). The second record is now `upstream restart
// failed` at warn with the failure as text (its exit status and last stderr line), as the
// supervisor's `upstream reconnect failed` is.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/once-server.mjs');

test('a child that fails each restart: one upstream exited per exit, and a warn naming why the restart failed, with no stack', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-once-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'started');
  const gw = await gateway(t, {
    stdio: `"${process.execPath}" "${FIXTURE}" "${marker}"`,
    limits: { upstreamBackoffMinMs: 20, upstreamBackoffMaxMs: 50 },
  });
  await post(gw.url, modernBody(1, 'tools/call', { name: 'die', arguments: {} }), modernHeaders('tools/call', 'die'));
  const failed = () => gw.records.filter((r) => r.msg === 'upstream restart failed');
  for (let i = 0; i < 200 && failed().length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(failed().length >= 2, JSON.stringify(gw.records.filter((r) => String(r.msg).startsWith('upstream'))));
  for (const r of failed()) {
    assert.equal(r.level, 40);
    assert.equal(r.upstream, 'default');
    assert.match(String(r.err), /^Upstream unavailable: child exited during start \(7\); last stderr line: cannot start: /);
  }
  const exited = gw.records.filter((r) => r.msg === 'upstream exited');
  assert.ok(
    exited.every((r) => r.err === undefined && (r.code === 4 || r.code === 7)),
    JSON.stringify(exited),
  );
});
