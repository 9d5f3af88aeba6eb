// Regression from a client-author trial: under `isolation: per-session` each client session has
// its own upstream session, yet a log message the upstream sent on that session outside any
// request (server-everything's simulated logging, on its GET stream or HTTP+SSE stream) was
// dropped: the routing table gave a log only to the sole call in flight that asked for logs.
// Such a log can only be for that session's client; it now reaches the client's own stream (the
// 2025 GET stream, the 2024-11-05 SSE stream) through the client's `logging/setLevel` filter.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { LoggingMessageNotificationSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { LOG_LEVELS } from '../../src/core/request.js';
import { fetch2024 } from '../helpers/clients.js';
import { gateway } from '../helpers/gateway.js';
import { everythingHttp } from '../helpers/servers.js';

/** A log message as the client received it, with whether it came after the toggling call returned. */
interface Seen {
  level: string;
  data: string;
  afterCall: boolean;
}

/**
 * One official v1 client through the gateway: sets `level`, turns server-everything's simulated
 * logging on for its own upstream session, and collects what arrives. server-everything sends one
 * message at once (inside the call) and one every period after it (5 s, here PACE_MS), each at a
 * random level and naming its upstream session (`- SessionId <id>`).
 */
async function logClient(
  t: { after(fn: () => Promise<void>): void },
  url: string,
  kind: 'streamable' | 'sse-2024',
  level: LoggingLevel,
): Promise<{ seen: Seen[]; upstreamSession: string; client: Client }> {
  const client = new Client({ name: `logs-${kind}`, version: '1.0.0' });
  const seen: Seen[] = [];
  let callDone = false;
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    seen.push({ level: n.params.level, data: String(n.params.data), afterCall: callDone });
  });
  const transport = kind === 'sse-2024' ? new SSEClientTransport(new URL(url), { fetch: fetch2024 }) : new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  t.after(() => client.close());
  await client.setLoggingLevel(level);
  const r = await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
  callDone = true;
  const text = (r.content as Array<{ text: string }>)[0].text;
  const m = /^Started simulated, random-leveled logging for session (\S+) /.exec(text);
  assert.ok(m, text);
  return { seen, upstreamSession: m[1], client };
}

/** server-everything's simulated logging period in these tests, ms (its own is 5000). */
const PACE_MS = 250;

/** Waits (bounded) until `done()`; fails with `what` otherwise. */
async function until(done: () => boolean, what: string, ms = 90_000): Promise<void> {
  for (const end = Date.now() + ms; !done();) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const mode of ['streamableHttp', 'sse'] as const) {
  test(`server-everything over ${mode}, per-session: logs sent outside any request reach the session's own client, through its level`, async (t) => {
    const server = await everythingHttp(t, mode, { paceMs: PACE_MS });
    const gw = await gateway(t, { upstreamUrl: server.url, dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
    // A 2025 client over Streamable HTTP (its GET stream) that wants everything, and a 2024-11-05
    // client over HTTP+SSE (its one stream) that wants `error` and above.
    const [all, severe] = await Promise.all([logClient(t, gw.url, 'streamable', 'debug'), logClient(t, gw.url, 'sse-2024', 'error')]);
    assert.notEqual(all.upstreamSession, severe.upstreamSession);

    // Messages after the call returned can only have come outside any request.
    await until(() => all.seen.filter((s) => s.afterCall).length >= 2 && severe.seen.some((s) => s.afterCall), 'logs outside a request');

    // Each client hears its own upstream session only.
    for (const c of [all, severe]) {
      for (const s of c.seen) assert.ok(s.data.endsWith(` - SessionId ${c.upstreamSession}`), `${s.data} for ${c.upstreamSession}`);
    }
    // The level filter of `logging/setLevel` holds outside requests as inside them.
    const admitted = LOG_LEVELS.slice(LOG_LEVELS.indexOf('error'));
    for (const s of severe.seen) assert.ok((admitted as readonly string[]).includes(s.level), `${s.level} passed an error filter`);

    // Stop the simulated logging before the teardown.
    await Promise.all([all, severe].map((c) => c.client.callTool({ name: 'toggle-simulated-logging', arguments: {} })));
  });
}

test('server-everything over streamableHttp, shared: a log outside any request cannot be attributed and reaches nobody', async (t) => {
  const server = await everythingHttp(t, 'streamableHttp', { paceMs: PACE_MS });
  const gw = await gateway(t, { upstreamUrl: server.url, isolation: 'shared' });
  const c = await logClient(t, gw.url, 'streamable', 'debug');
  // One upstream session serves every client: what it sends outside a request names nobody.
  const dropped = () =>
    gw.records.filter((r) => r.msg === 'upstream message has no client' && r.method === 'notifications/message' && r.upstream === 'default').length;
  await until(() => dropped() >= 1, 'a dropped log');
  // Routing is synchronous per upstream message: one delivered would already be here.
  assert.deepEqual(
    c.seen.filter((s) => s.afterCall),
    [],
  );
  await c.client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
});
