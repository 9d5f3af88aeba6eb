// Regression from a user trial: a server that keeps resource subscriptions per session
// (server-everything sends its simulated updates only to the session that subscribed and
// toggled them) was never heard from, because every subscription went to one control session.
// Subscribing on the client's own upstream session delivers each update to the subscribers that
// asked, and only to them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { HeldCalls } from '../../src/core/calls.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { CoreNotification, RequestContext } from '../../src/core/request.js';
import type { SessionRef } from '../../src/core/upstream.js';
import { eraClients } from '../../src/gateway.js';
import { createHttpUpstream } from '../../src/upstreams/http/index.js';
import { everythingHttp } from '../helpers/servers.js';

const INFO = { name: 'trial', version: '1.0.0' };

function ref(sessionKey: string): SessionRef {
  return { sessionKey, clientCapabilities: {}, clientInfo: INFO, protocolVersion: '2025-11-25', identity: null };
}

function call(sessionKey: string, name: string): RequestContext {
  return {
    ...ref(sessionKey),
    method: 'tools/call',
    params: { name, arguments: {} },
    logLevel: undefined,
    signal: AbortSignal.timeout(20_000),
    progressToken: undefined,
    onProgress: () => {},
    onLog: () => {},
    ask: undefined,
  };
}

/** A sink that records notifications and resolves `first` with the first one. */
function recorder(): { seen: CoreNotification[]; first: Promise<CoreNotification>; sink: (n: CoreNotification) => void } {
  const seen: CoreNotification[] = [];
  let resolve!: (n: CoreNotification) => void;
  const first = new Promise<CoreNotification>((r) => (resolve = r));
  return {
    seen,
    first,
    sink: (n) => {
      seen.push(n);
      resolve(n);
    },
  };
}

for (const mode of ['streamableHttp', 'sse'] as const) {
  test(`per-session upstream subscriptions over ${mode}: each client session gets its own updates, and only those`, async (t) => {
    const server = await everythingHttp(t, mode);
    const up = createHttpUpstream({
      name: 'everything',
      url: server.url,
      isolation: 'per-session',
      log: pino({ level: 'silent' }),
      limits: DEFAULT_LIMITS,
      clientInfo: { name: 'switchyard', version: 'test' },
      held: new HeldCalls(undefined),
      eras: await eraClients(),
    });
    await up.start();
    t.after(() => up.close());
    assert.ok(up.subscribeSession !== undefined);
    const uriA = 'demo://resource/static/document/architecture.md';
    const uriB = 'demo://resource/static/document/features.md';
    const a = recorder();
    const b = recorder();
    const gatewayWide = recorder();
    const subA = up.subscribeSession(ref('A'), { resourceSubscriptions: [uriA] }, a.sink);
    const subB = up.subscribeSession(ref('B'), { resourceSubscriptions: [uriB] }, b.sink);
    const subG = up.subscribe({ resourceSubscriptions: [uriA, uriB] }, gatewayWide.sink);
    t.after(() => [subA, subB, subG].forEach((s) => s.close()));

    // server-everything starts its simulated updates for the session that calls this tool.
    const toggled = await up.request(call('A', 'toggle-subscriber-updates'));
    assert.match(String((toggled.content as Array<{ text: string }>)[0].text), /^Started simulated resource updated notifications for session /);
    assert.deepEqual(await a.first, { method: 'notifications/resources/updated', params: { uri: uriA } });
    await up.request(call('B', 'toggle-subscriber-updates'));
    assert.deepEqual(await b.first, { method: 'notifications/resources/updated', params: { uri: uriB } });

    // Routing is synchronous per upstream message: a wrongly routed update would already be here.
    assert.ok(a.seen.every((n) => n.params.uri === uriA));
    assert.ok(b.seen.every((n) => n.params.uri === uriB));
    assert.deepEqual(gatewayWide.seen, []);

    // Ending a client session ends its upstream session and its subscriptions.
    up.release?.('A');
    up.release?.('B');
  });
}
