// `maxConcurrentPerPrincipal`: one verified principal cannot take every admission place of a
// mount (`maxConcurrent` running, `maxQueued` waiting); the one request past its share is 429
// SWY_ERR_ADMISSION_PRINCIPAL_BUSY with Retry-After, while other principals are still served.
// Real gateway on 127.0.0.1 with API keys (docs/config.md, Limits). RFC 6585 §4.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { post } from '../helpers/http.js';
import { gatewayFromConfig, modernCall, openSession, sessionHeaders } from '../helpers/identity.js';

const ALPHA = 'sy_live_alpha_0123456789abcdefghijklmnop';
const BETA = 'sy_live_beta_0123456789abcdefghijklmnopq';
const slow = { name: 'slow', arguments: { steps: 1, stepMs: 600 } };
const settle = () => new Promise((r) => setTimeout(r, 150));

test('a principal past maxConcurrentPerPrincipal gets 429; another principal is still served', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: {
      apiKeys: [
        { name: 'alpha', sha256: hashApiKey(ALPHA) },
        { name: 'beta', sha256: hashApiKey(BETA) },
      ],
    },
    limits: { maxConcurrentPerPrincipal: 2 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const first = [modernCall(url, 1, 'tools/call', slow, `Bearer ${ALPHA}`), modernCall(url, 2, 'tools/call', slow, `Bearer ${ALPHA}`)];
  await settle();
  const over = await modernCall(url, 3, 'tools/call', slow, `Bearer ${ALPHA}`);
  assert.equal(over.status, 429);
  assert.equal(over.headers['retry-after'], '1');
  assert.deepEqual(over.json, {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32000, message: 'Too many requests: this principal has too many requests in flight: limit 2 on this mount' },
  });
  // Another principal has its own share.
  const beta = await modernCall(url, 4, 'tools/call', { name: 'echo', arguments: { message: 'b' } }, `Bearer ${BETA}`);
  assert.equal(beta.status, 200);
  for (const r of await Promise.all(first)) assert.equal(r.status, 200);
  // The places are given back when the requests end, refused ones included.
  const again = await Promise.all([1, 2].map((i) => modernCall(url, 10 + i, 'tools/call', { name: 'echo', arguments: { message: 'a' } }, `Bearer ${ALPHA}`)));
  assert.deepEqual(
    again.map((r) => r.status),
    [200, 200],
  );
});

test('a 2025 session request past the share is 429 with Retry-After too', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'alpha', sha256: hashApiKey(ALPHA) }] },
    limits: { maxConcurrentPerPrincipal: 1 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const sid = await openSession(url, `Bearer ${ALPHA}`);
  const call = (id: number) => post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: slow }, sessionHeaders(sid, `Bearer ${ALPHA}`));
  const first = call(1);
  await settle();
  const over = await call(2);
  assert.equal(over.status, 429);
  assert.equal(over.headers['retry-after'], '1');
  assert.deepEqual(over.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32000, message: 'Too many requests: this principal has too many requests in flight: limit 1 on this mount' },
  });
  assert.equal((await first).status, 200);
});

test('unauthenticated callers are not counted per principal', async (t) => {
  const gw = await gatewayFromConfig(t, { limits: { maxConcurrentPerPrincipal: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const both = await Promise.all([modernCall(url, 1, 'tools/call', slow), modernCall(url, 2, 'tools/call', slow)]);
  assert.deepEqual(
    both.map((r) => r.status),
    [200, 200],
  );
});

test('a request refused while waiting for admission gives its principal place back', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'alpha', sha256: hashApiKey(ALPHA) }] },
    limits: { maxConcurrent: 1, maxQueued: 1, maxConcurrentPerPrincipal: 3 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const running = modernCall(url, 1, 'tools/call', slow, `Bearer ${ALPHA}`);
  await settle();
  const waiting = modernCall(url, 2, 'tools/call', slow, `Bearer ${ALPHA}`);
  await settle();
  // The queue is full: 503 busy, and its principal place is given back.
  const busy = await modernCall(url, 3, 'tools/call', slow, `Bearer ${ALPHA}`);
  assert.equal(busy.status, 503);
  assert.equal((await running).status, 200);
  assert.equal((await waiting).status, 200);
  // Every place is free again.
  for (let i = 0; i < 3; i++)
    assert.equal((await modernCall(url, 20 + i, 'tools/call', { name: 'echo', arguments: { message: 'x' } }, `Bearer ${ALPHA}`)).status, 200);
});
