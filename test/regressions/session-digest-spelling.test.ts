// Regression from an operations review: a 2025 session was named two ways. Its log lines (and the
// session channels) carried sessionLogId, the SHA-256 of its id in base64url (22 characters); its
// spans' `mcp.session.id` the first 32 hex digits of the same SHA-256, written by a second
// function in the tracer. Neither could be found from the other. Both now come from sessionLogId.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { sessionLogId } from '../../src/core/identity.js';
import { post } from '../helpers/http.js';
import { configGateway, openSession } from '../helpers/ops.js';
import { attrs, receiver } from '../helpers/otlp.js';

test("a session's log lines and its spans name it by the same digest", async (t) => {
  const rx = await receiver(t);
  const gw = await configGateway(
    t,
    { admin: false, upstreams: { demo: { transport: 'embedded' } } },
    { operations: true, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '20' } },
  );
  const { headers } = await openSession(gw.url);
  const id = headers['mcp-session-id'];
  const call = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } }, headers);
  assert.equal(call.status, 200);
  await request(gw.url, { method: 'DELETE', headers }).then((r) => r.body.dump());

  const [server] = (await rx.named('tools/call echo', 2)).filter((s) => s.kind === 2);
  const [initialize] = await rx.named('initialize', 1);
  const opened = gw.records.find((r) => r.msg === 'session opened');
  const closed = gw.records.find((r) => r.msg === 'session closed');
  assert.equal(typeof opened?.sessionId, 'string');
  // The log field and the span attribute, for the same session: one value, from one function.
  assert.equal(attrs(server.attributes)['mcp.session.id'], opened!.sessionId);
  assert.equal(attrs(initialize.attributes)['mcp.session.id'], opened!.sessionId);
  assert.equal(closed?.sessionId, opened!.sessionId);
  assert.equal(opened!.sessionId, sessionLogId(id));
  assert.notEqual(opened!.sessionId, id);
});
