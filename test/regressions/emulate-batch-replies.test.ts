// Regression: `switchyard emulate` recorded the replies of an answer with one
// `rec.replies.push(...replies)`, which passes every reply as an argument and throws RangeError
// (the call stack) for a batch answer of some 130,000 replies: the client got 500 Internal error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testEmulator } from '../helpers/emulate.js';
import { initSession, post } from '../helpers/http.js';

const N = 200_000;

test('emulate answers and records a 2025-03-26 batch of 200,000 pings', async (t) => {
  const { emu } = await testEmulator(t, {
    era: '2025-03-26',
    // Bounds raised so that the batch reaches the dialect: about 8 MB of pings.
    limits: { maxBatchMessages: N, maxBodyBytes: 32 * 1024 * 1024 },
  });
  const h = await initSession(emu.url, '2025-03-26');
  const batch = Array.from({ length: N }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'ping' }));
  const r = await post(emu.url, batch, h);
  assert.equal(r.status, 200, r.text.slice(0, 300));
  const replies = r.json as Array<{ id: number; result?: unknown }>;
  assert.equal(replies.length, N);
  assert.deepEqual(replies[0], { jsonrpc: '2.0', id: 1, result: {} });
  const rec = emu.records.at(-1)!;
  assert.deepEqual(rec.rpc, { kind: 'batch' });
  assert.equal(rec.status, 200);
  assert.equal(rec.replies.length, N);
  assert.deepEqual(rec.replies[N - 1], { id: replies[N - 1].id, ok: true });
});
