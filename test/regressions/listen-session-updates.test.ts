// Regression from a client-author trial: a 2026-07-28 client's `subscriptions/listen` for a
// resource never fired in front of server-everything over HTTP. server-everything keeps
// subscriptions per upstream session and sends `notifications/resources/updated` only on the
// session that both subscribed to the URI and called `toggle-subscriber-updates` (its
// resources/subscriptions.js). The gateway subscribed on its own control session, while the
// client's `tools/call` ran on the upstream session of its principal and capability set: the
// session that toggled had subscribed to nothing, the one that subscribed never toggled. The
// listen now subscribes where the client's calls go.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as v2 from '@modelcontextprotocol/client';
import { gateway } from '../helpers/gateway.js';
import { everythingHttp } from '../helpers/servers.js';

const URI = 'demo://resource/static/document/architecture.md';

for (const mode of ['streamableHttp', 'sse'] as const) {
  test(`server-everything over ${mode}: a 2026-07-28 listen hears the updates its own calls turned on`, async (t) => {
    const server = await everythingHttp(t, mode);
    const gw = await gateway(t, { upstreamUrl: server.url });
    const client = new v2.Client({ name: 'listener', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const updates: unknown[] = [];
    let first!: () => void;
    const got = new Promise<void>((resolve) => (first = resolve));
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params);
      first();
    });
    await client.connect(new v2.StreamableHTTPClientTransport(new URL(gw.url)));
    t.after(() => client.close());

    const sub = await client.listen({ resourceSubscriptions: [URI] });
    assert.deepEqual(sub.honoredFilter, { resourceSubscriptions: [URI] });
    const toggled = await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    assert.match((toggled.content as Array<{ text: string }>)[0].text, /^Started simulated resource updated notifications for session /);
    // server-everything sends one update at once, then one every 5 s.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([got, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no update within 20 s')), 20_000)))]);
    clearTimeout(timer);
    const u = updates[0] as { uri: string; _meta?: Record<string, unknown> };
    assert.equal(u.uri, URI);

    await sub.close();
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
  });
}
