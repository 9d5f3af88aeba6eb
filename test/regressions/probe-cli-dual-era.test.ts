// `switchyard probe URL` did not run the dual-era check the gateway's start probe runs (found by
// the client-author trial h-redir): against a server that offers 2026-07-28 and 2025 sessions on
// one URL it said `2026-07-28 over stateless-http`, while a gateway with era auto in front of the
// same URL spoke 2025-11-25 to it. probeUrl now runs that check by default (the breaker's
// liveness trial turns it off), so the CLI shows the verdict the gateway acts on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { HttpUpstream } from '../../src/upstreams/http/index.js';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';

/** The conformance fixture in dual-era mode (v2 SDK: 2026-07-28 requests and 2025 sessions on one URL), on 127.0.0.1 port 0. */
async function dualEra(t: { after(fn: () => void): void }): Promise<string> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'test/fixtures/conformance-server/server.mjs'), 'http', '--era', 'both'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => void child.kill());
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`fixture did not start: ${out}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
}

const probe = (...args: string[]) =>
  promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '5000', ...args], { encoding: 'utf8' }).then((r) => r.stdout);

test('probe names a dual-era server as such, as the gateway in front of it acts on', async (t) => {
  const url = await dualEra(t);
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
