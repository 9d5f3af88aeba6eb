// Named in the closing notes of the last round: on an HTTP+SSE (2024-11-05) upstream the
// gateway's own `resources/subscribe` POSTs were not counted among the requests in flight (their
// answers were not awaited), so a log the server wrote for one while a client's call was the one
// call in flight went to that call. 2026-07-28 clients of one principal and capabilities share
// one upstream session (`per-session` has no client session to key on), so Bob's listen for a
// resource made the server log the URI into Alice's call. The gateway's own requests now count as
// in flight until their response comes on the stream (bounded by upstreamRequestTimeoutMs), and
// the log goes to no call (docs/upstreams.md, the routing table).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { answerMessages, listenResources, modernBody, modernHeaders, post } from '../helpers/http.js';
import { httpSseStub } from '../helpers/stub-http.js';

const URI = 'test://bob-private';

test('HTTP+SSE: the log the upstream writes for Bob’s subscription does not reach Alice’s call; her own log does', async (t) => {
  let called!: () => void;
  const aliceCalled = new Promise<void>((r) => (called = r));
  let subscribed!: () => void;
  const bobSubscribed = new Promise<void>((r) => (subscribed = r));
  const url = await httpSseStub(
    t,
    'sse-logging',
    (m, write) => {
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'slow', inputSchema: { type: 'object' } }] } });
      if (m.method === 'resources/list') return write({ id: m.id, result: { resources: [{ uri: URI, name: 'bob' }] } });
      if (m.method === 'resources/templates/list') return write({ id: m.id, result: { resourceTemplates: [] } });
      if (m.method === 'resources/subscribe') {
        // As server-everything does: the URI logged before the answer.
        write({ method: 'notifications/message', params: { level: 'info', data: `subscribed to ${String((m.params as { uri?: unknown }).uri)}` } });
        write({ id: m.id, result: {} });
        return subscribed();
      }
      if (m.method === 'tools/call') {
        write({ method: 'notifications/message', params: { level: 'info', data: 'alice: working' } });
        called();
        // Answered once Bob's subscription was answered, and the stream has carried it.
        return void bobSubscribed.then(() => setTimeout(() => write({ id: m.id, result: { content: [{ type: 'text', text: 'done' }] } }), 200));
      }
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    {
      initialize: (m, write) =>
        write({
          id: m.id,
          result: {
            protocolVersion: '2024-11-05',
            capabilities: { tools: {}, resources: { subscribe: true }, logging: {} },
            serverInfo: { name: 'sse-logging', version: '1.0.0' },
          },
        }),
    },
  );
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05' });

  // Alice: a 2026-07-28 call that asked for logs, in flight on the upstream session anonymous
  // 2026-07-28 clients with no capabilities share.
  const alice = post(
    gw.url,
    modernBody(1, 'tools/call', { name: 'slow', arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'debug' } }),
    modernHeaders('tools/call', 'slow'),
  );
  await aliceCalled;
  // Bob listens for a resource's updates: the gateway subscribes on the same upstream session.
  await listenResources(t, gw.url, [URI]);
  await bobSubscribed;

  const answered = await alice;
  assert.equal(answered.status, 200, answered.text);
  const toAlice = answerMessages(answered);
  assert.deepEqual(
    toAlice.filter((m) => m.method === 'notifications/message').map((m) => (m.params as { data?: unknown }).data),
    ['alice: working'],
  );
  assert.deepEqual(toAlice.at(-1)?.id, 1);
  assert.ok(
    gw.records.some((r) => r.msg === 'upstream message has no client' && r.method === 'notifications/message'),
    'Bob’s log is dropped, said at debug',
  );
});
