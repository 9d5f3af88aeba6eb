// A slow call through the aggregate mount on a member a reload removed or replaced ran to its end
// (the demo's `slow`, 10 s) where the same call on the member's own mount was cut once
// `shutdownGraceMs` had passed: the reload cut the calls of the mounts it retired, and the
// aggregate mount, kept, was not one of them; the member's old instance then waited for the call
// before it stopped. Now the aggregate's calls on a retired member are cut too, after the same
// grace, naming the member as an upstream of the aggregate mount (aggregate-reload-cut has the
// wording's other cases).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const CUT = 'Upstream unavailable: upstream b of the aggregate mount was removed or replaced by a config reload; request aborted';
/** 50 steps of 200 ms: 10 s when it runs to its end, against a grace of 300 ms. */
const SLOW = { name: 'b__slow', arguments: { steps: 50, stepMs: 200 } };

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond());
}

const configOf = (b: Record<string, unknown> | undefined) =>
  JSON.stringify({
    limits: { shutdownGraceMs: 300 },
    aggregate: { path: '/all' },
    upstreams: { a: { transport: 'embedded' }, ...(b ? { b } : {}) },
  });

for (const [how, next, report] of [
  ['removes', configOf(undefined), { removed: ['b'], changed: [] }],
  ['replaces', configOf({ transport: 'embedded', path: '/bee/mcp' }), { removed: [], changed: ['b'] }],
] as const) {
  test(`a slow call through the aggregate mount on a member a reload ${how}: cut after the grace, naming the member of the aggregate mount`, async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'swy-agg-member-cut-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gw.json');
    writeFileSync(file, configOf({ transport: 'embedded' }));
    const gw = await startCli(t, ['--config', file, '--no-admin']);

    const slow = post(`${gw.origin}/all`, modernBody(7, 'tools/call', SLOW), modernHeaders('tools/call', SLOW.name));
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(file, next);
    gw.child.kill('SIGHUP');

    const m = await slow;
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.json, { jsonrpc: '2.0', id: 7, error: { code: -32000, message: CUT } });
    // Logged once the retired instance has stopped (after the cut).
    await until(() => gw.records().some((r) => r.msg === 'config reloaded'));
    const reloaded = gw.records().find((r) => r.msg === 'config reloaded');
    assert.deepEqual({ removed: reloaded?.removed, changed: reloaded?.changed }, report);
    const failed = gw.records().filter((r) => r.msg === 'request failed' && r.mount === 'aggregate');
    assert.deepEqual(
      failed.map((r) => [r.upstream, r.code, r.error]),
      [['b', 'SWY_ERR_UPSTREAM_UNAVAILABLE', CUT]],
    );

    // The aggregate mount goes on serving its other member.
    const echo = { name: 'a__echo', arguments: { message: 'on' } };
    const a = await post(`${gw.origin}/all`, modernBody(8, 'tools/call', echo), modernHeaders('tools/call', echo.name));
    assert.equal((a.json as { result: { content: Array<{ text: string }> } }).result.content[0].text, 'Echo: on');
  });
}
