// Regressions found by a new user's trial (2026-12-03), read on the request channels that
// metrics, traces and the access log all subscribe to:
// - the first 2026-07-28 tools/call read its tool's x-mcp-header annotations with a tools/list
//   published as a client request of its own, and when that list failed (upstream down) the
//   client's tools/call was published nowhere: its error was counted as a tools/list;
// - requests a dialect answers itself (initialize, server/discover) dropped the caller's
//   traceparent header, so their spans started new traces (and were exported when unsampled).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS } from '../../src/core/diagnostics.js';
import type { RequestEndMessage, RequestStartMessage } from '../../src/core/diagnostics.js';
import { gateway } from '../helpers/gateway.js';
import { H2025, modernBody, modernHeaders, post } from '../helpers/http.js';
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
