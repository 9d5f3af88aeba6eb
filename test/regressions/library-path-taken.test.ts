// A new-user trial of the library: two Switchyard instances registered in one fastify application
// with the same paths (both on the default /mcp) failed with fastify's bare
// FST_ERR_DUPLICATED_ROUTE (`Method '[ 'GET', … ]' already declared for route '/mcp'`), which
// names neither Switchyard nor the option to change. Registration is now refused with
// SWY_ERR_HOST_PATH_TAKEN naming the path and `listen.path`, before any route is added; routes that
// do not collide (another listen.path, a host wildcard) still register.

import { test } from 'node:test';
import { createHash } from 'node:crypto';
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

// Named in the closing notes of the last round: with `auth` and `cors` both on, the plugin adds
// OPTIONS routes at the RFC 9728 metadata URLs (shared by every Switchyard on the server), and a
// host's own OPTIONS route there, registered before the first Switchyard or after one without
// `cors`, failed the registration with fastify's bare FST_ERR_DUPLICATED_ROUTE; so did a host's
// GET there before the first authenticated one. Another Switchyard's routes there are shared,
// never a collision.
const KEY = 'path-taken-key_0123456789abcdefghijklmnop';
const API_KEYS = { apiKeys: [{ name: 'k', sha256: createHash('sha256').update(KEY).digest('hex') }] };
const CORS = { origins: ['http://localhost:5173'] };
const WELL_KNOWN = '/.well-known/oauth-protected-resource';
/** The message for a host route at metadata URL `url`. */
const metadataTaken = (url: string, cors: boolean) =>
  `${HEAD}${url} (a route of the host's own: with auth, the RFC 9728 metadata routes take ${WELL_KNOWN} and every path below it${cors ? ', OPTIONS included with cors' : ''}): move the host's route, or serve its paths below that one (${WELL_KNOWN}/NAME) instead of a wildcard`;

test('with auth and CORS, a host OPTIONS route at the metadata URLs is named, registered before the first Switchyard or after one without CORS', async (t) => {
  for (const url of [`${WELL_KNOWN}/*`, WELL_KNOWN]) {
    const app = hostApp(t);
    app.options(url, async () => ({ host: true }));
    await assert.rejects(
      async () => {
        await app.register(switchyard(t, { auth: API_KEYS, cors: CORS }).plugin);
      },
      taken(metadataTaken(url, true)),
    );
  }

  // After a first Switchyard without CORS (which takes no OPTIONS there), before a second with it.
  const app = hostApp(t);
  await app.register(switchyard(t, { auth: API_KEYS }).plugin);
  app.options(`${WELL_KNOWN}/*`, async () => ({ host: true }));
  await assert.rejects(
    async () => {
      await app.register(switchyard(t, { auth: API_KEYS, cors: CORS, listen: { path: '/two' } }).plugin);
    },
    taken(metadataTaken(`${WELL_KNOWN}/*`, true)),
  );
});

test('a host GET at the metadata URLs is named; another Switchyard’s metadata routes, with or without CORS, and a host route at one path below are not', async (t) => {
  const app = hostApp(t);
  app.get(`${WELL_KNOWN}/*`, async () => ({ host: true }));
  await assert.rejects(
    async () => {
      await app.register(switchyard(t, { auth: API_KEYS }).plugin);
    },
    taken(metadataTaken(`${WELL_KNOWN}/*`, false)),
  );

  // Two with CORS and a third without share the routes; the host's OPTIONS route without CORS is the host's;
  // a host route at a single path below the well-known one is served beside the wildcard.
  const both = hostApp(t);
  await both.register(switchyard(t, { auth: API_KEYS, cors: CORS }).plugin);
  await both.register(switchyard(t, { auth: API_KEYS, cors: CORS, listen: { path: '/two' } }).plugin);
  await both.register(switchyard(t, { auth: API_KEYS, listen: { path: '/three' } }).plugin);
  both.get(`${WELL_KNOWN}/docs`, async () => ({ host: 'docs' }));
  const plain = hostApp(t);
  plain.options(`${WELL_KNOWN}/*`, async () => ({ host: 'options' }));
  await plain.register(switchyard(t, { auth: API_KEYS }).plugin);
  for (const a of [both, plain]) await a.listen({ host: '127.0.0.1', port: 0 });
  const at = (a: FastifyInstance, path: string) => `http://127.0.0.1:${(a.server.address() as AddressInfo).port}${path}`;
  const doc = async (url: string, method: 'GET' | 'OPTIONS' = 'GET') => {
    const r = await request(url, { method });
    return [r.statusCode, await r.body.json()];
  };
  assert.deepEqual(await doc(at(both, `${WELL_KNOWN}/two/mcp`)), [200, { resource: at(both, '/two/mcp'), bearer_methods_supported: ['header'] }]);
  assert.deepEqual(await doc(at(both, `${WELL_KNOWN}/docs`)), [200, { host: 'docs' }]);
  assert.deepEqual(await doc(at(plain, `${WELL_KNOWN}/mcp`)), [200, { resource: at(plain, '/mcp'), bearer_methods_supported: ['header'] }]);
  assert.deepEqual(await doc(at(plain, `${WELL_KNOWN}/mcp`), 'OPTIONS'), [200, { host: 'options' }]);
});
