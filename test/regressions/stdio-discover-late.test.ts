// A stdio child that speaks only 2026-07-28 and answers `server/discover` after the probe's
// deadline (upstreamProbeTimeoutMs: it is slow to start) was taken for an initialize-era one: the
// gateway sent `initialize`, the child refused it (-32601), the start failed, and every restart
// did the same, forever; its late DiscoverResult was dropped. Now discover stays open while
// initialize is tried: a late DiscoverResult that comes first names 2026-07-28, and an initialize
// refused while discover is open waits for it (until upstreamStartTimeoutMs) instead of failing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/silent-discover-server.mjs');
/** A probe deadline the child misses by far: it answers discover 1.5 s late, from its start or from reading it. */
const LIMITS = { upstreamProbeTimeoutMs: 200, upstreamBackoffMinMs: 20, upstreamBackoffMaxMs: 50 };
const SLOW_MS = '1500';

const stderrLines = (records: Array<Record<string, unknown>>) =>
  records.filter((r) => r.msg === 'upstream stderr' && typeof r.line === 'string').map((r) => r.line as string);
/** How many children were spawned (each writes `start` first). */
const spawns = (records: Array<Record<string, unknown>>) => stderrLines(records).filter((l) => l === 'start').length;
/** The handshake requests the children read, in order. */
const got = (records: Array<Record<string, unknown>>) =>
  stderrLines(records)
    .filter((l) => /^got (server\/discover|initialize)$/.test(l))
    .map((l) => l.slice(4));

const call = (url: string, message: string) =>
  post(url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message } }), modernHeaders('tools/call', 'echo'));

for (const [slowness, args] of [
  ['reads nothing for 1.5 s (its discover answer comes before its initialize refusal)', ['--start-after', SLOW_MS]],
  ['answers discover 1.5 s after reading it and refuses initialize at once', ['--discover-after', SLOW_MS]],
] as const) {
  test(`a 2026-07-28 child that ${slowness}: served in 2026-07-28 by its first spawn`, async (t) => {
    const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" --modern ${args.join(' ')}`, limits: LIMITS });
    const ready = gw.records.filter((r) => r.msg === 'upstream ready');
    assert.deepEqual(
      ready.map((r) => r.revision),
      ['2026-07-28'],
    );
    // The probe's discover, then initialize once its deadline passed; no restart. The child's
    // stderr comes on its own pipe, after what its stdout said may have been read: waited for.
    await until(() => got(gw.records).length >= 2, 'the child to say it read initialize').catch(() => {});
    assert.deepEqual(got(gw.records), ['server/discover', 'initialize']);
    assert.equal(spawns(gw.records), 1);
    const late = gw.records.filter((r) => r.msg === 'upstream answered server/discover after the probe deadline');
    assert.deepEqual(
      late.map((r) => [r.level, r.upstream, r.probeTimeoutMs, r.revision]),
      [[40, 'default', 200, '2026-07-28']],
    );
    assert.ok((late[0].waitedMs as number) >= 1000, `waitedMs ${String(late[0].waitedMs)}`);
    // Neither the initialize-era warn nor a failed start.
    assert.deepEqual(
      gw.records.filter((r) => r.msg === 'upstream did not answer server/discover' || r.msg === 'upstream restart failed'),
      [],
    );
    const echo = await call(gw.url, 'late');
    assert.equal(echo.status, 200);
    assert.deepEqual((echo.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'echo: late' }]);
    assert.equal(spawns(gw.records), 1);
  });
}
