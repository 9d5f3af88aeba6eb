// Regression: the bench's load rows come from one address, which the per-client share (3053ade,
// maxSessionsPerClient 1,000) counts as one client. The full run's idle-session row opens 1,005
// 2025 sessions on one gateway (bench/run.mjs idleCase: one warm session, four more, then 1,000),
// and the 1,001st initialize got 429 SWY_ERR_SESSION_CLIENT_LIMIT, failing the row. Found by
// review of 3053ade/6c06dee (only the scale rows raised the share). The bench's load flags now
// raise both shares (bench/lib/switchyard-flags.mjs); this starts the real CLI with them and opens
// that many sessions from one address.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { startCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { H2025, post } from '../helpers/http.js';

/** What bench/lib/switchyard-flags.mjs exports (plain JavaScript, no types). */
interface BenchFlags {
  perClientShare(known: readonly string[], n?: number): string[];
}

/** 2025 sessions a full bench run's idle-session row opens on one gateway (bench/run.mjs idleCase, CFG.sessions 1,000). */
const IDLE_ROW_SESSIONS = 1 + 4 + 1_000;

test("the bench's load flags let its idle-session row open 1,005 sessions from one address", async (t) => {
  const bench = (await import(pathToFileURL(path.join(REPO_ROOT, 'bench/lib/switchyard-flags.mjs')).href)) as BenchFlags;
  const cli = await startCli(t, ['--no-admin', '--log-level', 'warn', ...bench.perClientShare(Object.keys(DEFAULT_LIMITS))]);
  const init = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench-like', version: '1' } },
  });
  for (let i = 0; i < IDLE_ROW_SESSIONS; i++) {
    const r = await post(cli.url, init(i), H2025);
    assert.equal(r.status, 200, `initialize ${i + 1} of ${IDLE_ROW_SESSIONS}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  assert.equal(await cli.stop('SIGTERM'), 0, cli.stderr());
});
