// Regression from a stdio-user trial (helper h-t4): a child that closed its stdout but kept
// running was never noticed. Every call to it then waited for its deadline (requestTimeoutMs),
// and every later call as well, for as long as the child lived: it was neither restarted nor
// marked down. A child whose stdout ended can never answer again: it now gets
// upstreamStopTimeoutMs to exit by itself, then is killed and restarted like one that broke the
// protocol, and its calls fail with SWY_ERR_UPSTREAM_PROTOCOL.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { StdioUpstream } from '../../src/upstreams/stdio/index.js';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/mute-server.mjs');

interface Answer {
  result?: { content?: Array<{ text?: string }> };
  error?: { code: number; message: string };
}

/** A 2026-07-28 tools/call; resolves with its JSON-RPC answer. */
async function call(url: string, id: number, name: string, message?: string): Promise<Answer> {
  const r = await post(url, modernBody(id, 'tools/call', { name, arguments: message === undefined ? {} : { message } }), modernHeaders('tools/call', name));
  return r.json as Answer;
}

test('a stdio child that closes its stdout and keeps running is killed and restarted; its call fails at once, not at its deadline', async (t) => {
  const gw = await gateway(t, {
    stdio: `"${process.execPath}" "${FIXTURE}"`,
    limits: { requestTimeoutMs: 20_000, upstreamStopTimeoutMs: 300, upstreamBackoffMinMs: 100 },
  });
  const up = gw.upstreams.get('default') as StdioUpstream;
  const health = gw.supervised.get('default')!;
  const firstPid = up.pid!;
  assert.equal((await call(gw.url, 1, 'echo', 'before')).result?.content?.[0]?.text, 'echo: before');
  const upAgain = new Promise<void>((resolve) => health.onChange((s) => s === 'up' && resolve()));
  const started = Date.now();
  const muted = await call(gw.url, 2, 'mute');
  assert.ok(Date.now() - started < 5_000, `the call waited ${Date.now() - started} ms`);
  assert.equal(muted.error?.code, -32603);
  assert.match(String(muted.error?.message), /^Upstream protocol error: it closed its stdout/);
  assert.throws(() => process.kill(firstPid, 0), /ESRCH/);
  await upAgain;
  assert.notEqual(up.pid, firstPid);
  assert.equal((await call(gw.url, 3, 'echo', 'after')).result?.content?.[0]?.text, 'echo: after');
  assert.ok(gw.records.some((r) => r.msg === 'upstream killed' && r.reason === 'it closed its stdout'));
});
