// Named in the closing notes of the last round: that a stdio child the gateway restarts is sent
// its subscriptions again was tested only on `SubscriptionSync.resync` itself, not end to end. A
// listen subscribed to a URI; the child crashes and the gateway's supervisor restarts it; the new
// child is sent resources/subscribe again, and its update reaches the listener
// (docs/upstreams.md, "Resource subscriptions upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { listenResources, modernBody, modernHeaders, nextSseMessage, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

// Answers resources/subscribe and then says notifications/resources/updated for its URI; tool `exit` crashes it.
const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/subscribe-echo-server.mjs');

test('a stdio child restarted by the gateway is sent its subscriptions again: its update reaches the listener', async (t) => {
  const gw = await configGateway(t, { admin: false, upstreams: { kid: { command: process.execPath, args: [FIXTURE] } } });
  const url = gw.mounts.find((m) => m.name === 'kid')!.url;
  const listen = await listenResources(t, url, ['demo://kept/1']);
  const updated = { uri: 'demo://kept/1', _meta: { 'io.modelcontextprotocol/subscriptionId': 'L1' } };
  // The first child was sent the subscribe: its update.
  const first = await nextSseMessage(listen);
  assert.deepEqual([first.method, first.params], ['notifications/resources/updated', updated]);

  const r = await post(url, modernBody(1, 'tools/call', { name: 'exit', arguments: {} }), modernHeaders('tools/call', 'exit'));
  assert.deepEqual((r.json as { result?: { content?: unknown } }).result?.content, [{ type: 'text', text: 'exiting' }], r.text);

  // The child exits, the supervisor starts another, and the gateway subscribes again there: the
  // new child's update is the listener's next message (nothing else sends one).
  const second = await nextSseMessage(listen);
  assert.deepEqual([second.method, second.params], ['notifications/resources/updated', updated]);
  assert.deepEqual(
    gw.records.filter((l) => l.msg === 'upstream exited' || l.msg === 'upstream restarting').map((l) => [l.msg, l.upstream, l.code]),
    [
      ['upstream exited', 'kid', 1],
      ['upstream restarting', 'kid', undefined],
    ],
  );
});
