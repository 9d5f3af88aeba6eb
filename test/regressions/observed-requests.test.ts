// Regressions found by a new user's trial (2026-12-03), read on the request channels that
// metrics, traces and the access log all subscribe to:
// - the first 2026-07-28 tools/call read its tool's x-mcp-header annotations with a tools/list
//   published as a client request of its own, and when that list failed (upstream down) the
//   client's tools/call was published nowhere: its error was counted as a tools/list;
// - requests a dialect answers itself (initialize, server/discover) dropped the caller's
//   traceparent header, so their spans started new traces (and were exported when unsampled).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { CHANNELS } from '../../src/core/diagnostics.js';
import type { RequestEndMessage, RequestStartMessage } from '../../src/core/diagnostics.js';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, post } from '../helpers/http.js';
import { allOn } from '../helpers/library.js';

const TRACEPARENT = '00-5af7651916cd43dd8448eb211c80319c-a7ad6b7169203331-00';

test('a 2026-07-28 tools/call is published once, as itself, not with the tools/list it reads annotations from', async (t) => {
  const gw = await gateway(t);
  const ends = allOn<RequestEndMessage>(t, CHANNELS.requestEnd);
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200);
  assert.deepEqual(
    ends.map((m) => [m.ctx.method, m.error === undefined]),
    [['tools/call', true]],
  );
});

test('with its upstream down, a 2026-07-28 tools/call is published as a tools/call with the upstream-down error', async (t) => {
  // Nothing listens on port 9 of 127.0.0.1: the upstream is down from the start.
  const gw = await gateway(t, { upstreamUrl: 'http://127.0.0.1:9/mcp' });
  const ends = allOn<RequestEndMessage>(t, CHANNELS.requestEnd);
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 503);
  assert.deepEqual(
    ends.map((m) => [m.ctx.method, m.code]),
    [['tools/call', 'SWY_ERR_UPSTREAM_DOWN']],
  );
});

test('initialize (2025) and server/discover (2026-07-28) carry the caller’s traceparent header', async (t) => {
  const gw = await gateway(t);
  const starts = allOn<RequestStartMessage>(t, CHANNELS.requestStart);
  const init = await post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    { ...H2025, traceparent: TRACEPARENT },
  );
  assert.equal(init.status, 200);
  const discover = await post(gw.url, modernBody(2, 'server/discover'), { ...modernHeaders('server/discover'), traceparent: TRACEPARENT });
  assert.equal(discover.status, 200);
  assert.deepEqual(
    starts.map((m) => [m.ctx.method, m.ctx.traceContext?.traceparent]),
    [
      ['initialize', TRACEPARENT],
      ['server/discover', TRACEPARENT],
    ],
  );
});

// Found by a trial (2026-12-04): a resource not found was published with the error's own code,
// not the one its client got: -32002 from an initialize-era upstream went to a 2026-07-28 client
// as -32602 (that revision uses -32602), and the demo's -32602 to a 2025 client as -32002.
const RAW_STDIO = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs')}" stdio`;

test('a resource not found is published with the code its 2026-07-28 client got (-32602), not the upstream’s -32002', async (t) => {
  const gw = await gateway(t, { stdio: RAW_STDIO });
  const ends = allOn<RequestEndMessage>(t, CHANNELS.requestEnd);
  const r = await post(gw.url, modernBody(1, 'resources/read', { uri: 'data://missing' }), modernHeaders('resources/read', 'data://missing'));
  assert.equal(r.status, 200);
  assert.equal((r.json as { error: { code: number } }).error.code, -32602);
  assert.deepEqual(
    ends.map((m) => [m.ctx.method, m.rpcCode]),
    [['resources/read', -32602]],
  );
});

test('a resource not found is published with the code its 2025 client got (-32002), not the demo’s -32602', async (t) => {
  const gw = await gateway(t);
  const headers = await initSession(gw.url);
  const ends = allOn<RequestEndMessage>(t, CHANNELS.requestEnd);
  const r = await post(
    gw.url,
    { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'demo://missing' } },
    { ...headers, 'mcp-protocol-version': '2025-06-18' },
  );
  assert.equal(r.status, 200);
  assert.equal((r.json as { error: { code: number } }).error.code, -32002);
  assert.deepEqual(
    ends.map((m) => [m.ctx.method, m.rpcCode]),
    [['resources/read', -32002]],
  );
});
