// Named in the closing notes of the last round: an HTTP+SSE (2024-11-05) upstream session whose
// stream the upstream ended (a restart, a proxy's timeout) was opened again only by a client's
// next request. The gateway's own (control) session, which carries gateway-wide resource
// subscriptions and list changes, is never used by a request, so it stayed dead for good: a
// listen's resources/updated stopped for ever, unsaid. A client session with subscribers lost its
// updates the same way until its client called again. Both now open again at once and subscribe
// again (the control session with backoff while the upstream cannot open one), as 2025 Streamable
// HTTP sessions do (docs/upstreams.md, "2024-11-05 HTTP+SSE").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configGateway } from '../helpers/ops.js';
import { initSession, listenResources, modernBody, modernHeaders, openSse, post, type SseReader } from '../helpers/http.js';
import { httpSseStub } from '../helpers/stub-http.js';

const URI = 'test://watched';
const UPDATED = /"method":"notifications\/resources\/updated","params":\{[^}]*"uri":"test:\/\/watched"/g;

type Write = (msg: Record<string, unknown>) => void;

/**
 * An HTTP+SSE upstream whose resources can be subscribed to: `subscribed` lists the session of
 * each resources/subscribe of URI (in order), `writers` what writes on each session's stream,
 * `cut(session)` ends a session's stream from the server's side, and while `down` is true its
 * GETs are answered 503 (`refused` counts them). The first `flaps` resources/subscribe POSTs have
 * their session's stream cut instead of an answer (an upstream that drops every new stream).
 */
async function watchedUpstream(t: { after(fn: () => Promise<void>): void }, flaps = 0) {
  const subscribed: string[] = [];
  const writers = new Map<string, Write>();
  const cuts = new Map<string, () => void>();
  const state = { down: false, refused: 0, flapped: 0 };
  const url = await httpSseStub(
    t,
    'watched',
    (m, write, _raw, session) => {
      writers.set(session, write);
      if (m.method === 'resources/subscribe') {
        if ((m.params as { uri?: unknown }).uri === URI) subscribed.push(session);
        return write({ id: m.id, result: {} });
      }
      if (m.method === 'resources/unsubscribe') return write({ id: m.id, result: {} });
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [] } });
      if (m.method === 'resources/list') return write({ id: m.id, result: { resources: [{ uri: URI, name: 'watched' }] } });
      if (m.method === 'resources/templates/list') return write({ id: m.id, result: { resourceTemplates: [] } });
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    {
      initialize: (m, write) =>
        write({
          id: m.id,
          result: {
            protocolVersion: '2024-11-05',
            capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
            serverInfo: { name: 'watched', version: '1.0.0' },
          },
        }),
      onStream: (session, cut) => cuts.set(session, cut),
      refuseStreams: () => state.down && ++state.refused > 0,
      cutOn: (m) => m.method === 'resources/subscribe' && state.flapped < flaps && ++state.flapped > 0,
    },
  );
  return { url, subscribed, writers, cut: (session: string) => cuts.get(session)!(), state };
}

/** Waits (at most 200 × 25 ms) until `ok()`; false when it never held. */
async function until(ok: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  return ok();
}

/** How many resources/updated for URI `reader` got. */
const updates = (reader: SseReader) => reader.raw().match(UPDATED)?.length ?? 0;

test('HTTP+SSE: the control session whose stream is lost opens again (with backoff while the upstream is down), subscribes again, and updates flow', async (t) => {
  const up = await watchedUpstream(t);
  // `shared`: a listen is served by the gateway-wide (control) session.
  const gw = await configGateway(t, { upstreams: { up: { url: up.url, transport: 'sse', isolation: 'shared' } } });
  const body = modernBody('L1', 'subscriptions/listen', { notifications: { toolsListChanged: true, resourceSubscriptions: [URI] } });
  const listen = await openSse(gw.url, 'POST', modernHeaders('subscriptions/listen'), JSON.stringify(body));
  t.after(() => listen.close());
  assert.equal(JSON.parse((await listen.next()).data).method, 'notifications/subscriptions/acknowledged');
  assert.ok(await until(() => up.subscribed.length === 1));
  const control = up.subscribed[0];
  up.writers.get(control)!({ method: 'notifications/resources/updated', params: { uri: URI } });
  assert.ok(await until(() => updates(listen) === 1));

  // The upstream goes away (its stream ends) and refuses streams for a while.
  up.state.down = true;
  up.cut(control);
  assert.ok(await until(() => up.state.refused >= 3), 'the gateway tries again while the upstream is down');
  up.state.down = false;

  // A fresh subscribe on a new session, and the update sent there reaches the listener.
  assert.ok(await until(() => up.subscribed.length === 2), `a fresh subscribe; subscribed on ${JSON.stringify(up.subscribed)}`);
  const next = up.subscribed[1];
  assert.notEqual(next, control);
  const listChanges = () => listen.raw().match(/notifications\/tools\/list_changed/g)?.length ?? 0;
  assert.ok(await until(() => listChanges() === 1), 'told its lists may have changed meanwhile');
  const listChangesBefore = listChanges();
  up.writers.get(next)!({ method: 'notifications/resources/updated', params: { uri: URI } });
  up.writers.get(next)!({ method: 'notifications/tools/list_changed', params: {} });
  assert.ok(await until(() => updates(listen) === 2));
  assert.ok(await until(() => listChanges() === listChangesBefore + 1));

  // Said once per loss, once at warn for the outage (the further failures at debug), once per recovery.
  const lines = (msg: string) => gw.records.filter((r) => r.msg === msg);
  assert.deepEqual(
    lines('upstream session lost: opening a new one').map((r) => [r.level, r.session]),
    [[30, 'control']],
  );
  assert.deepEqual(
    lines('upstream control session did not reopen').map((r) => r.level),
    [40, ...Array<number>(up.state.refused - 1).fill(20)],
  );
  assert.deepEqual(
    lines('upstream control session reopened').map((r) => [r.level, r.attempts]),
    [[30, up.state.refused + 1]],
  );
});

test('HTTP+SSE: a 2025 client’s own upstream session whose stream is lost opens again and subscribes again, with no request from the client', async (t) => {
  const up = await watchedUpstream(t);
  const gw = await configGateway(t, { upstreams: { up: { url: up.url, transport: 'sse' } } });
  const h = await initSession(gw.url, '2025-11-25');
  const get = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
  t.after(() => get.close());
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: URI } }, h)).status, 200);
  assert.ok(await until(() => up.subscribed.length === 1));
  const own = up.subscribed[0];
  up.writers.get(own)!({ method: 'notifications/resources/updated', params: { uri: URI } });
  assert.ok(await until(() => updates(get) === 1));

  up.cut(own);
  // The client sends nothing more: its new upstream session subscribes by itself.
  assert.ok(await until(() => up.subscribed.length === 2), `a fresh subscribe; subscribed on ${JSON.stringify(up.subscribed)}`);
  const next = up.subscribed[1];
  assert.notEqual(next, own);
  up.writers.get(next)!({ method: 'notifications/resources/updated', params: { uri: URI } });
  assert.ok(await until(() => updates(get) === 2));
});

test('HTTP+SSE: a control session the upstream drops again as soon as it reopens is reopened with backoff, its repeated losses said at debug', async (t) => {
  const up = await watchedUpstream(t, 4);
  const gw = await configGateway(t, { upstreams: { up: { url: up.url, transport: 'sse', isolation: 'shared' } } });
  const listen = await listenResources(t, gw.url, [URI]);
  // Four sessions lose their stream at their subscribe; the fifth keeps it, and its update flows.
  assert.ok(await until(() => up.subscribed.length === 1), `flapped ${up.state.flapped}`);
  assert.equal(up.state.flapped, 4);
  up.writers.get(up.subscribed[0])!({ method: 'notifications/resources/updated', params: { uri: URI } });
  assert.ok(await until(() => updates(listen) === 1));
  // The first loss and its recovery at info; each loss right after a reopening, and its recovery, at debug.
  const levels = (msg: string) => gw.records.filter((r) => r.msg === msg).map((r) => r.level);
  assert.deepEqual(levels('upstream session lost: opening a new one'), [30, 20, 20, 20]);
  assert.deepEqual(levels('upstream control session reopened'), [30, 20, 20, 20]);
  assert.deepEqual(levels('upstream control session did not reopen'), []);
});

test('HTTP+SSE: a client’s session the upstream drops again as soon as it reopens is reopened with backoff, its repeated losses said at debug', async (t) => {
  const up = await watchedUpstream(t, 3);
  const gw = await configGateway(t, { upstreams: { up: { url: up.url, transport: 'sse' } } });
  const h = await initSession(gw.url, '2025-11-25');
  const get = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
  t.after(() => get.close());
  await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: URI } }, h);
  // Three sessions lose their stream at their subscribe; the fourth keeps it, and its update flows.
  assert.ok(await until(() => up.subscribed.length === 1), `flapped ${up.state.flapped}`);
  assert.equal(up.state.flapped, 3);
  up.writers.get(up.subscribed[0])!({ method: 'notifications/resources/updated', params: { uri: URI } });
  assert.ok(await until(() => updates(get) === 1));
  // The first loss at info; each loss right after a reopening at debug (no tight loop of info lines).
  const lost = gw.records.filter((r) => r.msg === 'upstream session lost: opening a new one' && r.session !== 'control');
  assert.deepEqual(
    lost.map((r) => r.level),
    [30, 20, 20],
  );
});

test('HTTP+SSE: a client’s session whose stream is lost while the upstream is down opens again once it is back, with backoff meanwhile and no request from the client', async (t) => {
  const up = await watchedUpstream(t);
  const gw = await configGateway(t, { upstreams: { up: { url: up.url, transport: 'sse' } } });
  const h = await initSession(gw.url, '2025-11-25');
  const get = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
  t.after(() => get.close());
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: URI } }, h)).status, 200);
  assert.ok(await until(() => up.subscribed.length === 1));
  const own = up.subscribed[0];

  up.state.down = true;
  up.cut(own);
  assert.ok(await until(() => up.state.refused >= 3), 'the gateway tries again while the upstream is down');
  up.state.down = false;
  // The client sends nothing: its session opens again once the upstream is back, and subscribes.
  assert.ok(await until(() => up.subscribed.length === 2), `a fresh subscribe; subscribed on ${JSON.stringify(up.subscribed)}`);
  up.writers.get(up.subscribed[1])!({ method: 'notifications/resources/updated', params: { uri: URI } });
  assert.ok(await until(() => updates(get) === 1));
  // One warn for the outage, the further failures at debug, one recovery line.
  const lines = (msg: string) => gw.records.filter((r) => r.msg === msg && r.session !== 'control');
  assert.deepEqual(
    lines('upstream session did not reopen').map((r) => r.level),
    [40, ...Array<number>(up.state.refused - 1).fill(20)],
  );
  assert.deepEqual(
    lines('upstream session reopened').map((r) => [r.level, r.attempts]),
    [[30, up.state.refused + 1]],
  );
});
