// `switchyard probe URL` did not run the dual-era check the gateway's start probe runs (found by
// the client-author trial h-redir): against a server that offers 2026-07-28 and 2025 sessions on
// one URL it said `2026-07-28 over stateless-http`, while a gateway with era auto in front of the
// same URL spoke 2025-11-25 to it. probeUrl now runs that check by default (the breaker's
// liveness trial turns it off), so the CLI shows the verdict the gateway acts on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { HttpUpstream } from '../../src/upstreams/http/index.js';
import { CLI } from '../helpers/cli.js';
import { gateway } from '../helpers/gateway.js';
import { conformanceHttp } from '../helpers/servers.js';

const probe = (...args: string[]) =>
  promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '5000', ...args], { encoding: 'utf8' }).then((r) => r.stdout);

test('probe names a dual-era server as such, as the gateway in front of it acts on', async (t) => {
  const url = await conformanceHttp(t, 'both');
  const verdict = JSON.parse(await probe('--json', url)) as { ok: boolean; era: string; transport: string; alsoSessions?: string; steps: unknown[] };
  assert.equal(verdict.ok, true);
  assert.equal(verdict.era, '2026-07-28');
  assert.equal(verdict.transport, 'stateless-http');
  assert.equal(verdict.alsoSessions, '2025-11-25');
  const text = await probe(url);
  assert.match(
    text,
    /\nverdict: 2026-07-28 over stateless-http\nalso: 2025-11-25 sessions over streamable-http on the same URL \(dual-era\): a gateway with era auto speaks 2025-11-25, match-client both\n/,
  );
  const gw = await gateway(t, { upstreamUrl: url });
  assert.equal((gw.upstreams.get('default') as HttpUpstream).era, verdict.alsoSessions);
});

test("probe's --timeout-ms defaults to the gateway's upstreamProbeTimeoutMs, so a slow server gets the verdict a default gateway acts on (it was 10,000 ms)", async () => {
  const help = await promisify(execFile)(process.execPath, [CLI, 'probe', '--help'], { encoding: 'utf8' }).then((r) => r.stdout);
  assert.match(help, new RegExp(`--timeout-ms <n>\\s+time for each step, ms \\(default: ${DEFAULT_LIMITS.upstreamProbeTimeoutMs}\\)`));
});
