// Found by a trial as an embedding developer: one Switchyard registered in two fastify
// applications was closed when either of them closed (the plugin's preClose hook closes the
// gateway), so the other application's MCP path answered 503 "Server is shutting down" while it
// still ran. The plugin is now registered once per instance: a second registration, in another
// application or in the same one, is refused with SWY_ERR_HOST_PLUGIN_REUSED, and the first keeps
// serving whatever the other application does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { SwitchyardError } from '../../src/index.js';
import { listAndEcho, V2_MODES } from '../helpers/examples.js';
import { switchyard } from '../helpers/library.js';

const REUSED = (err: unknown) =>
  err instanceof SwitchyardError &&
  err.code === 'SWY_ERR_HOST_PLUGIN_REUSED' &&
  err.message ===
    'This Switchyard is registered already: its application closes it; create one instance per registration, or serve other servers with handle() or fetch()';

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

test('a second registration of one instance is refused; closing the other application leaves the first serving', async (t) => {
  const sy = switchyard(t);
  const first = Fastify();
  t.after(() => first.close());
  await first.register(sy.plugin);
  const base = await listen(first);

  // Another application, with a route of its own.
  const second = Fastify();
  t.after(() => second.close());
  second.get('/own', async () => ({ own: true }));
  await assert.rejects(async () => {
    await second.register(sy.plugin);
    await second.ready();
  }, REUSED);
  await second.close();

  // The first application still serves, both eras, through the official client.
  for (const mode of V2_MODES) await listAndEcho(`${base}/mcp`, mode);
});

test('registering one instance twice in one application (two prefixes) is refused too', async (t) => {
  const sy = switchyard(t);
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin, { prefix: '/one' });
  await assert.rejects(async () => {
    await app.register(sy.plugin, { prefix: '/two' });
    await app.ready();
  }, REUSED);
});
