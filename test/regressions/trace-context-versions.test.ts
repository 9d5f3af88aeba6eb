// A traceparent of a later version than 00: the front doors and tracing read it as W3C Trace
// Context asks ("Versioning of traceparent": a higher version SHOULD be parsed at version 00's
// places), where they used to drop it and start a new trace.
// Tracing off: it reaches the upstream unchanged. Tracing on: the server span continues its
// trace, and the upstream gets a version-00 traceparent naming our client span.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, opsHttp, tracedGateway } from '../helpers/ops.js';

const LATER = 'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds';

function seen(json: unknown): { header: string | null; meta: string | null } {
  return JSON.parse((json as { result: { content: Array<{ text: string }> } }).result.content[0].text) as { header: string | null; meta: string | null };
}

test('tracing off: a later-version traceparent (header or _meta) reaches the upstream unchanged', async (t) => {
  const upstream = await opsHttp(t);
  const gw = await configGateway(t, { upstreams: { web: { url: upstream.url } } });
  const call = (extra: Record<string, string>, meta: Record<string, unknown> = {}) =>
    post(gw.url, modernBody(1, 'tools/call', { name: 'trace', arguments: {}, _meta: meta }), { ...modernHeaders('tools/call', 'trace'), ...extra });
  assert.deepEqual(seen((await call({ traceparent: LATER })).json), { header: LATER, meta: LATER });
  assert.deepEqual(seen((await call({}, { traceparent: LATER })).json), { header: LATER, meta: LATER });
  // Version ff is invalid, and a later version must have a dash (or nothing) after its flags.
  assert.deepEqual(seen((await call({ traceparent: `ff${LATER.slice(2)}` })).json), { header: null, meta: null });
  assert.deepEqual(seen((await call({ traceparent: `${LATER.slice(0, 55)}x` })).json), { header: null, meta: null });
});

test('tracing on: the server span continues a later-version traceparent, and the upstream gets version 00', async (t) => {
  const { rx, gw } = await tracedGateway(t);
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'trace', arguments: {} }), { ...modernHeaders('tools/call', 'trace'), traceparent: LATER });
  const spans = await rx.named('tools/call trace', 2);
  const server = spans.find((s) => s.kind === 2)!;
  const client = spans.find((s) => s.kind === 3)!;
  assert.deepEqual([server.traceId, server.parentSpanId], ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7']);
  assert.deepEqual(seen(r.json), { header: `00-${client.traceId}-${client.spanId}-01`, meta: `00-${client.traceId}-${client.spanId}-01` });
});
