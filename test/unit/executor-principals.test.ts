// The executor's count per principal (`maxConcurrentPerPrincipal`): an entry at zero stays (adding
// and deleting a key on every request rehashed the map), and the map stays bounded: past
// PRINCIPAL_SWEEP_AT entries, those at zero go before a new principal is added. A real executor
// over the real embedded demo upstream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeldCalls } from '../../src/core/calls.js';
import { Executor, guardUpstream, PRINCIPAL_SWEEP_AT, type RequestInit } from '../../src/core/executor.js';
import type { Identity } from '../../src/core/identity.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';

const principal = (subject: string): Identity => ({ issuer: 'https://issuer.test', subject, scopes: [], claims: {}, source: 'jwt' });

function callOf(identity: Identity, message = 'hi'): RequestInit {
  return {
    method: 'tools/call',
    params: { name: 'echo', arguments: { message } },
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'c', version: '1' },
    clientCapabilities: {},
    logLevel: undefined,
    identity,
    mount: 'default',
    dialect: '2026-07-28',
    progressToken: undefined,
    onProgress() {},
    onLog() {},
    ask: undefined,
  };
}

async function executorWith(t: { after(fn: () => Promise<unknown>): void }, maxConcurrentPerPrincipal: number): Promise<Executor> {
  const demo = createDemoUpstream({ version: '9.9.9' });
  await demo.start();
  const upstream = guardUpstream(demo, [], new HeldCalls(undefined, 16, 60_000), 'demo');
  const executor = new Executor({ mount: 'default', upstream, limits: { ...DEFAULT_LIMITS, maxConcurrentPerPrincipal } });
  t.after(() => executor.close(0));
  return executor;
}

test('a principal whose requests have all ended keeps its entry at zero, and gets its whole share again', async (t) => {
  const executor = await executorWith(t, 2);
  const alice = principal('alice');
  for (let i = 0; i < 3; i++) {
    const results = await Promise.all([executor.run(callOf(alice), undefined), executor.run(callOf(alice), undefined)]);
    assert.deepEqual(
      results.map((r) => (r.content as Array<{ text: string }>)[0].text),
      ['Echo: hi', 'Echo: hi'],
    );
    assert.equal(executor.principalsCounted, 1);
  }
  // The share is still two: a third at once is refused.
  const three = await Promise.allSettled([0, 1, 2].map(() => executor.run(callOf(alice), undefined)));
  assert.deepEqual(
    three.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'ok')),
    ['ok', 'ok', 'SWY_ERR_ADMISSION_PRINCIPAL_BUSY'],
  );
});

test(`past ${PRINCIPAL_SWEEP_AT} principals the ones at zero are dropped before a new one is added; busy ones stay counted`, async (t) => {
  const executor = await executorWith(t, 1);
  // One principal's request still running (the demo's slow tool) while many others come and go.
  const busy = principal('busy');
  const held = executor.run({ ...callOf(busy), params: { name: 'slow', arguments: { steps: 1, stepMs: 400 } } }, undefined);
  await new Promise((r) => setImmediate(r));
  for (let i = 0; i < PRINCIPAL_SWEEP_AT + 100; i++) {
    await executor.run(callOf(principal(`p${i}`)), undefined);
    assert.ok(executor.principalsCounted <= PRINCIPAL_SWEEP_AT, `at most ${PRINCIPAL_SWEEP_AT} entries (${executor.principalsCounted} after ${i + 1})`);
  }
  // The busy principal was not swept: its one place is still taken.
  await assert.rejects(executor.run(callOf(busy), undefined), (e: { code?: string }) => e.code === 'SWY_ERR_ADMISSION_PRINCIPAL_BUSY');
  await held;
  assert.equal((await executor.run(callOf(busy), undefined)).isError, undefined);
});
