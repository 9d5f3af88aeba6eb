// Named in the closing notes of the last round: an HTTP+SSE (2024-11-05) upstream that answered
// the gateway's own `initialize` with a JSON array holding the response was not taken. The
// stream handed a batched response to no waiting call (only the session's routing, which is not
// on yet during the handshake), so the start waited out upstreamRequestTimeoutMs (30 s by
// default) and then said `initialize failed: no reply`; `switchyard probe` waited its step time
// too. The handshake now fails at once with SWY_ERR_UPSTREAM_PROTOCOL (JSON-RPC 2.0 §6: a batch
// answers only a batch), on the stream or in the POST's own answer, and the probe says why.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { gateway } from '../helpers/gateway.js';
import { httpSseStub, probeSseStub } from '../helpers/stub-http.js';

const eras = await eraClients();
/** The handshake's own timeout; the defect waited all of it. */
const TIMEOUT_MS = 4000;
const BATCHED = 'Upstream protocol error: initialize: a response inside a JSON array (a batch) to a request sent alone (JSON-RPC 2.0 §6)';
const initResult = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'batching', version: '1' } };

test('gateway: an HTTP+SSE upstream answering initialize with a batch on the stream fails the start at once', async (t) => {
  const url = await httpSseStub(t, 'batching', () => {}, {
    initialize: (m, _write, raw) => raw(JSON.stringify([{ jsonrpc: '2.0', id: m.id, result: initResult }])),
  });
  const started = Date.now();
  await assert.rejects(
    gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05', requireUpstreams: true, limits: { upstreamRequestTimeoutMs: TIMEOUT_MS } }),
    (err: Error & { code?: string }) => {
      assert.deepEqual([err.code, err.message], ['SWY_ERR_UPSTREAM_PROTOCOL', `${BATCHED} (upstream default)`]);
      return true;
    },
  );
  const tookMs = Date.now() - started;
  assert.ok(tookMs < TIMEOUT_MS / 2, `took ${tookMs} ms, the timeout is ${TIMEOUT_MS} ms`);
});

test('gateway: an HTTP+SSE upstream answering initialize with a batch in the POST answer fails the start at once', async (t) => {
  const s = await probeSseStub(t, (m) => (m?.method === 'initialize' ? [{ jsonrpc: '2.0', id: m.id, result: initResult }] : {}), { inPost: true });
  const started = Date.now();
  await assert.rejects(
    gateway(t, { upstreamUrl: s.url, upstreamEra: '2024-11-05', requireUpstreams: true, limits: { upstreamRequestTimeoutMs: TIMEOUT_MS } }),
    (err: Error & { code?: string }) => {
      assert.deepEqual([err.code, err.message], ['SWY_ERR_UPSTREAM_PROTOCOL', `${BATCHED} (upstream default)`]);
      return true;
    },
  );
  const tookMs = Date.now() - started;
  assert.ok(tookMs < TIMEOUT_MS / 2, `took ${tookMs} ms, the timeout is ${TIMEOUT_MS} ms`);
});

test('probe: an HTTP+SSE initialize answered with a batch on the stream is said so at once', async (t) => {
  const s = await probeSseStub(t, (m) => (m?.method === 'initialize' ? [{ jsonrpc: '2.0', id: m.id, result: initResult }] : undefined));
  const started = Date.now();
  const v = await probeUrl(s.url, eras, { timeoutMs: TIMEOUT_MS });
  const tookMs = Date.now() - started;
  assert.deepEqual([v.ok, v.era, v.transport], [true, '2024-11-05', 'http+sse']);
  assert.deepEqual(v.steps[v.steps.length - 1], {
    request: 'POST /messages initialize',
    status: 202,
    note: 'the reply with its id came inside a JSON array (a batch), on the stream: a batch answers only a batch',
  });
  assert.deepEqual(v.warnings, [
    'initialize failed (its reply came inside a JSON array (a batch)): the endpoint event names the era, but no client can connect to this server',
  ]);
  assert.ok(tookMs < TIMEOUT_MS / 2, `took ${tookMs} ms, the timeout is ${TIMEOUT_MS} ms`);
});
