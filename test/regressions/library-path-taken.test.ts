// A new-user trial of the library: two Switchyard instances registered in one fastify application
// with the same paths (both on the default /mcp) failed with fastify's bare
// FST_ERR_DUPLICATED_ROUTE (`Method '[ 'GET', … ]' already declared for route '/mcp'`), which
// names neither Switchyard nor the option to change. Registration is now refused with
// SWY_ERR_HOST_PATH_TAKEN naming the path and `listen.path`, before any route is added; routes that
// do not collide (another listen.path, a host wildcard) still register.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { SwitchyardError } from '../../src/index.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const HEAD = 'A path of this Switchyard is served already in the host application: ';
const LISTEN_PATH = "set this instance's listen.path (listen: { path: '/two' } serves /two/mcp)";
const PREFIX_TOO = ', or register its plugin under a fastify prefix of its own';

/** A predicate for assert.rejects: SWY_ERR_HOST_PATH_TAKEN with exactly `message`. */
const taken = (message: string) => (err: unknown) => {
  assert.ok(err instanceof SwitchyardError, `not a SwitchyardError: ${String(err)}`);
  assert.equal(err.code, 'SWY_ERR_HOST_PATH_TAKEN');
  assert.equal(err.message, message);
  return true;
};

function hostApp(t: { after(fn: () => Promise<void>): void }): FastifyInstance {
  const app = Fastify();
  t.after(() => app.close());
  return app;
}

/** The status and tool count of a 2026-07-28 tools/list at `url`. */
async function toolsList(url: string): Promise<[number, number]> {
  const r = await request(url, { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(1, 'tools/list')) });
  const body = (await r.body.json()) as { result?: { tools?: unknown[] } };
  return [r.statusCode, body.result?.tools?.length ?? -1];
}

test('a second instance on the same path is refused naming the path and listen.path; one with its own listen.path serves beside the first', async (t) => {
  const app = hostApp(t);
  await app.register(switchyard(t).plugin);
  await assert.rejects(
    async () => {
      await app.register(switchyard(t).plugin);
    },
    taken(`${HEAD}/mcp (another Switchyard's plugin, or a route of the host's own): ${LISTEN_PATH}${PREFIX_TOO}`),
  );

  // The refused registration added nothing: another instance at /two/mcp registers, and both serve.
  const other = hostApp(t);
  await other.register(switchyard(t).plugin);
  await other.register(switchyard(t, { listen: { path: '/two' } }).plugin);
  await other.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(other.server.address() as AddressInfo).port}`;
  const [one, two] = [await toolsList(`${base}/mcp`), await toolsList(`${base}/two/mcp`)];
  assert.equal(one[0], 200);
  assert.ok(one[1] > 0);
  assert.deepEqual(two, one);
});

test('registered without awaiting each, the collision surfaces at ready(); under one prefix twice it names the prefixed path', async (t) => {
  const app = hostApp(t);
  void app.register(switchyard(t).plugin);
  void app.register(switchyard(t).plugin);
  await assert.rejects(
    async () => {
      await app.ready();
    },
    taken(`${HEAD}/mcp (another Switchyard's plugin, or a route of the host's own): ${LISTEN_PATH}${PREFIX_TOO}`),
  );

  const prefixed = hostApp(t);
  await prefixed.register(switchyard(t).plugin, { prefix: '/api' });
  await assert.rejects(
    async () => {
      await prefixed.register(switchyard(t).plugin, { prefix: '/api' });
    },
    taken(`${HEAD}/api/mcp (another Switchyard's plugin, or a route of the host's own): ${LISTEN_PATH}${PREFIX_TOO}`),
  );
});

test('a host route on an HTTP+SSE path is named (no prefix offered: HTTP+SSE refuses one); host wildcards do not collide', async (t) => {
  const app = hostApp(t);
  app.get('/sse', async () => ({ host: true }));
  await assert.rejects(
    async () => {
      await app.register(switchyard(t, { dialects: { legacySse: true } }).plugin);
    },
    taken(`${HEAD}/sse (another Switchyard's plugin, or a route of the host's own): ${LISTEN_PATH}`),
  );

  // A wildcard or parametric route matches /mcp but is not the same route: fastify takes both.
  const wild = hostApp(t);
  wild.all('/*', async () => ({ host: 'wildcard' }));
  wild.post('/:name', async () => ({ host: 'param' }));
  await wild.register(switchyard(t).plugin);
  await wild.listen({ host: '127.0.0.1', port: 0 });
  const [status] = await toolsList(`http://127.0.0.1:${(wild.server.address() as AddressInfo).port}/mcp`);
  assert.equal(status, 200);
});

// Named in the closing notes of the last round: with CORS on, the HTTP+SSE paths take OPTIONS too
// (the route a preflight there is answered on), but the check did not know it, so a host's own
// OPTIONS route at /sse or /messages still failed the registration with fastify's bare
// FST_ERR_DUPLICATED_ROUTE. Without CORS the plugin takes no OPTIONS there, and both register.
test('with CORS, a host OPTIONS route on an HTTP+SSE path is named; without CORS it stays the host’s', async (t) => {
  const legacyCors = { dialects: { legacySse: true }, cors: { origins: ['http://localhost:5173'] } };
  for (const path of ['/sse', '/messages']) {
    const app = hostApp(t);
    app.options(path, async () => ({ host: true }));
    await assert.rejects(
      async () => {
        await app.register(switchyard(t, legacyCors).plugin);
      },
      taken(`${HEAD}${path} (another Switchyard's plugin, or a route of the host's own): ${LISTEN_PATH}`),
    );
  }

  const app = hostApp(t);
  app.options('/sse', async () => ({ host: 'options' }));
  await app.register(switchyard(t, { dialects: { legacySse: true } }).plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const r = await request(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/sse`, { method: 'OPTIONS' });
  assert.deepEqual([r.statusCode, await r.body.json()], [200, { host: 'options' }]);
});
