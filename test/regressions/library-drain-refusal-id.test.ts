// Found by an operator trial: while a library gateway drained (close() waiting for a call in
// flight), its fetch and Node handlers (and the plugin) refused a new request with `id: null`,
// where the standalone listener answers the same SWY_ERR_ADMISSION_SHUTTING_DOWN with the
// request's id. JSON-RPC 2.0 §5: the id is null only when it could not be determined, and here
// the body had been read. They now agree.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { CHANNELS, type UpstreamCallMessage } from '../../src/core/diagnostics.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { firstOn, modernRequest, switchyard } from '../helpers/library.js';

const config = { limits: { shutdownGraceMs: 20_000 } };
const SLOW = { name: 'slow', arguments: { steps: 10, stepMs: 100 } };
const refusal = (id: number) => [503, '1', { jsonrpc: '2.0', id, error: { code: -32000, message: 'Server is shutting down' } }];
/** A call in flight: the gateway's close() drains until it ends. */
const slowCallStarted = (t: { after(fn: () => void): void }) =>
  firstOn<UpstreamCallMessage>(t, CHANNELS.upstreamCallStart, (m) => m.ctx.method === 'tools/call');

async function postTo(url: string, id: number): Promise<unknown[]> {
  const r = await fetch(url, { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(id, 'tools/list')) });
  return [r.status, r.headers.get('retry-after'), await r.json()];
}

test('while draining, the standalone listener, the fetch and Node handlers and the plugin refuse a request with its id', async (t) => {
  // The standalone listener: what the library must agree with.
  const gw = await gateway(t, config);
  let started = slowCallStarted(t);
  const cliSlow = fetch(gw.url, { method: 'POST', headers: modernHeaders('tools/call', 'slow'), body: JSON.stringify(modernBody(1, 'tools/call', SLOW)) });
  await started;
  const cliClosing = gw.close();
  assert.deepEqual(await postTo(gw.url, 2), refusal(2));

  // fetch and the Node handler of one instance, draining a call made through the Node handler.
  const sy = switchyard(t, config);
  const server = http.createServer((req, res) => void sy.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const nodeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  started = slowCallStarted(t);
  const nodeSlow = fetch(nodeUrl, { method: 'POST', headers: modernHeaders('tools/call', 'slow'), body: JSON.stringify(modernBody(1, 'tools/call', SLOW)) });
  await started;
  const closing = sy.close();
  const f = await sy.fetch(modernRequest('tools/list', {}, { id: 3 }));
  assert.deepEqual([f.status, f.headers.get('retry-after'), await f.json()], refusal(3));
  assert.deepEqual(await postTo(nodeUrl, 4), refusal(4));

  // The plugin, draining a call made through it.
  const sy2 = switchyard(t, config);
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy2.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const pluginUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
  started = slowCallStarted(t);
  const pluginSlow = fetch(pluginUrl, {
    method: 'POST',
    headers: modernHeaders('tools/call', 'slow'),
    body: JSON.stringify(modernBody(1, 'tools/call', SLOW)),
  });
  await started;
  const closing2 = sy2.close();
  assert.deepEqual(await postTo(pluginUrl, 5), refusal(5));

  for (const slow of [cliSlow, nodeSlow, pluginSlow]) assert.equal((await slow).status, 200);
  await Promise.all([cliClosing, closing, closing2]);
});
