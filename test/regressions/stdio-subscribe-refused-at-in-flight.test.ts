// Found in review: a stdio child's `resources/subscribe` that the gateway's own admission refused
// (the child's calls at `maxInFlightPerUpstream`, SWY_ERR_UPSTREAM_OVERLOADED) before writing it
// was still marked as made, so the URI was not subscribed until the child's next restart: its
// listeners heard no update. The change is now taken back and goes again once a call ends.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { listenResources, modernBody, modernHeaders, nextSseMessage, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

// Answers resources/subscribe and then says notifications/resources/updated for its URI; tool `wait {ms}`.
const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/subscribe-echo-server.mjs');

test('a subscribe refused while the child’s one in-flight place is taken is sent once the call ends', async (t) => {
  const gw = await configGateway(t, {
    admin: false,
    upstreams: { kid: { command: process.execPath, args: [FIXTURE], limits: { maxInFlightPerUpstream: 1 } } },
  });
  const url = gw.mounts.find((m) => m.name === 'kid')!.url;
  // The one place is held by a call while the listen's subscribe takes its turn.
  const held = post(url, modernBody(1, 'tools/call', { name: 'wait', arguments: { ms: 500 } }), modernHeaders('tools/call', 'wait'));
  await new Promise((r) => setTimeout(r, 50));
  const listen = await listenResources(t, url, ['demo://late/1']);
  const r = await held;
  assert.deepEqual((r.json as { result?: { content?: unknown } }).result?.content, [{ type: 'text', text: 'waited' }], r.text);
  // The child got the subscribe after all: its update reaches the listener.
  const note = await nextSseMessage(listen);
  assert.deepEqual(
    [note.method, note.params],
    ['notifications/resources/updated', { uri: 'demo://late/1', _meta: { 'io.modelcontextprotocol/subscriptionId': 'L1' } }],
  );
  // It was refused first, and deferred (at debug: it is no failure), not counted as failed.
  assert.deepEqual(
    gw.records.filter((l) => l.msg === 'upstream subscription deferred' || l.msg === 'upstream subscription failed').map((l) => [l.level, l.msg, l.uri, l.err]),
    [[20, 'upstream subscription deferred', 'demo://late/1', 'Upstream overloaded: too many requests in flight']],
  );
});
