// examples/hono.mjs as a real process: Switchyard's fetch handler inside a Hono app, driven by the
// official v2 client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { assertForeignHostRefused, listAndEcho, startExample, V2_MODES } from '../helpers/examples.js';

test('the Hono example serves the v2 client through the fetch handler', { timeout: 60_000 }, async (t) => {
  const ex = await startExample(t, 'hono.mjs');
  for (const mode of V2_MODES) await listAndEcho(ex.url, mode);
  // Host names other than loopback ones are refused (the example's allowedHosts): DNS rebinding.
  await assertForeignHostRefused(ex.url);
  const health = await request(new URL('/health', ex.url));
  assert.deepEqual([health.statusCode, await health.body.json()], [200, { ok: true }]);
  assert.deepEqual(await ex.stop(), { code: 0, signal: null });
});
