// Acceptance 5: server-everything's resource updates reach the client that subscribed through
// Switchyard (server-everything over stdio, and over Streamable HTTP, where it keeps
// subscriptions per session), and a session that did not subscribe gets none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { initSession, openSse } from '../helpers/http.js';
import { everythingHttp } from '../helpers/servers.js';

const URI = 'demo://resource/static/document/architecture.md';

/** Counts `: keepalive` comments in an SSE body. */
const keepalives = (raw: string) => raw.split(': keepalive').length - 1;

for (const mode of ['stdio', 'streamableHttp'] as const) {
  test(`server-everything over ${mode}: the subscriber gets notifications/resources/updated, a session that did not subscribe gets none`, async (t) => {
    const upstream = mode === 'stdio' ? { stdio: everythingStdioCommand() } : { upstreamUrl: (await everythingHttp(t, 'streamableHttp')).url };
    // Short keepalives: they order the bystander's stream in time (see below).
    const gw = await gateway(t, { ...upstream, limits: { ...DEFAULT_LIMITS, keepaliveMs: 100 } });

    // The bystander: a 2025 session with its GET stream open and no subscription.
    const h = await initSession(gw.url);
    const bystander = await openSse(gw.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'] });
    t.after(() => bystander.close());
    assert.equal(bystander.status, 200);

    // The subscriber: the official v1 client over Streamable HTTP.
    const client = new Client({ name: 'subscriber', version: '1.0.0' });
    const updates: Array<{ uri: string }> = [];
    let first!: () => void;
    const got = new Promise<void>((resolve) => (first = resolve));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params);
      first();
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    t.after(() => client.close());
    await client.subscribeResource({ uri: URI });
    const toggled = await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    assert.match((toggled.content as Array<{ text: string }>)[0].text, /^Started simulated resource updated notifications for session /);
    await got;
    assert.deepEqual(updates[0], { uri: URI });

    // Switchyard routes each upstream message at once, to every stream it goes to. Two keepalives
    // written to the bystander after the update arrived here come after any copy routed to it.
    const seen = keepalives(bystander.raw());
    for (let i = 0; i < 400 && keepalives(bystander.raw()) < seen + 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(keepalives(bystander.raw()) >= seen + 2, 'two more keepalives');
    assert.doesNotMatch(bystander.raw(), /resources\/updated/);
    assert.ok(updates.every((u) => u.uri === URI));

    // Stop the simulated updates before the teardown.
    await client.unsubscribeResource({ uri: URI });
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
  });
}
