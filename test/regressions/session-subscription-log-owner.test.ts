// Found beside http-sse-subscription-log-owner: on a Streamable HTTP (2025) upstream session the
// gateway's own `resources/subscribe` waits for its answer, but was not counted among the
// requests in flight when the session's GET stream carried a log, so a server that logged the
// subscription there (rather than on the subscription's own POST stream) put Bob's log into
// Alice's call, the one call in flight on the upstream session 2026-07-28 clients of one
// principal and capabilities share. The gateway's own requests now count while they wait for
// their answer (docs/upstreams.md, the routing table).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { gateway } from '../helpers/gateway.js';
import { answerMessages, listenResources, modernBody, modernHeaders, post } from '../helpers/http.js';
import { sessionStub } from '../helpers/stub-http.js';

const URI = 'test://bob-private';

test('Streamable HTTP: a log on the GET stream while Bob’s subscription waits for its answer does not reach Alice’s call', async (t) => {
  let called!: () => void;
  const aliceCalled = new Promise<void>((r) => (called = r));
  let subscribed!: () => void;
  const bobSubscribed = new Promise<void>((r) => (subscribed = r));
  const gets: http.ServerResponse[] = [];
  const json = (res: http.ServerResponse, body: unknown) =>
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify(body));
  const url = await sessionStub(t, {
    name: 'get-logging',
    tool: 'slow',
    capabilities: { tools: {}, resources: { subscribe: true }, logging: {} },
    before: (req, res, m) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
        gets.push(res);
        return true;
      }
      if (m?.method === 'resources/list') return (json(res, { jsonrpc: '2.0', id: m.id, result: { resources: [{ uri: URI, name: 'bob' }] } }), true);
      if (m?.method === 'resources/templates/list') return (json(res, { jsonrpc: '2.0', id: m.id, result: { resourceTemplates: [] } }), true);
      if (m?.method === 'resources/subscribe') {
        // The URI logged on the GET streams before the answer (a SHOULD the server breaks).
        const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `subscribed to ${URI}` } };
        for (const g of gets) g.write(`data: ${JSON.stringify(log)}\n\n`);
        setTimeout(() => {
          json(res, { jsonrpc: '2.0', id: m.id, result: {} });
          subscribed();
        }, 200);
        return true;
      }
      return false;
    },
    call: (id, res) => {
      called();
      // Answered once Bob's subscription was answered.
      void bobSubscribed.then(() => setTimeout(() => json(res, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }] } }), 200));
      return undefined;
    },
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18' });

  // Alice: a 2026-07-28 call that asked for logs, on the upstream session anonymous 2026-07-28
  // clients with no capabilities share.
  const alice = post(
    gw.url,
    modernBody(1, 'tools/call', { name: 'slow', arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'debug' } }),
    modernHeaders('tools/call', 'slow'),
  );
  await aliceCalled;
  await listenResources(t, gw.url, [URI]);
  await bobSubscribed;

  const answered = await alice;
  assert.equal(answered.status, 200, answered.text);
  const toAlice = answerMessages(answered);
  assert.deepEqual(
    toAlice.map((m) => m.method ?? m.id),
    [1],
  );
  assert.ok(
    gw.records.some((r) => r.msg === 'upstream message has no client' && r.method === 'notifications/message'),
    'Bob’s log is dropped, said at debug',
  );
});
