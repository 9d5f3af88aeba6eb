// Found by a trial as an embedding developer: `sy.paths`, the paths a host routes to Switchyard,
// kept naming the config's paths (`/mcp`) after the plugin was registered under a fastify
// `prefix`, where its routes really are (`/api/mcp`); a host routing by it sent MCP clients to a
// 404. Now `paths` names the mounted paths once the plugin is registered under a prefix.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { listAndEcho, V2_MODES } from '../helpers/examples.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** The HTTP status of a 2026-07-28 tools/list POSTed to `url`. */
async function statusOf(url: string): Promise<number> {
  const res = await request(url, { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(1, 'tools/list')) });
  await res.body.dump();
  return res.statusCode;
}

test('under nested fastify prefixes, sy.paths names where the plugin’s routes are, and the official client is served there', async (t) => {
  const sy = switchyard(t, {
    listen: { path: '/gw' },
    upstreams: { one: { transport: 'embedded' }, two: { transport: 'embedded', path: '/second/mcp' } },
  });
  assert.deepEqual(sy.paths, ['/gw/one/mcp', '/gw/second/mcp'], 'before registration: the config’s paths');
  const app = Fastify();
  t.after(() => app.close());
  await app.register(
    async (v1) => {
      await v1.register(sy.plugin, { prefix: '/api' });
    },
    { prefix: '/v1' },
  );
  const base = await listen(app);
  assert.deepEqual(sy.paths, ['/v1/api/gw/one/mcp', '/v1/api/gw/second/mcp']);
  for (const p of sy.paths) assert.equal(await statusOf(`${base}${p}`), 200, p);
  for (const mode of V2_MODES) await listAndEcho(`${base}${sy.paths[0]}`, mode);
});

test('a prefix with a trailing slash: fastify puts one slash between, and so does sy.paths', async (t) => {
  const sy = switchyard(t);
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin, { prefix: '/api/' });
  const base = await listen(app);
  assert.deepEqual(sy.paths, ['/api/mcp']);
  assert.equal(await statusOf(`${base}/api/mcp`), 200);
});
