// Found by a client-author trial of `emulate` (h-trial12): with `--drop-stream-after`, one v1
// SDK client over HTTP+SSE showed as two in the report. Its event source opened the stream again
// on its own (GET /mcp without a session), which made a new HTTP+SSE session, and the report
// took that session for a second client: `client 2 … verdict: did not connect: initialize got no
// answer on the stream`, though that client never sent an initialize and was the first one. The
// report now counts one client with a reconnect, and says the new session was never initialized
// (the SDK POSTs its next request there, and is refused). A new client that follows the spec's
// fallback (POST first) after a dropped stream is still a client of its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Emulator } from '../../src/emulate/index.js';
import { testEmulator } from '../helpers/emulate.js';
import { v1FallbackClient } from '../helpers/clients.js';

async function emulator(t: { after(fn: () => Promise<void>): void }): Promise<Emulator> {
  return (await testEmulator(t, { era: '2024-11-05', dropStreamAfter: 3 })).emu;
}

/** The v1 SDK's documented fallback, which must fall back here (POST /mcp → 405). */
async function v1WithFallback(url: string, t: { after(fn: () => Promise<void>): void }): Promise<Client> {
  const { client, streamable } = await v1FallbackClient(url, t);
  assert.equal(streamable, false);
  return client;
}

/** Waits (at most 15 s) until `emu` has recorded `n` GETs that opened a stream. */
async function streamsOpened(emu: Emulator, n: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (emu.records.filter((r) => r.method === 'GET' && r.endpoint !== undefined).length >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`fewer than ${n} streams opened within 15 s`);
}

/**
 * Waits (at most 15 s) until the client's event source has read the second stream's `endpoint`
 * event: the emulator records the event when it writes it, and on a loaded machine the SDK's next
 * POST went to the dropped session's endpoint before it read the new one (404 Session not found).
 * Reads the v1 SDK's own field (`SSEClientTransport._endpoint`), which has no public accessor.
 */
async function clientReadEndpoint(client: Client, emu: Emulator): Promise<void> {
  const streams = emu.records.filter((r) => r.method === 'GET' && r.endpoint !== undefined);
  const latest = streams[streams.length - 1]?.endpoint;
  assert.ok(latest !== undefined);
  const transport = client.transport as unknown as { _endpoint?: URL };
  for (let i = 0; i < 300; i++) {
    if (transport._endpoint !== undefined && transport._endpoint.href === new URL(latest, emu.url).href) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`the client did not read the new endpoint ${latest} within 15 s (it has ${String(transport._endpoint)})`);
}

const PATH =
  'POST /mcp (initialize) → 405; GET /mcp → endpoint [dropped]; POST /messages?sessionId=… (initialize) → 202; ' +
  'POST /messages?sessionId=… (notifications/initialized) → 202; POST /messages?sessionId=… (tools/list) → 202; ' +
  'POST /messages?sessionId=… (tools/call) → 202';

test('emulate --drop-stream-after: a v1 HTTP+SSE client that reconnects its stream is one client with a reconnect', async (t) => {
  const emu = await emulator(t);
  const client = await v1WithFallback(emu.url, t);
  await client.listTools();
  // The third message event (this call's result) is the last one before the bench cuts the stream.
  assert.deepEqual((await client.callTool({ name: 'echo', arguments: { message: 'one' } })).content, [{ type: 'text', text: 'Echo: one' }]);
  await streamsOpened(emu, 2);
  await clientReadEndpoint(client, emu);
  // The SDK now POSTs to the new stream's endpoint, a session it never initialized.
  await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'two' } }), /Server not initialized/);
  await client.close();

  const verdict =
    'fell back to HTTP+SSE (negotiated 2024-11-05); called a tool (tools/call answered ×1); reconnected ×1 after a dropped stream, to a new HTTP+SSE session it did not initialize';
  assert.equal(
    emu.report(),
    `switchyard emulate --era 2024-11-05 (${emu.url})\n` +
      `${PATH}; GET /mcp → endpoint (reconnect); POST /messages?sessionId=… (tools/call) → 202\n` +
      `verdict: ${verdict}\n`,
  );
  assert.deepEqual(
    emu.verdicts().map((v) => [v.transport, v.fellBack, v.toolCalls, v.reconnects, v.text]),
    [['http+sse', true, 1, 1, verdict]],
  );
});

test('emulate --drop-stream-after: a new client that POSTs first after a dropped stream is a client of its own', async (t) => {
  const emu = await emulator(t);
  const first = await v1WithFallback(emu.url, t);
  await first.listTools();
  await first.callTool({ name: 'echo', arguments: { message: 'one' } });
  await first.close();
  const second = await v1WithFallback(emu.url, t);
  await second.listTools();
  await second.close();
  const report = emu.report().split('\n');
  assert.equal(report[1], `client 1 (node): ${PATH}`);
  assert.equal(report[2], 'client 1 verdict: fell back to HTTP+SSE (negotiated 2024-11-05); called a tool (tools/call answered ×1)');
  assert.match(report[3], /^client 2 \(node\): POST \/mcp \(initialize\) → 405; GET \/mcp → endpoint;/);
  assert.deepEqual(
    emu.verdicts().map((v) => v.reconnects),
    [0, 0],
  );
});
