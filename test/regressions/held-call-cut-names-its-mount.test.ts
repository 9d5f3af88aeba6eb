// A new-user trial of hot reload: a call held for a 2026-07-28 client's retry on an upstream the
// reload replaced was cancelled with `upstream asking of the aggregate mount was removed or
// replaced by a config reload` whenever that upstream was a member of the aggregate mount, even
// when the client had called it through the upstream's own mount (/asking/mcp), which a call
// cut there while running names `mount asking`. The held call now keeps the mount it came through,
// and its cut names that mount: `mount asking` on its own mount, the member of the aggregate mount
// through the aggregate (aggregate-reload-cut has the aggregate's other cases).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const ELICITING = path.join(REPO_ROOT, 'test/fixtures/eliciting-server.mjs');
const CAPS = { elicitation: {} };
const CUT = (what: string) => `Upstream unavailable: ${what} was removed or replaced by a config reload; request aborted`;

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond());
}

type Round = { resultType: string; inputRequests: Record<string, unknown>; requestState: string };

test('calls held on an aggregate member a reload replaces: the retry names the mount each came through', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-held-cut-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'gw.json');
  const configOf = (env: Record<string, string>) =>
    JSON.stringify({
      limits: { shutdownGraceMs: 300 },
      aggregate: { path: '/all' },
      upstreams: { asking: { transport: 'stdio', command: process.execPath, args: [ELICITING], env }, demo: { transport: 'embedded' } },
    });
  writeFileSync(file, configOf({}));
  const gw = await startCli(t, ['--config', file, '--no-admin']);

  // A call held through the member's own mount, then (after another reload) one through the
  // aggregate mount: one at a time, since the member's stdio session routes its elicitation to the
  // one call that could own it (docs/upstreams.md).
  const answers: unknown[] = [];
  for (const [i, m] of [
    { url: `${gw.origin}/asking/mcp`, name: 'ask-many' },
    { url: `${gw.origin}/all`, name: 'asking__ask-many' },
  ].entries()) {
    const call = { name: m.name, arguments: { count: 1, tag: `held-${i}` } };
    const r = await post(m.url, modernBody(i + 1, 'tools/call', call, CAPS), modernHeaders('tools/call', m.name));
    assert.equal(r.status, 200, r.text);
    const round = (r.json as { result: Round }).result;
    assert.equal(round.resultType, 'input_required', r.text);

    const reloads = gw.records().filter((x) => x.msg === 'config reloaded').length;
    writeFileSync(file, configOf({ CHANGED: String(i) }));
    gw.child.kill('SIGHUP');
    await until(() => gw.records().filter((x) => x.msg === 'config reloaded').length > reloads);
    assert.deepEqual(gw.records().filter((x) => x.msg === 'config reloaded')[reloads]?.changed, ['asking']);

    const key = Object.keys(round.inputRequests)[0];
    const params = { ...call, requestState: round.requestState, inputResponses: { [key]: { action: 'accept', content: { n: 'x' } } } };
    const retry = await post(m.url, modernBody(10 + i, 'tools/call', params, CAPS), modernHeaders('tools/call', m.name));
    assert.equal(retry.status, 200, retry.text);
    answers.push(retry.json);
  }
  assert.deepEqual(answers, [
    { jsonrpc: '2.0', id: 10, error: { code: -32000, message: CUT('mount asking') } },
    { jsonrpc: '2.0', id: 11, error: { code: -32000, message: CUT('upstream asking of the aggregate mount') } },
  ]);
});
