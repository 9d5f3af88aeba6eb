// The era probe's retries (a 5xx, a timeout, a reset) doubled their delay past
// `upstreamBackoffMaxMs`, which docs/upstreams.md says caps probe retries: with both bounds at
// 60 s, an unreachable upstream held a gateway's start (the MCP listener waits for each first
// attempt) for 60 + 120 s, not 60 + 60 (test/integration/ops-upstream-down took 180 s so).
// Found reading why that test was the slowest of the suite.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

test('probe retries wait at most backoffMaxMs (the upstreamBackoffMaxMs of an upstream) each: min = max = 400 ms gives gaps of about 400 ms, not 400 then 800', async (t) => {
  const arrivals: number[] = [];
  const { url } = await stubHttp(t, (_req, res) => {
    arrivals.push(performance.now());
    res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
  });
  const v = await probeUrl(url, eras, { timeoutMs: 2000, tries: 3, backoffMs: 400, backoffMaxMs: 400 });
  assert.equal(v.ok, false);
  assert.equal(arrivals.length, 3, `${arrivals.length} POSTs`);
  const gaps = [arrivals[1] - arrivals[0], arrivals[2] - arrivals[1]];
  assert.ok(gaps[0] >= 390, `first gap ${gaps[0]} ms`);
  // Uncapped, the second delay is 800 ms.
  assert.ok(gaps[1] >= 390 && gaps[1] < 700, `second gap ${gaps[1]} ms`);
});
