// Found by a trial: a stdio child that does not exit when its stdin ends (or ignores SIGTERM too)
// made every stop wait upstreamStopTimeoutMs, then twice that, and nothing in the log said so:
// the gateway signalled the child silently. Each escalation of the ordered stop (stdin EOF,
// SIGTERM, SIGKILL) is now a warn with the child's pid, the signal and the time waited since
// stdin was closed (ms).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');

/** The child's pid, from the `pid N` line it writes to stderr (logged at debug). */
function childPid(records: Array<Record<string, unknown>>): number {
  const line = records.find((r) => r.msg === 'upstream stderr' && typeof r.line === 'string' && r.line.startsWith('pid '));
  assert.ok(line, 'the child said its pid');
  return Number((line.line as string).slice(4));
}

const escalations = (records: Array<Record<string, unknown>>) => records.filter((r) => r.msg === 'upstream stop escalated');

test('a child that ignores stdin EOF and SIGTERM: a warn at SIGTERM and one at SIGKILL, with its pid and the ms waited', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" ignore-term`, limits: { upstreamStopTimeoutMs: 200 } }, records);
  const pid = childPid(records);
  await gw.close();
  const seen = escalations(records);
  assert.deepEqual(
    seen.map((r) => [r.level, r.upstream, r.pid, r.signal]),
    [
      [40, 'default', pid, 'SIGTERM'],
      [40, 'default', pid, 'SIGKILL'],
    ],
  );
  const [term, kill] = seen.map((r) => r.waitedMs as number);
  assert.ok(Number.isInteger(term) && term >= 199, `SIGTERM after ${term} ms`);
  assert.ok(Number.isInteger(kill) && kill >= 399 && kill > term, `SIGKILL after ${kill} ms`);
});

test('a child that exits on SIGTERM: one warn; a child that exits at EOF: none', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"`, limits: { upstreamStopTimeoutMs: 200 } }, records);
  const pid = childPid(records);
  await gw.close();
  assert.deepEqual(
    escalations(records).map((r) => [r.level, r.pid, r.signal]),
    [[40, pid, 'SIGTERM']],
  );
  const quiet: Array<Record<string, unknown>> = [];
  const polite = await gateway(
    t,
    { stdio: `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/confused-server.mjs')}"`, limits: { upstreamStopTimeoutMs: 200 } },
    quiet,
  );
  await polite.close();
  assert.deepEqual(escalations(quiet), []);
});
