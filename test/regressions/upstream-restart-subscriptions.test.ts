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
import { initSession, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { freePort } from '../helpers/servers.js';

const touch = (url: string, id: number) =>
  post(url, modernBody(id, 'tools/call', { name: 'touch', arguments: { uri: 'demo://readme' } }), modernHeaders('tools/call', 'touch'));

/** Touches demo://readme through `url` until `reader`'s text past `from` holds an update for it (at most 20 touches, 500 ms apart). */
async function touchUntilHeard(url: string, reader: { raw(): string }, from: number): Promise<string> {
  for (let i = 0; i < 20; i++) {
    assert.equal((await touch(url, 100 + i)).status, 200);
    await new Promise((r) => setTimeout(r, 500));
    if (/"method":"notifications\/resources\/updated","params":\{[^}]*"uri":"demo:\/\/readme"/.test(reader.raw().slice(from))) break;
  }
  return reader.raw().slice(from);
}

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
  assert.match(await touchUntilHeard(gw.url, listen, 0), /resources\/updated/);

  await upstream.close();
  const from = listen.raw().length;
  upstream = await inner();

  // The new control session tells the listen its lists may have changed (the restarted
  // upstream's may differ), and subscribes again: a touch is heard.
  const after = await touchUntilHeard(gw.url, listen, from);
  assert.match(after, /notifications\/tools\/list_changed/);
  assert.match(after, /"method":"notifications\/resources\/updated","params":\{[^}]*"uri":"demo:\/\/readme"/);
});

test('a 2025 client subscribed behind a 2025 upstream that restarted hears resource updates again without a call of its own', async (t) => {
  const port = await freePort();
  const inner = (): Promise<Gateway> => startGateway({ host: '127.0.0.1', port }, recordingLogger([]));
  let upstream = await inner();
  t.after(() => upstream.close());
  const gw = await gateway(t, { upstreamUrl: `http://127.0.0.1:${port}/mcp`, upstreamEra: '2025-11-25' });

  const h = await initSession(gw.url, '2025-11-25');
  const get = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
  t.after(() => get.close());
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'demo://readme' } }, h)).status, 200);
  await new Promise((r) => setTimeout(r, 300));
  // Another client touches the resource: this one's session hears it.
  assert.match(await touchUntilHeard(gw.url, get, 0), /resources\/updated/);

  await upstream.close();
  const from = get.raw().length;
  upstream = await inner();

  // This client sends nothing more: its new upstream session subscribes again by itself.
  assert.match(await touchUntilHeard(gw.url, get, from), /"method":"notifications\/resources\/updated","params":\{[^}]*"uri":"demo:\/\/readme"/);
});
