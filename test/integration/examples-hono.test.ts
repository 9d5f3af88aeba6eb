// examples/hono.mjs as a real process: Switchyard's fetch handler inside a Hono app, driven by the
// official v2 client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { listAndEcho, startExample, V2_MODES } from '../helpers/examples.js';

test('the Hono example serves the v2 client through the fetch handler', { timeout: 60_000 }, async (t) => {
  const ex = await startExample(t, 'hono.mjs');
  for (const mode of V2_MODES) await listAndEcho(ex.url, mode);
  // Host names other than loopback ones are refused (the example's allowedHosts): DNS rebinding.
  const rebound = await request(ex.url, {
    method: 'POST',
    headers: { host: 'evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  assert.equal(rebound.statusCode, 403);
  assert.equal(((await rebound.body.json()) as { error: { message: string } }).error.message, 'Forbidden: Host not allowed');
  const health = await request(new URL('/health', ex.url));
  assert.deepEqual([health.statusCode, await health.body.json()], [200, { ok: true }]);
  assert.deepEqual(await ex.stop(), { code: 0, signal: null });
});
