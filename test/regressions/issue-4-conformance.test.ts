// Gateway bugs the official conformance suite found.
// Each runs the suite's scenario through the gateway with test/conformance/run.mjs. Fixed:
// an upstream's -32021 now gets HTTP 400; a 2025 upstream session's GET stream carries its server
// requests to the call that can own them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../helpers/gateway.js';

const execFileP = promisify(execFile);

/**
 * Runs one conformance scenario on one path with test/conformance/run.mjs (its own fixture and
 * gateway, on their own ports); resolves with that scenario's result, undefined when it has none.
 */
async function scenario(p: string, suite: string, name: string): Promise<{ pass: boolean; failures: unknown[] } | undefined> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-conf-reg-'));
  try {
    // Exit 1 (an unexpected failure) still writes summary.json: the result is read from it.
    await execFileP(
      process.execPath,
      [path.join(REPO_ROOT, 'test/conformance/run.mjs'), '--no-build', '--out', dir, '--paths', p, '--suites', suite, '--scenario', name],
      { cwd: REPO_ROOT, timeout: 60_000, env: { ...process.env, CONFORMANCE_STALL_MS: '20000', CONFORMANCE_SUITE_DEADLINE_MS: '40000' } },
    ).catch(() => {});
    const s = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')) as {
      results: Record<string, Record<string, Record<string, { pass: boolean; failures: unknown[] }>>>;
    };
    return s.results[suite]?.[p]?.[name];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  '-32021 (missing client capability) from an upstream reaches a 2026-07-28 client with HTTP 400 (server-stateless, sep-2575-missing-capability-http-400)',
  { timeout: 90_000 },
  async () => {
    const r = await scenario('gw-http-2026', '0.2@2026-07-28', 'server-stateless');
    assert.ok(r?.pass, JSON.stringify(r?.failures));
  },
);

test("a 2025 session upstream's sampling/createMessage reaches the 2025 client and the call completes (tools-call-sampling)", { timeout: 90_000 }, async () => {
  const r = await scenario('gw-http-2025', '0.1', 'tools-call-sampling');
  assert.ok(r?.pass, JSON.stringify(r?.failures));
});

test(
  "a 2025 session upstream's elicitation sent on its GET stream before the POST's headers still reaches the client (tools-call-elicitation)",
  { timeout: 90_000 },
  async () => {
    // The call is registered with its upstream session before the POST goes out; the race lost
    // it about one run in three before. Three runs at once, each with its own fixture and gateway.
    const runs = await Promise.all([0, 1, 2].map(() => scenario('gw-http-2025', '0.1', 'tools-call-elicitation')));
    for (const r of runs) assert.ok(r?.pass, JSON.stringify(r?.failures));
  },
);
