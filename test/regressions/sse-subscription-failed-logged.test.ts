// An HTTP+SSE upstream session's failed resources/subscribe went unsaid (its POST's failure was
// dropped), where a 2025 session's is logged at warn `upstream subscription failed`
// (test/regressions/subscription-failed-uri.test.ts). The three transports now share one
// subscription scheduler (src/upstreams/subscription-sync.ts), and the failure is said in the
// same words, the URI's credential query values [redacted] (docs/upstreams.md, "Resource
// subscriptions upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { gateway, NO_COVERAGE_ENV, REPO_ROOT } from '../helpers/gateway.js';
import { listenResources } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/subscribe-counting-sse-server.mjs');
const SIG = 'PLANTEDSIGNATURE0a93';

test('an HTTP+SSE session whose resources/subscribe POST is refused (HTTP 500): one warn line naming the URI, its signature redacted', async (t) => {
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, ...NO_COVERAGE_ENV, REFUSE_SUBSCRIPTIONS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => void child.kill());
  let out = '';
  const upstreamUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
      const m = /listening (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`fixture exited ${String(code)}`)));
  });
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { upstreamUrl, upstreamEra: '2024-11-05' }, records);
  const uri = `https://bucket.example/report.pdf?X-Amz-Expires=60&X-Amz-Signature=${SIG}`;
  await listenResources(t, gw.url, [uri]);
  const failed = () => records.filter((r) => r.msg === 'upstream subscription failed');
  for (let i = 0; i < 200 && failed().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(
    failed().map((r) => ({ level: r.level, uri: r.uri })),
    [{ level: 40, uri: 'https://bucket.example/report.pdf?X-Amz-Expires=60&X-Amz-Signature=[redacted]' }],
  );
  assert.match(String(failed()[0].err), /500/);
  assert.doesNotMatch(JSON.stringify(records), new RegExp(SIG));
});
