// Named in the closing notes of the last round: a request of the gateway's own to a stdio child
// (a resources/subscribe for its subscribers, the ping of a silent child, a server/discover) that
// went unanswered for its `upstreamRequestTimeoutMs` was given up without a word to the child, so
// it never learnt the request was dropped; a call cut by its deadline tells its upstream
// `request timed out after N ms` (cancelReasonOf). The child now gets the same
// notifications/cancelled, in the same words; `initialize` is never cancelled
// (2025-11-25 basic/utilities/cancellation).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, openSse } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');

test("a stdio child's unanswered resources/subscribe, given up after upstreamRequestTimeoutMs: the child is told 'request timed out after 300 ms'", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-own-timeout-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cancelled.jsonl');
  const told = () =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as unknown)
      : [];
  const gw = await configGateway(t, {
    admin: false,
    upstreams: { kid: { command: process.execPath, args: [FIXTURE], env: { CANCELLED_FILE: file }, limits: { upstreamRequestTimeoutMs: 300 } } },
  });
  const url = gw.mounts.find((m) => m.name === 'kid')!.url;
  // A listen that wants a resource's updates: the child is sent resources/subscribe, which it never answers.
  const listen = await openSse(
    url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L1', 'subscriptions/listen', { notifications: { resourceSubscriptions: ['demo://x'] } })),
  );
  t.after(() => listen.close());
  for (let i = 0; i < 250 && told().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  // Ids 1 and 2 went to server/discover and initialize; 3 is the subscribe.
  assert.deepEqual(told(), [{ requestId: 3, reason: 'request timed out after 300 ms' }]);
});
