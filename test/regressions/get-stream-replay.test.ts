// Found 2026-12-06: a 2025 session's GET stream lost every notification sent while no connection
// carried it. When its connection dropped, the session's notifications were detached, and a client
// that resumed with Last-Event-ID (as the SDK clients do) got them attached again but never the
// list changes and resource updates sent in between. The GET stream now keeps buffering them, in
// its bounded ring, and replays them in order on resumption; past the ring's bounds the oldest
// are dropped and counted, and a resumption from before them resumes with what is left.
// Spec: 2025-03-26 / 2025-11-25 basic/transports#resumability-and-redelivery.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway } from '../../src/gateway.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';
import { initSession, openSse, post, send, type SseReader } from '../helpers/http.js';
import { configGateway, find, getText } from '../helpers/ops.js';
import { until } from '../helpers/replicas.js';

const V = '2025-11-25';

/** The headers of session requests, and of its GET stream. */
async function session(url: string): Promise<{ h: Record<string, string>; g: Record<string, string> }> {
  const h: Record<string, string> = { ...(await initSession(url, V)), 'mcp-protocol-version': V };
  return { h, g: { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], 'mcp-protocol-version': V } };
}

const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
const uri = (i: number) => `demo://items/n${i}`;

/** Subscribes the session to `uris`. */
async function subscribe(url: string, h: Record<string, string>, uris: string[]): Promise<void> {
  for (const [i, u] of uris.entries()) {
    const r = await post(url, { jsonrpc: '2.0', id: `sub-${i}`, method: 'resources/subscribe', params: { uri: u } }, h);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: `sub-${i}`, result: {} });
  }
}

/** Makes the demo upstream emit notifications/resources/updated for each of `uris`, in order. */
async function touch(url: string, h: Record<string, string>, uris: string[]): Promise<void> {
  for (const u of uris) {
    const r = await post(url, { jsonrpc: '2.0', id: `touch-${u}`, method: 'tools/call', params: { name: 'touch', arguments: { uri: u } } }, h);
    assert.equal(r.status, 200, r.text);
  }
}

/** GET streams of the 2025 dialect that a connection carries now. */
const openGetStreams = (gw: Gateway) => gw.registry.dialects.get('2025-03-26')!.streamCount();

/** Closes `s` and waits until the gateway saw its connection go. */
async function disconnect(gw: Gateway, s: SseReader): Promise<void> {
  s.close();
  await s.ended;
  await until(() => openGetStreams(gw) === 0, 'the gateway to see the GET connection close');
}

/** The next `n` events of `s` that carry data, as [id, message]. */
async function events(s: SseReader, n: number): Promise<Array<[string, unknown]>> {
  const out: Array<[string, unknown]> = [];
  while (out.length < n) {
    const e = await s.next(10_000);
    if (e.data !== '') out.push([e.id ?? '', JSON.parse(e.data)]);
  }
  return out;
}

const seqOf = (id: string) => Number(id.slice(id.lastIndexOf('.') + 1));

test('notifications sent while the GET stream has no connection are replayed, in order, on resumption with Last-Event-ID; then live ones; none twice', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26'] });
  const { h, g } = await session(gw.url);
  await subscribe(gw.url, h, [0, 1, 2, 3, 4, 5].map(uri));
  const first = await openSse(gw.url, 'GET', g);
  t.after(() => first.close());
  assert.equal((await first.next()).data, '', 'the priming event');
  await touch(gw.url, h, [uri(0)]);
  const [[id0, m0]] = await events(first, 1);
  assert.deepEqual(m0, updated(uri(0)));
  await disconnect(gw, first);

  // Sent while no connection carries the stream.
  await touch(gw.url, h, [uri(1), uri(2), uri(3)]);
  const second = await openSse(gw.url, 'GET', { ...g, 'last-event-id': id0 });
  t.after(() => second.close());
  assert.equal(second.status, 200);
  const replayed = await events(second, 3);
  assert.deepEqual(
    replayed.map(([, m]) => m),
    [1, 2, 3].map((i) => updated(uri(i))),
  );
  // Then the stream goes on live, on the same stream (ids follow on).
  await touch(gw.url, h, [uri(4)]);
  const [live] = await events(second, 1);
  assert.deepEqual(live[1], updated(uri(4)));
  const ids = [id0, ...replayed.map(([id]) => id), live[0]];
  assert.deepEqual(ids.map(seqOf), [1, 2, 3, 4, 5]);
  assert.equal(new Set(ids.map((id) => id.slice(0, id.lastIndexOf('.')))).size, 1, `one stream: ${ids.join(',')}`);
  await disconnect(gw, second);

  // Resumed from the latest event: nothing is replayed, the next notification comes once.
  const third = await openSse(gw.url, 'GET', { ...g, 'last-event-id': live[0] });
  t.after(() => third.close());
  assert.equal(third.status, 200);
  await touch(gw.url, h, [uri(5)]);
  const [next] = await events(third, 1);
  assert.deepEqual(next, [`${live[0].slice(0, live[0].lastIndexOf('.'))}.6`, updated(uri(5))]);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(third.raw().split('notifications/resources/updated').length - 1, 1, third.raw());
});

/**
 * A TCP proxy in front of `port` whose server-to-client direction can be cut off silently: the
 * gateway keeps writing to a connection whose bytes never reach the client.
 */
async function blackHoleProxy(t: { after(fn: () => void): void }, port: number): Promise<{ port: number; swallow(): void; cut(): void }> {
  const pairs: Array<{ client: Socket; upstream: Socket; swallow: boolean }> = [];
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port });
    const pair = { client, upstream, swallow: false };
    pairs.push(pair);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (d: Buffer) => upstream.write(d));
    upstream.on('data', (d: Buffer) => {
      if (!pair.swallow) client.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const p of pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
  };
  t.after(() => {
    cut();
    server.close();
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    swallow: () => pairs.forEach((p) => (p.swallow = true)),
    cut,
  };
}

test('events written to a connection that died before they arrived, and those sent after it died, are all replayed after the client’s Last-Event-ID', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26'] });
  const port = Number(new URL(gw.url).port);
  const { h, g } = await session(gw.url);
  await subscribe(gw.url, h, [0, 1, 2, 3, 4].map(uri));
  const proxy = await blackHoleProxy(t, port);
  // Through the proxy; Host names the gateway's own port, as its loopback allowlist wants.
  const viaProxy = await openSse(gw.url.replace(`:${port}/`, `:${proxy.port}/`), 'GET', { ...g, host: `127.0.0.1:${port}` });
  t.after(() => viaProxy.close());
  assert.equal(viaProxy.status, 200);
  assert.equal((await viaProxy.next()).data, '');
  await touch(gw.url, h, [uri(0)]);
  const [[id0]] = await events(viaProxy, 1);

  // The gateway writes these to a live connection; the client never gets them.
  proxy.swallow();
  await touch(gw.url, h, [uri(1), uri(2)]);
  proxy.cut();
  await until(() => openGetStreams(gw) === 0, 'the gateway to see the GET connection close');
  // And these while no connection carries the stream.
  await touch(gw.url, h, [uri(3), uri(4)]);

  const resumed = await openSse(gw.url, 'GET', { ...g, 'last-event-id': id0 });
  t.after(() => resumed.close());
  assert.equal(resumed.status, 200);
  assert.deepEqual(
    (await events(resumed, 4)).map(([id, m]) => [seqOf(id), m]),
    [1, 2, 3, 4].map((i) => [i + 1, updated(uri(i))]),
  );
});

test('the GET stream’s buffer is bounded by resumeBufferEvents and resumeBufferGetStreamBytes: the oldest are dropped and counted, a resumption from before them gets the rest', async (t) => {
  // Each resources/updated event here is 96 characters: 300 keep 3 of them.
  for (const [name, limits] of [
    ['events', { resumeBufferEvents: 3 }],
    ['characters', { resumeBufferGetStreamBytes: 300 }],
  ] as const) {
    const gw = await configGateway(t, { admin: { port: 0 }, limits, upstreams: { demo: { transport: 'embedded' } } }, { operations: true });
    const admin = gw.admin!.address().url;
    const dropped = async () =>
      find((await getText(`${admin}metrics`)).text, 'switchyard_stream_events_dropped_total', { kind: 'get', dialect: '2025-03-26', mount: 'demo' }).reduce(
        (a, s) => a + s.value,
        0,
      );
    const { h, g } = await session(gw.url);
    const uris = [10, 11, 12, 13, 14, 15].map(uri);
    await subscribe(gw.url, h, uris);
    const first = await openSse(gw.url, 'GET', g);
    t.after(() => first.close());
    assert.equal((await first.next()).data, '');
    await touch(gw.url, h, [uris[0]]);
    const [[id0, m0]] = await events(first, 1);
    assert.equal(JSON.stringify(m0).length, 96, name);
    await disconnect(gw, first);
    assert.equal(await dropped(), 0, name);

    // Five while no connection carries it: the ring keeps the last three, two are dropped.
    await touch(gw.url, h, uris.slice(1));
    assert.equal(await dropped(), 2, name);
    const resumed = await openSse(gw.url, 'GET', { ...g, 'last-event-id': id0 });
    t.after(() => resumed.close());
    assert.equal(resumed.status, 200, name);
    assert.deepEqual(
      (await events(resumed, 3)).map(([id, m]) => [seqOf(id), m]),
      [4, 5, 6].map((i) => [i, updated(uris[i - 1])]),
      name,
    );
    const line = gw.records.find((r) => r.msg === 'GET stream resumed with a gap');
    assert.equal(line?.missed, 2, name);
    assert.equal(line?.level, 30, name);
    // An id the stream never issued still names no event.
    const stream = id0.slice(0, id0.lastIndexOf('.'));
    resumed.close();
    await until(() => openGetStreams(gw) === 0, 'the resumed GET connection to close');
    const future = await send(gw.url, 'GET', undefined, { ...g, 'last-event-id': `${stream}.99` });
    assert.equal(future.status, 400, name);
  }
});

/** Characters of one resources/updated event for a `demo://items/<x><n>` URI of one letter and one digit. */
const EVENT_CHARS = JSON.stringify(updated('demo://items/a0')).length;

/** Sessions whose GET stream lost its connection, and the replays they get back, on `gw`. */
function parking(t: { after(fn: () => void): void }, gw: Gateway) {
  /** A session whose GET stream had a connection and lost it after its first event; with that event's id. */
  const parked = async (prefix: string) => {
    const s = await session(gw.url);
    const uris = [0, 1, 2, 3, 4, 5].map((i) => `demo://items/${prefix}${i}`);
    await subscribe(gw.url, s.h, uris);
    const live = await openSse(gw.url, 'GET', s.g);
    t.after(() => live.close());
    await live.next();
    await touch(gw.url, s.h, [uris[0]]);
    const [[id]] = await events(live, 1);
    await disconnect(gw, live);
    return { ...s, uris, id };
  };
  /** Resumes `s` after its first event; the sequence numbers replayed (read until 300 ms pass without one). */
  const replay = async (s: Awaited<ReturnType<typeof parked>>) => {
    const r = await openSse(gw.url, 'GET', { ...s.g, 'last-event-id': s.id });
    t.after(() => r.close());
    assert.equal(r.status, 200);
    const got: number[] = [];
    for (;;) {
      const e = await r.next(300).catch(() => undefined);
      if (!e) break;
      if (e.data !== '') got.push(seqOf(e.id!));
    }
    r.close();
    await until(() => openGetStreams(gw) === 0, 'the replay connection to close');
    return got;
  };
  return { parked, replay };
}

test('what a GET stream keeps while disconnected counts in the mount’s resumeBufferBytes until its session is deleted, and is then given back', async (t) => {
  // The budget holds seven events.
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26'], limits: { resumeBufferBytes: 7 * EVENT_CHARS } });
  const { parked, replay } = parking(t, gw);

  // A keeps five (one sent, four while disconnected); B, beside it, only its latest two.
  const a = await parked('a');
  await touch(gw.url, a.h, a.uris.slice(1, 5));
  const b = await parked('b');
  await touch(gw.url, b.h, b.uris.slice(1));
  assert.deepEqual(await replay(b), [5, 6], 'B keeps two beside A’s five');

  // A's session is deleted: its share comes back, and its stream is gone with it.
  assert.equal((await send(gw.url, 'DELETE', undefined, a.h)).status, 200);
  assert.equal((await send(gw.url, 'GET', undefined, { ...a.g, 'last-event-id': a.id })).status, 404);
  const c = await parked('c');
  await touch(gw.url, c.h, c.uris.slice(1));
  assert.deepEqual(await replay(c), [2, 3, 4, 5, 6], 'C keeps all it missed');
});

test('what a GET stream keeps while disconnected is given back when its session expires', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26'], limits: { resumeBufferBytes: 7 * EVENT_CHARS, sessionIdleMs: 1_000 } });
  const { parked, replay } = parking(t, gw);
  const dialect = gw.registry.dialects.get('2025-03-26')!;
  const a = await parked('a');
  await touch(gw.url, a.h, a.uris.slice(1, 5));
  // Nothing touches A any more: it expires (the sweep runs every second).
  await until(() => dialect.sessionCount === 0, 'A to expire', 15_000, 50);
  const b = await parked('b');
  await touch(gw.url, b.h, b.uris.slice(1));
  assert.deepEqual(await replay(b), [2, 3, 4, 5, 6], 'B keeps all it missed');
});

const FIXTURE = `${REPO_ROOT}/test/fixtures/conformance-server/server.mjs`;

test('the official SDK client (v1 StreamableHTTPClientTransport): a tools/list_changed sent while its GET connection was cut arrives after it reconnects', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" stdio`, dialects: ['2026-07-28', '2025-03-26'] });
  // The server side of each GET stream's connection, to cut it from the gateway's side.
  const getSockets: Socket[] = [];
  gw.http.app.server.on('request', (req: IncomingMessage) => {
    if (req.method === 'GET') getSockets.push(req.socket);
  });
  const client = new Client({ name: 'get-replay', version: '1.0.0' });
  const changes: unknown[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void changes.push(n));
  const transport = new StreamableHTTPClientTransport(new URL(gw.url), {
    // Long enough that the tools/call below is answered before the client reconnects, even on a
    // loaded machine (at 300 ms, CI once saw the reconnection come first and carry it early).
    reconnectionOptions: { initialReconnectionDelay: 2_000, maxReconnectionDelay: 2_000, reconnectionDelayGrowFactor: 1, maxRetries: 50 },
  });
  await client.connect(transport);
  t.after(() => client.close());
  await until(() => openGetStreams(gw) === 1 && getSockets.length === 1, 'the SDK’s GET stream');

  getSockets[0].destroy();
  await until(() => openGetStreams(gw) === 0, 'the GET connection to be gone');
  // While the client waits to reconnect (2 s), the upstream's tool list changes.
  const r = await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
  assert.equal(r.isError, undefined);
  assert.equal(changes.length, 0, 'nothing carried it yet');
  await until(() => changes.length === 1, 'the list_changed after the SDK resumed its GET stream');
  assert.deepEqual(changes, [{ method: 'notifications/tools/list_changed', params: {} }]);
  assert.equal(getSockets.length, 2, 'one reconnection');
  await new Promise((res) => setTimeout(res, 200));
  assert.equal(changes.length, 1, 'once');
});
