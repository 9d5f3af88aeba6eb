// A member's own requestTimeoutMs through the aggregate, for members whose answer does not come
// as the headers of the POST. Found by a trial (h-trial5): docs/config.md says a call through the
// aggregate to an HTTP upstream is bounded by that upstream's own `requestTimeoutMs`, and
// test/regressions/aggregate-deadline.test.ts checks it for a 2026-07-28 member, where the bound
// was undici's headersTimeout. An HTTP+SSE member (its answer comes on the session's stream, after
// a 202) and a 2025 member that answers with an SSE stream (headers at once, the result later) had
// no bound but the aggregate's own (300 s by default): a call to a tool that hung held the client
// for five minutes, where the member's own mount answered "Request timed out: 500 ms".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configGateway } from '../helpers/ops.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, modernMeta, post } from '../helpers/http.js';

const SLOW = { steps: 12, stepMs: 250 }; // 3 s in all, progress and a log line every step

for (const [label, member] of [
  ['an HTTP+SSE member', (base: string) => ({ url: `${base}/sse`, era: '2024-11-05' })],
  ['a 2025 member answering with an SSE stream', (base: string) => ({ url: `${base}/mcp`, era: '2025-11-25' })],
] as const) {
  test(`through the aggregate, a call to ${label} past its requestTimeoutMs is answered Request timed out in time`, async (t) => {
    const upstream = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
    const base = new URL(upstream.url).origin;
    const gw = await configGateway(t, {
      admin: false,
      limits: { requestTimeoutMs: 20_000 },
      upstreams: { rem: { ...member(base), limits: { requestTimeoutMs: 500 } } },
      aggregate: {},
    });
    const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
    const direct = gw.mounts.find((m) => m.name === 'rem')!.url;
    const own = await post(direct, modernBody(0, 'tools/call', { name: 'slow', arguments: SLOW }), modernHeaders('tools/call', 'slow'));
    assert.deepEqual(own.json, { jsonrpc: '2.0', id: 0, error: { code: -32000, message: 'Request timed out: 500 ms' } });
    const started = Date.now();
    const r = await post(agg, modernBody(1, 'tools/call', { name: 'rem__slow', arguments: SLOW }), modernHeaders('tools/call', 'rem__slow'));
    const tookMs = Date.now() - started;
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Request timed out: 500 ms' } });
    assert.equal(r.status, own.status);
    assert.ok(tookMs < 2500, `answered after ${tookMs} ms`);
    // With a progress token the member streams its answer (progress first, the result later).
    const withProgress = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'rem__slow', arguments: SLOW, _meta: modernMeta({}, { progressToken: 'p3' }) },
    };
    const streamedFrom = Date.now();
    const s = await post(agg, withProgress, modernHeaders('tools/call', 'rem__slow'));
    const streamedMs = Date.now() - streamedFrom;
    assert.match(s.text, /"id":3,"error":\{"code":-32000,"message":"Request timed out: 500 ms"\}/);
    assert.ok(streamedMs < 2500, `answered after ${streamedMs} ms`);
    // The member is not marked down for it.
    const echo = await post(agg, modernBody(2, 'tools/call', { name: 'rem__echo', arguments: { message: 'up' } }), modernHeaders('tools/call', 'rem__echo'));
    assert.equal((echo.json as { result?: unknown }).result !== undefined, true, echo.text);
  });
}
