// Found by a client-author trial (helper h-t1, 2026-12-05): behind a 2025 Streamable HTTP
// upstream that restarted, a 2026-07-28 client's subscriptions/listen stream stayed open and
// silent for good. The gateway's own (control) upstream session, which carries gateway-wide
// subscriptions, was gone with the restart: its GET stream was asked again and again and
// answered 404 each time, and its resources/subscribe was never sent to the new process. The
// list cache, which learns of changes the same way, was never told either.
// Now a GET stream answered 404 (or a 400 tied to no request) ends its session: the control
// session is opened again, its subscriptions sent again, and gateway-wide subscribers are told
// the lists may have changed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { gateway, recordingLogger } from '../helpers/gateway.js';
import { modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { freePort } from '../helpers/servers.js';

const touch = (url: string, id: number) =>
  post(url, modernBody(id, 'tools/call', { name: 'touch', arguments: { uri: 'demo://readme' } }), modernHeaders('tools/call', 'touch'));

test('a 2026-07-28 listen behind a 2025 upstream that restarted hears list changes and resource updates again', async (t) => {
  const port = await freePort();
  const inner = (): Promise<Gateway> => startGateway({ host: '127.0.0.1', port }, recordingLogger([]));
  let upstream = await inner();
  t.after(() => upstream.close());
  const gw = await gateway(t, { upstreamUrl: `http://127.0.0.1:${port}/mcp`, upstreamEra: '2025-11-25' });

  const listen = await openSse(
    gw.url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L1', 'subscriptions/listen', { notifications: { toolsListChanged: true, resourceSubscriptions: ['demo://readme'] } })),
  );
  t.after(() => listen.close());
  const ack = JSON.parse((await listen.next()).data) as { method: string };
  assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
  // Let the upstream subscription and GET stream settle.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await touch(gw.url, 1)).status, 200);
  const before = JSON.parse((await listen.next()).data) as { method: string; params: { uri?: string } };
  assert.deepEqual([before.method, before.params.uri], ['notifications/resources/updated', 'demo://readme']);

  await upstream.close();
  upstream = await inner();

  // The new control session tells the listen its lists may have changed (the restarted
  // upstream's may differ), then subscribes again: a touch is heard.
  const seen: string[] = [];
  for (;;) {
    const m = JSON.parse((await listen.next(10_000)).data) as { method: string };
    seen.push(m.method);
    if (m.method === 'notifications/tools/list_changed') break;
  }
  let heard: { method: string; params: { uri?: string } } | undefined;
  for (let i = 0; i < 20 && !heard; i++) {
    assert.equal((await touch(gw.url, 10 + i)).status, 200);
    heard = await listen.next(500).then(
      (e) => JSON.parse(e.data) as { method: string; params: { uri?: string } },
      () => undefined,
    );
  }
  assert.deepEqual([heard?.method, heard?.params.uri], ['notifications/resources/updated', 'demo://readme'], seen.join(', '));
});
