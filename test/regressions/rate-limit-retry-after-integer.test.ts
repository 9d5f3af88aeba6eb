// Regression (found by a tester): a rate limit with a tiny `ratePerSec` (1e-300) was accepted, and
// its refusal said `retry-after: 9.999999989999999e+299`, which is no delay-seconds value (RFC 9110
// §10.2.3: a non-negative decimal integer), with `data.retryAfterMs` in exponent form too. The
// schema now refuses a `ratePerSec` below 0.00001 (one token in 100,000 s), so the longest wait a
// refusal names is 100000 s, written as a plain integer (docs/policy.md, Rate limits).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernCall } from '../helpers/identity.js';
import { validateFile } from '../helpers/cli.js';
import { configGateway } from '../helpers/ops.js';

const echo = { name: 'echo', arguments: { message: 'm' } };

test('a ratePerSec below 0.00001 is refused; at 0.00001 a refusal says Retry-After: 100000, retryAfterMs a plain integer', async (t) => {
  const tiny = await validateFile(t, 'tiny.yaml', 'rateLimits: [{name: r, per: principal, ratePerSec: 1e-300, burst: 1}]\n');
  assert.equal(tiny.code, 1);
  assert.equal(tiny.stdout, `${tiny.file}: invalid config, 1 error\n  /rateLimits/0/ratePerSec: must be >= 0.00001\n`);
  const below = await validateFile(t, 'below.yaml', 'rateLimits: [{name: r, per: principal, ratePerSec: 0.0000099, burst: 1}]\n');
  assert.equal(below.code, 1);
  const floor = await validateFile(t, 'floor.yaml', 'rateLimits: [{name: r, per: principal, ratePerSec: 0.00001, burst: 1}]\n');
  assert.equal(floor.code, 0);

  // At the floor a refusal's wait is a plain integer: Retry-After 100000, retryAfterMs at most 100000000.
  const gw = await configGateway(t, {
    rateLimits: [{ name: 'r', per: 'principal', ratePerSec: 0.00001, burst: 1 }],
    upstreams: { demo: { transport: 'embedded' } },
  });
  const startMs = Date.now();
  assert.equal((await modernCall(gw.url, 1, 'tools/call', echo)).status, 200);
  const limited = await modernCall(gw.url, 2, 'tools/call', echo);
  const elapsedMs = Date.now() - startMs;
  assert.equal(limited.status, 429);
  const { error } = limited.json as { error: { data: { retryAfterMs: number } } };
  // The bucket refilled for the ms between the two calls: the wait is 100,000,000 ms less those.
  const { retryAfterMs } = error.data;
  assert.ok(Number.isSafeInteger(retryAfterMs) && retryAfterMs <= 100_000_000 && retryAfterMs >= 100_000_000 - elapsedMs - 1, String(retryAfterMs));
  assert.equal(String(retryAfterMs), retryAfterMs.toFixed(0));
  // Retry-After is that wait in whole seconds, rounded up: 100000 unless the two calls took over a
  // second apart (99999 on a machine loaded beside the suite).
  const seconds = Math.ceil(retryAfterMs / 1000);
  assert.ok(seconds <= 100_000 && seconds >= 100_000 - Math.ceil(elapsedMs / 1000), String(seconds));
  assert.equal(limited.headers['retry-after'], String(seconds));
  assert.deepEqual(limited.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32011, message: `Too many requests: rate limit exceeded: r; retry after ${seconds} s`, data: { limit: 'r', retryAfterMs } },
  });
});
