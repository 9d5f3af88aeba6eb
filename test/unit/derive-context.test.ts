// deriveContext: a copy of a request context with some fields replaced, sharing the request's
// signal without reading it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveContext } from '../../src/core/interceptor.js';
import type { RequestContext } from '../../src/core/request.js';

function context(reads: { n: number }, signal: AbortSignal): RequestContext {
  return {
    method: 'tools/call',
    params: { name: 'echo' },
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'c', version: '1' },
    clientCapabilities: {},
    logLevel: undefined,
    identity: null,
    mount: 'default',
    dialect: '2026-07-28',
    upstream: 'default',
    component: { kind: 'tool', name: 'echo', upstream: 'default' },
    traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    sessionKey: 'k',
    authorization: 'Bearer t',
    progressToken: 7,
    rpcId: 'r-1',
    onProgress: () => {},
    onLog: () => {},
    ask: undefined,
    notifyClient: undefined,
    onBehalf: true,
    charged: new Set(['1/all:p']),
    get signal() {
      reads.n++;
      return signal;
    },
  };
}

test('deriveContext replaces the named fields, clears those named undefined, keeps the rest', () => {
  const reads = { n: 0 };
  const ac = new AbortController();
  const ctx = context(reads, ac.signal);
  const d = deriveContext(ctx, { method: 'tools/list', params: {}, component: undefined, progressToken: undefined });
  assert.equal(reads.n, 0, 'the signal is not read by deriving');
  const rest = Object.fromEntries(
    Object.keys(d)
      .filter((k) => !['signal', 'onProgress', 'onLog'].includes(k))
      .map((k) => [k, Reflect.get(d, k)]),
  );
  assert.equal(reads.n, 0, 'listing the fields reads no signal either');
  assert.deepEqual(rest, {
    method: 'tools/list',
    params: {},
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'c', version: '1' },
    clientCapabilities: {},
    logLevel: undefined,
    identity: null,
    mount: 'default',
    dialect: '2026-07-28',
    upstream: 'default',
    component: undefined,
    traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    progressToken: undefined,
    rpcId: 'r-1',
    ask: undefined,
    notifyClient: undefined,
    onBehalf: true,
    charged: new Set(['1/all:p']),
  });
  // The credentials are accessors, not own properties (test/regressions/channels-no-credentials.test.ts).
  assert.deepEqual([d.sessionKey, d.authorization], ['k', 'Bearer t']);
  assert.equal(d.charged, ctx.charged, 'the record of buckets paid is shared, not copied');
  assert.equal(d.signal, ac.signal);
  assert.equal(Reflect.get(d, 'onProgress'), Reflect.get(ctx, 'onProgress'));
  assert.equal(Reflect.get(d, 'onLog'), Reflect.get(ctx, 'onLog'));
  assert.equal(reads.n, 1);
  // The original is untouched.
  assert.equal(ctx.method, 'tools/call');
  assert.equal(ctx.progressToken, 7);
});

test('deriveTraceContext: a copy with every field of its base and its own traceContext, the base untouched', async () => {
  const { deriveTraceContext } = await import('../../src/core/interceptor.js');
  const reads = { n: 0 };
  const ac = new AbortController();
  const ctx = context(reads, ac.signal);
  const traceContext = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
  const d = deriveTraceContext(ctx, traceContext);
  assert.equal(reads.n, 0, 'the signal is not read by deriving');
  assert.deepEqual(d, deriveContext(ctx, { traceContext }));
  assert.equal(d.traceContext, traceContext);
  assert.equal(d.charged, ctx.charged);
  assert.equal(d.signal, ac.signal);
  assert.deepEqual(ctx.traceContext, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
});
