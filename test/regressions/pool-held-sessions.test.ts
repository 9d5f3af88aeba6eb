// Regression (left open by an earlier review): a stateful HTTP upstream's sessions live in an LRU
// of `maxSessions` (src/upstreams/http/pool.ts). A 2026-07-28 client's `subscriptions/listen`
// lives on its pooled upstream session (`caps:<principal>:<capabilities>`); when clients with
// other capability sets filled the pool, the LRU ended that session like any other, the upstream
// stopped its updates with it, and the listener heard nothing more until its client happened to
// call again. A session with subscribers is now never ended to make room: the least recently used
// one without subscribers is, and when every session in the pool has subscribers a new one is refused
// with SWY_ERR_SESSION_LIMIT.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v2 from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Streamable } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';

const URI = 'demo://resource/static/document/architecture.md';
const pin = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };
/** server-everything's resource update period in these tests, ms (its own is 5000). */
const PACE_MS = 250;

/** A 2026-07-28 client declaring `capabilities` (each set its own pooled upstream session). */
async function client(t: { after(fn: () => Promise<void>): void }, url: string, name: string, capabilities: v2.ClientCapabilities): Promise<v2.Client> {
  const c = new v2.Client({ name, version: '1.0.0' }, { capabilities, ...pin });
  await c.connect(new v2.StreamableHTTPClientTransport(new URL(url)));
  t.after(() => c.close());
  return c;
}

/** Resolves on the next `notifications/resources/updated` `c` hears after the call, or rejects after `ms`. */
function nextUpdate(c: v2.Client, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no update within ${ms} ms`)), ms);
    c.setNotificationHandler('notifications/resources/updated', (n) => {
      if (n.params.uri !== URI) return;
      clearTimeout(timer);
      resolve();
    });
  });
}

for (const mode of ['streamableHttp', 'sse'] as const) {
  test(`server-everything over ${mode}, maxSessions 2: a listened session is not evicted; a pool of listened sessions refuses a new one`, async (t) => {
    const server = await everythingHttp(t, mode, { paceMs: PACE_MS });
    const gw = await gateway(t, { upstreamUrl: server.url, limits: { maxSessions: 2 } });

    // The listener: its session subscribes to URI and (toggle) gets an update at once, then every PACE_MS.
    const listener = await client(t, gw.url, 'listener', {});
    const first = nextUpdate(listener, 20_000);
    const sub = await listener.listen({ resourceSubscriptions: [URI] });
    await listener.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await first;

    // Two more capability sets: a third key in a pool of two. Before, the listener's session was
    // the least recently used, so it was ended (DELETE) and its updates stopped.
    const b = await client(t, gw.url, 'b', { roots: {} });
    // (Not `roots: { listChanged: true }`: upstreams are not told it for a sessionless client, so it is b's key.)
    const c = await client(t, gw.url, 'c', { experimental: { c: {} } });
    await b.callTool({ name: 'echo', arguments: { message: 'b' } });
    await c.callTool({ name: 'echo', arguments: { message: 'c' } });
    await nextUpdate(listener, 12_000);
    // b's session was the one ended: it opens again (ending c's, the least recently used without subscribers).
    assert.equal(((await b.callTool({ name: 'echo', arguments: { message: 'b again' } })).content as Array<{ text: string }>)[0].text, 'Echo: b again');

    // Every place held by a session with subscribers: a new key is refused, nothing is ended.
    const bListen = await b.listen({ toolsListChanged: true });
    const d = await client(t, gw.url, 'd', { experimental: { d: {} } });
    await assert.rejects(d.callTool({ name: 'echo', arguments: { message: 'd' } }), (err: Error & { data?: { status?: number; text?: string } }) => {
      assert.equal(err.data?.status, 503, err.message);
      const body = JSON.parse(err.data?.text ?? '{}') as { error?: { code: number; message: string } };
      assert.deepEqual(body.error, { code: -32000, message: 'Too many sessions: all 2 upstream sessions (maxSessions) have subscribers' });
      return true;
    });
    // The same refusal on the wire: a passing overload, 503 with Retry-After (docs/errors.md).
    const raw = await post(
      gw.url,
      modernBody(9, 'tools/call', { name: 'echo', arguments: { message: 'e' } }, { experimental: { e: {} } }),
      modernHeaders('tools/call', 'echo'),
    );
    assert.deepEqual([raw.status, raw.headers['retry-after'], (raw.json as { error?: { code: number } }).error?.code], [503, '1', -32000], raw.text);
    // A listen of a new key is refused as before, with the subscription limit, before its session opens.
    await assert.rejects(d.listen({ toolsListChanged: true }), (err: Error & { data?: { status?: number; text?: string } }) => {
      assert.equal(err.data?.status, 503, err.message);
      assert.match(err.data?.text ?? '', /Too many subscriptions/);
      return true;
    });
    await nextUpdate(listener, 12_000);

    // A listen ends: its session is an ordinary one again, and d's call ends it to make room.
    await bListen.close();
    assert.equal(((await d.callTool({ name: 'echo', arguments: { message: 'd' } })).content as Array<{ text: string }>)[0].text, 'Echo: d');
    await nextUpdate(listener, 12_000);

    await sub.close();
    await listener.callTool({ name: 'toggle-subscriber-updates', arguments: {} }).catch(() => {});
  });
}

test('server-everything over streamableHttp, maxSessions 2: a 2025 session subscribed on its GET stream is not evicted by sessionless clients', async (t) => {
  const server = await everythingHttp(t, 'streamableHttp', { paceMs: PACE_MS });
  const gw = await gateway(t, { upstreamUrl: server.url, limits: { maxSessions: 2 } });

  // A 2025 client session (upstream key s:<session>) that subscribes and toggles.
  const old = new V1Client({ name: 'v1', version: '1.0.0' }, { capabilities: {} });
  let heard!: () => void;
  let next = new Promise<void>((r) => (heard = r));
  old.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === URI) heard();
  });
  await old.connect(new V1Streamable(new URL(gw.url)));
  t.after(() => old.close());
  await old.subscribeResource({ uri: URI });
  // server-everything names the upstream session it toggled: updates run on that session alone, and
  // a session opened after it (the gateway re-opening an ended one) has none until toggled itself.
  const started = (await old.callTool({ name: 'toggle-subscriber-updates', arguments: {} })).content as Array<{ text: string }>;
  const upstreamSession = /for session (\S+) /.exec(started[0].text)?.[1];
  assert.ok(upstreamSession, started[0].text);
  const within = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([next, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no update within ${ms} ms`)), ms)))]);
    clearTimeout(timer);
    next = new Promise<void>((r) => (heard = r));
  };
  await within(20_000);

  // Two sessionless capability sets, two more keys: before, the 2025 session was the least recently
  // used and ended. (Capabilities that differ only in roots.listChanged share a key: upstreams are
  // not told it for a sessionless client.)
  for (const [name, caps] of [
    ['b', { roots: {} }],
    ['c', { experimental: { c: {} } }],
  ] as const) {
    const c = await client(t, gw.url, name, caps);
    await c.callTool({ name: 'echo', arguments: { message: name } });
  }
  // Only an update sent after the pool filled counts: one heard while b and c connected proves nothing.
  next = new Promise<void>((r) => (heard = r));
  await within(12_000);
  await old.unsubscribeResource({ uri: URI });
  // The same upstream session still serves the client session: its updates stop (an ended and
  // re-opened one would answer that it started them, for another session).
  const stopped = (await old.callTool({ name: 'toggle-subscriber-updates', arguments: {} })).content as Array<{ text: string }>;
  assert.deepEqual(stopped, [{ type: 'text', text: `Stopped simulated resource updates for session ${upstreamSession}` }]);
});
