// examples/fastify.mjs as a real process: its own bearer check before MCP, Switchyard as a plugin,
// its onResponse hook logging MCP requests, driven by the official v2 client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { listAndEcho, startExample, V2_MODES } from '../helpers/examples.js';

const TOKEN = 'example-token-7f3a';

test('the fastify example serves the v2 client behind its own authentication, and its onResponse hook sees MCP requests', { timeout: 60_000 }, async (t) => {
  const ex = await startExample(t, 'fastify.mjs', { EXAMPLE_TOKEN: TOKEN });

  // The host refuses on its own terms, before MCP.
  const anon = await request(ex.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.headers['www-authenticate'], 'Bearer');
  assert.deepEqual(await anon.body.json(), { error: 'unauthorized' });

  for (const mode of V2_MODES) await listAndEcho(ex.url, mode, { authorization: `Bearer ${TOKEN}` });

  const health = await request(new URL('/health', ex.url));
  assert.deepEqual([health.statusCode, await health.body.json()], [200, { ok: true }]);

  assert.deepEqual(await ex.stop(), { code: 0, signal: null });
  const served = ex.lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.msg === 'served')
    .map((r) => ({ user: r.user, method: r.method, url: r.url, statusCode: r.statusCode }));
  const alice = (statusCode: number) => ({ user: 'alice', method: 'POST', url: '/mcp', statusCode });
  assert.deepEqual(served, [
    { user: null, method: 'POST', url: '/mcp', statusCode: 401 },
    // 2026-07-28: server/discover, tools/list, tools/call.
    alice(200),
    alice(200),
    alice(200),
    // The initialize era: initialize, notifications/initialized (202), tools/list, tools/call.
    alice(200),
    alice(202),
    alice(200),
    alice(200),
    { user: null, method: 'GET', url: '/health', statusCode: 200 },
  ]);
});
