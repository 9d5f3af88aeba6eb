// A reload's error named an aggregate member as a mount: a call held for a 2026-07-28 client's
// retry through the aggregate mount, on a member the reload replaced, was answered `Upstream
// unavailable: mount asking was removed or replaced by a config reload; request aborted`, though
// the client called the aggregate mount and `asking` is an upstream in it; and a call the reload
// cut on a removed aggregate mount was told `mount aggregate`, a name no config gives. Now the
// member is named as an upstream of the aggregate mount, and the aggregate mount as itself. A mount
// of one upstream keeps `mount NAME` (reload-cut-not-shutdown, held-call-drain-reload).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const ELICITING = path.join(REPO_ROOT, 'test/fixtures/eliciting-server.mjs');
const CAPS = { elicitation: {} };
const ASK = { name: 'asking__ask-many', arguments: { count: 1, tag: 'held' } };

async function startWith(t: Parameters<typeof startCli>[0], config: string): Promise<{ gw: RunningCli; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-agg-cut-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'gw.json');
  writeFileSync(file, config);
  return { gw: await startCli(t, ['--config', file, '--no-admin']), file };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond());
}

test('a call held through the aggregate mount on a member a reload replaces: the retry names the member as an upstream of the aggregate mount', async (t) => {
  const configOf = (env: Record<string, string>) =>
    JSON.stringify({
      limits: { shutdownGraceMs: 300 },
      aggregate: { path: '/all' },
      upstreams: { asking: { transport: 'stdio', command: process.execPath, args: [ELICITING], env }, demo: { transport: 'embedded' } },
    });
  const { gw, file } = await startWith(t, configOf({}));
  const first = await post(`${gw.origin}/all`, modernBody(1, 'tools/call', ASK, CAPS), modernHeaders('tools/call', ASK.name));
  assert.equal(first.status, 200, first.text);
  const round = (first.json as { result: { resultType: string; inputRequests: Record<string, unknown>; requestState: string } }).result;
  assert.equal(round.resultType, 'input_required');

  writeFileSync(file, configOf({ CHANGED: '1' }));
  gw.child.kill('SIGHUP');
  await until(() => gw.records().some((r) => r.msg === 'config reloaded'));
  assert.deepEqual(gw.records().find((r) => r.msg === 'config reloaded')?.changed, ['asking']);

  const key = Object.keys(round.inputRequests)[0];
  const params = { ...ASK, requestState: round.requestState, inputResponses: { [key]: { action: 'accept', content: { n: 'x' } } } };
  const r = await post(`${gw.origin}/all`, modernBody(2, 'tools/call', params, CAPS), modernHeaders('tools/call', ASK.name));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, {
    jsonrpc: '2.0',
    id: 2,
    error: {
      code: -32000,
      message: 'Upstream unavailable: upstream asking of the aggregate mount was removed or replaced by a config reload; request aborted',
    },
  });
});

test('a call running on the aggregate mount a reload removes: cut naming the aggregate mount', async (t) => {
  const configOf = (aggregate: boolean) =>
    JSON.stringify({
      limits: { shutdownGraceMs: 300 },
      ...(aggregate ? { aggregate: { path: '/all' } } : {}),
      upstreams: { a: { transport: 'embedded' }, b: { transport: 'embedded' } },
    });
  const { gw, file } = await startWith(t, configOf(true));
  const slow = post(
    `${gw.origin}/all`,
    modernBody(7, 'tools/call', { name: 'b__slow', arguments: { steps: 50, stepMs: 200 } }),
    modernHeaders('tools/call', 'b__slow'),
  );
  await new Promise((r) => setTimeout(r, 300));
  writeFileSync(file, configOf(false));
  gw.child.kill('SIGHUP');
  const m = await slow;
  assert.equal(m.status, 200);
  assert.deepEqual(m.json, {
    jsonrpc: '2.0',
    id: 7,
    error: { code: -32000, message: 'Upstream unavailable: the aggregate mount was removed or replaced by a config reload; request aborted' },
  });
});
