// Found by a trial (2026-12-04): without `cluster`, what a session keeps had no size bound. An
// initialize with 1 MiB capabilities and a 900 KiB client name (2 KB gzip'd) was kept whole, and
// 2,169 of them ended the gateway out of memory; resources/subscribe took 2 MB URIs (1,024 of
// them a session). Client info and capabilities are now at most 16 KiB, a subscribed URI 8 KiB,
// and a subscriber's URIs 64 KiB together.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';

test('an initialize whose client info and capabilities pass 16 KiB is refused (400, no session); 16 KiB is served', async (t) => {
  const gw = await gateway(t);
  const init = (pad: number) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: { experimental: { x: 'c'.repeat(pad) } }, clientInfo: { name: 'big', version: '1' } },
  });
  const tooBig = await post(gw.url, init(17 * 1024), H2025);
  assert.equal(tooBig.status, 400);
  assert.equal(tooBig.headers['mcp-session-id'], undefined);
  const error = (tooBig.json as { error: { code: number; message: string } }).error;
  assert.equal(error.code, -32602);
  assert.match(error.message, /^Session state too large: client info and capabilities of \d+ characters, limit 16384$/);
  const fits = await post(gw.url, init(15 * 1024), H2025);
  assert.equal(fits.status, 200);
  assert.equal(typeof fits.headers['mcp-session-id'], 'string');
});

test('resources/subscribe refuses a URI over 8 KiB (-32602) and URIs over 64 KiB together; a 2026-07-28 listen leaves them out of its acknowledgement', async (t) => {
  const gw = await gateway(t);
  const headers = { ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };
  const subscribe = (id: number, uri: string) => post(gw.url, { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }, headers);
  const long = await subscribe(1, `demo://items/alpha#${'z'.repeat(8 * 1024)}`);
  assert.deepEqual((long.json as { error: unknown }).error, { code: -32602, message: 'Invalid params: uri longer than 8192 characters' });
  // Eight URIs of 8,000 characters fit in 64 KiB; the ninth does not.
  for (let i = 0; i < 8; i++)
    assert.deepEqual((await subscribe(10 + i, `demo://items/alpha#${i}${'z'.repeat(7_978)}`)).json, { jsonrpc: '2.0', id: 10 + i, result: {} });
  const ninth = await subscribe(20, `demo://items/alpha#8${'z'.repeat(7_978)}`);
  assert.match((ninth.json as { error: { message: string } }).error.message, /^Session state too large: subscribed URIs over 65536 characters$/);

  const listen = await openSse(
    gw.url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(
      modernBody('L', 'subscriptions/listen', { notifications: { resourceSubscriptions: [`demo://items/alpha#${'z'.repeat(8 * 1024)}`, 'demo://readme'] } }),
    ),
  );
  t.after(() => listen.close());
  const ack = JSON.parse((await listen.next()).data) as { method: string; params: { notifications: { resourceSubscriptions?: string[] } } };
  assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
  assert.deepEqual(ack.params.notifications.resourceSubscriptions, ['demo://readme']);
});

// Found by a trial (2026-12-04): `toolsListChanged: "yes"` was acknowledged as true.
test('a listen acknowledges only list changes asked for with true', async (t) => {
  const gw = await gateway(t);
  const listen = await openSse(
    gw.url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { toolsListChanged: 'yes', promptsListChanged: 1, resourcesListChanged: true } })),
  );
  t.after(() => listen.close());
  const ack = JSON.parse((await listen.next()).data) as { method: string; params: { notifications: Record<string, unknown> } };
  assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
  assert.deepEqual(ack.params.notifications, { resourcesListChanged: true });
});
