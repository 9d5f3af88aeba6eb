// A 2025 session's notifications followed a changed identity only at a config reload: a client
// that (re)opened its GET stream with a refreshed token of the same principal granting another
// scope kept hearing what the session's first token was let see. With a policy rule asking for
// `mcp:admin` to read a resource, a session opened with an `mcp:read` token never heard that
// resource's `resources/updated`, even on a GET stream opened with an `mcp:admin` token whose
// own reads of it were allowed (and a session opened with `mcp:admin` went on hearing it on a
// GET stream whose token had lost the scope). The GET attach now makes the session's filter
// follow the identity the GET proved (docs/security.md, "Policy and session binding").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Gateway } from '../../src/gateway.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { userToken } from '../helpers/oauth.js';
import { openSse, post, type SseReader } from '../helpers/http.js';
import { gatewayFromConfig, openSession, sessionHeaders } from '../helpers/identity.js';
import { until } from '../helpers/replicas.js';

/** Readable with `mcp:admin` only. */
const README = 'demo://readme';
/** Readable by anyone. */
const ITEM = 'demo://items/1';
const FOLLOWED = 'session notifications now follow the identity its GET stream proves';
const policy = {
  default: 'allow',
  rules: [
    {
      name: 'readme-needs-admin',
      effect: 'deny',
      when: `component.kind == "resource" && component.name == "${README}" && !("mcp:admin" in principal.scopes)`,
    },
  ],
};

/** GET streams of the 2025 dialect that a connection carries now. */
const openGetStreams = (gw: Gateway) => gw.registry.dialects.get('2025-03-26')!.streamCount();

/** The URI of the next `resources/updated` on `sse` (the priming event and other data-less events skipped). */
async function nextUpdate(sse: SseReader): Promise<string> {
  for (;;) {
    const ev = await sse.next(10_000);
    if (!ev.data) continue;
    const m = JSON.parse(ev.data) as { method?: string; params?: { uri?: string } };
    assert.equal(m.method, 'notifications/resources/updated', ev.data);
    return m.params!.uri!;
  }
}

/** A gateway whose policy lets README be read with `mcp:admin` only, and two tokens of alice: `read` (mcp:read) and `admin` (mcp:read mcp:admin). */
async function setUp(t: { after(fn: () => Promise<void> | void): void }) {
  const as = await startAuthServer(t);
  const gw = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer } }, policy, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  // The same principal (issuer and subject), other scopes.
  const read = `Bearer ${await userToken(as, url, 'mcp:read')}`;
  const admin = `Bearer ${await userToken(as, url, 'mcp:read mcp:admin')}`;
  assert.notEqual(read, admin);
  return { as, gw, url, read, admin };
}

/**
 * A 2025 session on `url` opened with `opener`, subscribed to README and ITEM with `admin` (a
 * subscription is a read: the mcp:admin token's request may, in the same principal's session).
 */
async function session(t: { after(fn: () => void): void }, gw: Gateway, url: string, opener: string, admin: string) {
  const sid = await openSession(url, opener);
  const h = (authorization: string) => sessionHeaders(sid, authorization);
  for (const [i, uri] of [README, ITEM].entries()) {
    const res = await post(url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, h(admin));
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 10 + i, result: {} });
  }
  let n = 100;
  return {
    /** README touched, then ITEM, as `authorization`: the next update a stream hears is README's when it may, else ITEM's. */
    async touchBoth(authorization: string): Promise<void> {
      for (const uri of [README, ITEM]) {
        const res = await post(url, { jsonrpc: '2.0', id: n++, method: 'tools/call', params: { name: 'touch', arguments: { uri } } }, h(authorization));
        assert.equal(res.status, 200, res.text);
      }
    },
    /** True when a resources/read of README as `authorization` is answered with a result. */
    async mayRead(authorization: string): Promise<boolean> {
      const res = await post(url, { jsonrpc: '2.0', id: n++, method: 'resources/read', params: { uri: README } }, h(authorization));
      return (res.json as { error?: unknown }).error === undefined;
    },
    /** Opens the session's GET stream with `authorization` (resuming after `lastEventId` when given). */
    async getWith(authorization: string, lastEventId?: string): Promise<SseReader> {
      const sse = await openSse(url, 'GET', {
        accept: 'text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-03-26',
        authorization,
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      });
      t.after(() => sse.close());
      assert.equal(sse.status, 200);
      return sse;
    },
    /** Closes `sse` and waits until the gateway saw its connection go. */
    async disconnect(sse: SseReader): Promise<void> {
      sse.close();
      await sse.ended;
      await until(() => openGetStreams(gw) === 0, 'the gateway to see the GET connection close');
    },
  };
}

/** The id of the last event `sse` received. */
const lastId = (sse: SseReader) => [...sse.raw().matchAll(/^id: ?(.*)$/gm)].at(-1)![1];

test("a 2025 GET stream opened with a token of the session's principal granting a scope the session's first token had not: README's update, which that token may read, now arrives", async (t) => {
  const { as, gw, url, read, admin } = await setUp(t);
  const s = await session(t, gw, url, read, admin);

  // The session's token may not read README, and its GET stream does not hear README's update.
  assert.equal(await s.mayRead(read), false);
  const first = await s.getWith(read);
  await s.touchBoth(read);
  assert.equal(await nextUpdate(first), ITEM);
  assert.equal(gw.records.filter((r) => r.msg === FOLLOWED).length, 0);
  await s.disconnect(first);

  // A new GET stream with alice's mcp:admin token, whose reads of README are allowed: README's update arrives.
  assert.equal(await s.mayRead(admin), true);
  const second = await s.getWith(admin);
  await s.touchBoth(admin);
  assert.equal(await nextUpdate(second), README);
  assert.equal(await nextUpdate(second), ITEM);
  const lines = gw.records.filter((r) => r.msg === FOLLOWED);
  assert.deepEqual(
    lines.map((r) => [r.level, r.dialect, r.principal, typeof r.sessionId]),
    [[30, '2025-03-26', { iss: as.issuer, sub: 'alice' }, 'string']],
  );
  assert.equal(JSON.stringify(gw.records).includes(admin.slice('Bearer '.length)), false, 'the token is never logged');
});

test("a 2025 GET stream resumed (Last-Event-ID) with a token of the session's principal that lost a scope: README's update, which that token may not read, no longer arrives", async (t) => {
  const { gw, url, read, admin } = await setUp(t);
  const s = await session(t, gw, url, admin, admin);
  const first = await s.getWith(admin);
  await s.touchBoth(admin);
  assert.equal(await nextUpdate(first), README);
  assert.equal(await nextUpdate(first), ITEM);
  await s.disconnect(first);

  const resumed = await s.getWith(read, lastId(first));
  await s.touchBoth(read);
  assert.equal(await nextUpdate(resumed), ITEM);
  assert.equal(gw.records.filter((r) => r.msg === FOLLOWED).length, 1);
});
