// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05): a JSON answer
// larger than maxUpstreamMessageBytes (64 MiB to server/discover, against the 16 MiB default) was
// taken for a network failure: `no answer: retried, never a reason to fall back`, three times, so
// the probe read 16 MiB of it three times over. The server did answer, and asking again brings the
// same bytes: the step now says the answer was too large to read, once, and the probe stops there.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';

const eras = await eraClients();

test('a JSON answer over maxUpstreamMessageBytes is read once, not retried, and named', async (t) => {
  let posts = 0;
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 'switchyard-probe-1', result: { pad: 'x'.repeat(4096) } }));
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => s.close(() => r())));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`;
  const v = await probeUrl(url, eras, { timeoutMs: 2000, tries: 3, backoffMs: 10, limits: { ...DEFAULT_LIMITS, maxUpstreamMessageBytes: 1024 } });
  assert.equal(v.ok, false);
  assert.equal(posts, 1);
  assert.equal(v.reason, 'no usable answer to server/discover: Upstream protocol error: response larger than 1024 bytes');
  assert.equal(v.networkError, undefined);
  assert.deepEqual(v.steps, [
    {
      request: 'POST /mcp server/discover',
      error: 'Upstream protocol error: response larger than 1024 bytes',
      note: 'an answer too large to read: not retried, not era evidence',
    },
  ]);
});
