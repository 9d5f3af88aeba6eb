// A stdio child's failed resources/subscribe went unsaid: the gateway dropped the failure, where a
// 2025 HTTP upstream session's is logged at warn `upstream subscription failed`
// (test/regressions/subscription-failed-uri.test.ts). The three transports now share one
// subscription scheduler (src/upstreams/subscription-sync.ts), and a child's failure is said in
// the same words, the URI shown with its credential query values [redacted]
// (docs/upstreams.md, "Resource subscriptions upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, openSse } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

// Declares resources.subscribe and never answers resources/subscribe.
const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');
const SIG = 'PLANTEDSIGNATURE5f1e';

test("a stdio child's resources/subscribe unanswered within upstreamRequestTimeoutMs: one warn line naming the URI, its signature redacted", async (t) => {
  const gw = await configGateway(t, {
    admin: false,
    upstreams: { kid: { command: process.execPath, args: [FIXTURE], limits: { upstreamRequestTimeoutMs: 300 } } },
  });
  const url = gw.mounts.find((m) => m.name === 'kid')!.url;
  const uri = `https://bucket.example/report.pdf?X-Amz-Expires=60&X-Amz-Signature=${SIG}`;
  const listen = await openSse(
    url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L1', 'subscriptions/listen', { notifications: { resourceSubscriptions: [uri] } })),
  );
  t.after(() => listen.close());
  const failed = () => gw.records.filter((r) => r.msg === 'upstream subscription failed');
  for (let i = 0; i < 250 && failed().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(
    failed().map((r) => ({ level: r.level, upstream: r.upstream, uri: r.uri })),
    [{ level: 40, upstream: 'kid', uri: 'https://bucket.example/report.pdf?X-Amz-Expires=60&X-Amz-Signature=[redacted]' }],
  );
  assert.match(String(failed()[0].err), /300 ms/);
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(SIG));
});
