// Regression (user trial): a 2026-07-28 call to an optional upstream that was down and reconnecting
// answered 503 with `Retry-After: 1` and `data.retryAfterMs: 0` (an attempt was under way, so the
// time to the next one read 0; under a second, the header said 1 and `data` the raw remainder).
// A client reading `data` retried in a tight loop. Both now come from one wait of at least 1 s.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, freePort } from '../helpers/ops.js';

const DOWN = (id: number) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32000, message: 'Upstream down: late is reconnecting', data: { upstream: 'late', retryAfterMs: 1_000 } },
});

test('SWY_ERR_UPSTREAM_DOWN: data.retryAfterMs is the Retry-After wait in ms, never below 1,000, while the next attempt is under a second away or under way', async (t) => {
  const port = await freePort();
  const gw = await configGateway(t, {
    // Attempts 200-400 ms apart: the true wait is always under a second. A probe step may hang 60 s.
    limits: { upstreamBackoffMinMs: 400, upstreamBackoffMaxMs: 400, upstreamProbeTimeoutMs: 60_000 },
    upstreams: { late: { url: `http://127.0.0.1:${port}/mcp`, optional: true } },
  });
  const late = gw.mounts.find((m) => m.name === 'late')!.url;
  assert.equal(gw.supervised.get('late')!.state, 'down');

  const list = (id: number) => post(late, modernBody(id, 'tools/list'), modernHeaders('tools/list'));
  const scheduled = await list(1);
  assert.deepEqual([scheduled.status, scheduled.headers['retry-after'], scheduled.json], [503, '1', DOWN(1)]);

  // A listener that accepts and never answers: the next attempt stays under way, due "0 ms" ago.
  const held = new Set<net.Socket>();
  const silent = net.createServer((s) => held.add(s));
  const attempted = new Promise<void>((resolve) => silent.once('connection', () => resolve()));
  await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
  try {
    await attempted;
    const underWay = await list(2);
    assert.deepEqual([underWay.status, underWay.headers['retry-after'], underWay.json], [503, '1', DOWN(2)]);
  } finally {
    for (const s of held) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});
