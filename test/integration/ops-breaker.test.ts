// HTTP upstreams: the circuit breaker (N failed calls in a row mark the upstream down and calls
// fail fast; after the cool-down the gateway's own probe is the trial that brings it back) and
// one undici Agent per upstream with bounded connections.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, freePort, opsHttp } from '../helpers/ops.js';

const call = (url: string, id: number, name = 'echo', args: Record<string, unknown> = { message: `m${id}` }) =>
  post(url, modernBody(id, 'tools/call', { name, arguments: args }), modernHeaders('tools/call', name));

test('the breaker opens after upstreamBreakerFailures failed calls, fails fast with 503 and Retry-After, and closes on the probe once the server is back', async (t) => {
  const port = await freePort();
  const server = await opsHttp(t, port);
  const gw = await configGateway(t, {
    limits: { upstreamBreakerFailures: 2, upstreamBreakerCooldownMs: 1_000 },
    upstreams: { flaky: { url: server.url } },
  });
  const health = gw.supervised.get('flaky')!;
  assert.deepEqual((await call(gw.url, 1)).json, {
    jsonrpc: '2.0',
    id: 1,
    result: {
      content: [{ type: 'text', text: 'Echo: m1' }],
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'raw-fixture', version: '1.0.0' } },
    },
  });

  await server.stop();
  // The client reads no address; the upstream's lastError (the operator's) names it.
  const unavailable = { code: -32000, message: 'Upstream unavailable: connection refused' };
  for (const id of [2, 3]) {
    const r = await call(gw.url, id);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id, error: unavailable });
  }
  assert.equal(health.state, 'down');
  assert.equal(health.lastError, `Upstream unavailable: ${new URL(server.url).origin}: connect ECONNREFUSED 127.0.0.1:${port}`);
  const fast = await call(gw.url, 4);
  assert.equal(fast.status, 503);
  assert.equal(fast.headers['retry-after'], '1');
  // The rest of a 1 s cool-down, at least 1 s: data.retryAfterMs says what the header says.
  assert.deepEqual(fast.json, {
    jsonrpc: '2.0',
    id: 4,
    error: {
      code: -32000,
      message: 'Upstream down: flaky failed 2 calls in a row (circuit open)',
      data: { upstream: 'flaky', retryAfterMs: 1_000 },
    },
  });

  const back = new Promise<void>((resolve) => health.onChange((s) => s === 'up' && resolve()));
  await opsHttp(t, port);
  await back;
  assert.equal((await call(gw.url, 5)).status, 200);
  assert.ok(gw.records.some((r) => r.msg === 'upstream down' && r.upstream === 'flaky' && r.cause === 'breaker'));
});

// Found by reading: the breaker's trial probe sent the upstream's `headers` only, not its
// `credentials`, so an upstream that wants them answered every trial 401 and never came back.
test('the breaker trial carries the upstream credentials: an upstream that wants them comes back up', async (t) => {
  const port = await freePort();
  const key = ['X-Api-Key', 'upstream-key'] as const;
  const server = await opsHttp(t, port, undefined, ['--require-header', key.join(':')]);
  const gw = await configGateway(t, {
    // Reconnects at most 500 ms apart too: on a loaded machine the restart below can take seconds,
    // and the default backoff (up to 10 s) then put the next attempt past the 5 s this test waits.
    limits: { upstreamBreakerFailures: 2, upstreamBreakerCooldownMs: 500, upstreamBackoffMaxMs: 500 },
    upstreams: { keyed: { url: server.url, credentials: { headers: { [key[0]]: key[1] } } } },
  });
  const health = gw.supervised.get('keyed')!;
  assert.equal((await call(gw.url, 1)).status, 200);
  await server.stop();
  for (const id of [2, 3]) await call(gw.url, id);
  assert.equal(health.state, 'down');
  const back = new Promise<string>((resolve) => health.onChange((s) => s === 'up' && resolve(s)));
  await opsHttp(t, port, undefined, ['--require-header', key.join(':')]);
  // Trials run every 500 ms; ten of them without a 200 is the old behaviour.
  const timeout = new Promise<string>((resolve) => setTimeout(() => resolve(`still ${health.state}: ${health.lastError}`), 5_000).unref());
  assert.equal(await Promise.race([back, timeout]), 'up');
  assert.equal((await call(gw.url, 4)).status, 200);
});

test('an HTTP upstream gets one Agent with at most maxUpstreamConnections connections', async (t) => {
  const server = await opsHttp(t);
  const gw = await configGateway(t, { limits: { maxUpstreamConnections: 1 }, upstreams: { one: { url: server.url } } });
  const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => call(gw.url, i + 1)));
  assert.deepEqual(
    replies.map((r) => r.status),
    Array.from({ length: 12 }, () => 200),
  );
  const counted = await call(gw.url, 99, 'connections', {});
  assert.deepEqual((counted.json as { result: { content: Array<{ text: string }> } }).result.content, [{ type: 'text', text: '1' }]);
});
