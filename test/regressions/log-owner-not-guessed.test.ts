// Regression from a hostile-client trial: a stdio child is shared by every client, and its log
// messages name no request. The routing table gave one to the sole call in flight that asked for
// logs, though another request in flight (another client's call that asked for none, or a
// subscription the gateway opened for another client) may have been the one the child logged
// for: server-everything's "Received Subscribe Resource request for URI: …" for Bob's
// subscription reached Alice's call. A log now goes to a call only when that call is the one
// request in flight on the connection (docs/upstreams.md, the routing table).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { everythingStdioCommand, gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, messagesUntilResponse, modernBody, modernHeaders, nextSseMessage, openSse, post, type SseReader } from '../helpers/http.js';

const SCRIPTED = path.join(REPO_ROOT, 'test/fixtures/scripted-server.mjs');

/**
 * Alice: a 2025-11-25 session that set `logging/setLevel` debug and declared elicitation, with
 * `tools/call` id 1 of `name`/`args` open on its POST stream until its first elicitation request
 * (read off the stream). Resolves with the stream, her headers and that request.
 */
async function aliceAsked(
  t: { after(fn: () => void): void },
  url: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ sse: SseReader; h: Record<string, string>; ask: Record<string, unknown> }> {
  const h = await initSession(url, '2025-11-25', { elicitation: {} });
  const level = await post(url, { jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level: 'debug' } }, h);
  assert.equal(level.status, 200, level.text);
  const sse = await openSse(url, 'POST', h, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }));
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  const ask = await nextSseMessage(sse, 20_000);
  assert.equal(ask.method, 'elicitation/create', JSON.stringify(ask));
  return { sse, h, ask };
}

/** Alice declines her elicitation and reads her call to its end; resolves with every message her stream carried after the request. */
async function aliceEnds(url: string, a: { sse: SseReader; h: Record<string, string>; ask: Record<string, unknown> }): Promise<Array<Record<string, unknown>>> {
  const answered = await post(url, { jsonrpc: '2.0', id: a.ask.id, result: { action: 'decline' } }, a.h);
  assert.equal(answered.status, 202, answered.text);
  const rest = await messagesUntilResponse(a.sse, 1);
  const last = rest.at(-1) as { id?: unknown; result?: unknown };
  assert.equal(last.id, 1);
  assert.ok(last.result, JSON.stringify(last));
  return rest;
}

test('server-everything over stdio: the log the child writes for a subscription opened for Bob does not reach Alice’s call', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand() });
  const alice = await aliceAsked(t, gw.url, 'trigger-elicitation-request', {});

  // Bob: another 2025 session with its GET stream open subscribes to a URI no one else has; the
  // gateway subscribes upstream, and server-everything logs the URI before it answers.
  const bob = await initSession(gw.url, '2025-11-25');
  const bobStream = await openSse(gw.url, 'GET', { ...bob, 'mcp-protocol-version': '2025-11-25' });
  t.after(() => bobStream.close());
  assert.equal(bobStream.status, 200);
  const uri = 'demo://resource/static/document/bob-private.md';
  const sub = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, bob);
  assert.deepEqual(sub.json, { jsonrpc: '2.0', id: 2, result: {} });

  // Alice's call was the one call in flight, and asked for logs: it still gets none of Bob's.
  const rest = await aliceEnds(gw.url, alice);
  assert.deepEqual(
    rest.filter((m) => m.method === 'notifications/message'),
    [],
  );
  assert.ok(
    gw.records.some((r) => r.msg === 'upstream message has no client' && r.method === 'notifications/message'),
    'the log is dropped, said at debug',
  );
});

test('a stdio child’s log during a 2026-07-28 client’s call that asked for no logs does not reach the 2025 call that asked for them; alone, a call still gets its own', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${SCRIPTED}"`, dialects: ['2026-07-28', '2025-03-26'] });
  const form = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } };
  const alice = await aliceAsked(t, gw.url, 'script', { steps: [{ ask: form }] });

  // Bob, a 2026-07-28 client without a logLevel, calls while Alice's call waits; the child logs
  // inside Bob's call, before it answers it.
  const log = { level: 'error', data: 'bob: card 4111 1111 1111 1111 declined' };
  const bob = await post(
    gw.url,
    modernBody(5, 'tools/call', { name: 'script', arguments: { steps: [{ notify: { method: 'notifications/message', params: log } }] } }),
    modernHeaders('tools/call', 'script'),
  );
  assert.equal(bob.status, 200, bob.text);
  assert.equal((bob.json as { result?: { content?: unknown } }).result?.content !== undefined, true, bob.text);

  const rest = await aliceEnds(gw.url, alice);
  assert.deepEqual(
    rest.filter((m) => m.method === 'notifications/message'),
    [],
  );

  // The one call in flight that asked for logs still gets the log written inside it.
  const own = { level: 'info', data: 'alice: step 1' };
  const h = await initSession(gw.url, '2025-11-25');
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: 0, method: 'logging/setLevel', params: { level: 'debug' } }, h)).status, 200);
  const sse = await openSse(
    gw.url,
    'POST',
    h,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'script', arguments: { steps: [{ notify: { method: 'notifications/message', params: own } }] } },
    }),
  );
  t.after(() => sse.close());
  const mine = await messagesUntilResponse(sse, 3);
  assert.deepEqual(
    mine.filter((m) => m.method === 'notifications/message'),
    [{ jsonrpc: '2.0', method: 'notifications/message', params: own }],
  );
});
