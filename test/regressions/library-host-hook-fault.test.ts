// Found by a trial as an embedding developer: a plain Error thrown by the host application's own
// hook (onRequest, preValidation, preHandler) or by its `identity(request)` on an MCP route was
// logged as Switchyard's own fault (`internal error`, the line a Switchyard bug writes), sending the
// host developer to look for a bug in Switchyard. It is still 500 -32603 for the client, and now
// the log line says it came from the host: `a hook of the host application threw`, or
// `the identity() of the host application threw`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const INTERNAL = { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } };

test('a plain Error from a host hook or identity() is 500 -32603, logged at error as the host’s', async (t) => {
  const sy = switchyard(t);
  const app = Fastify();
  t.after(() => app.close());
  // The host's own hooks, each failing as a bug in host code would when the test header names it.
  for (const hook of ['onRequest', 'preValidation', 'preHandler'] as const)
    app.addHook(hook, async (req) => {
      if (req.headers['x-fail'] === hook) throw new Error(`host ${hook} bug`);
    });
  await app.register(sy.plugin, {
    identity: (req) => {
      if (req.headers['x-fail'] === 'identity') throw new Error('host identity bug');
      // A 5xx is no refusal: the host's own failure too.
      if (req.headers['x-fail'] === 'identity-500') throw Object.assign(new Error('host store down'), { statusCode: 500 });
      return null;
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
  const body = JSON.stringify(modernBody(1, 'tools/list'));

  const WHERE = ['onRequest', 'preValidation', 'preHandler', 'identity', 'identity-500'];
  for (const fail of WHERE) {
    const res = await request(url, { method: 'POST', headers: { ...modernHeaders('tools/list'), 'x-fail': fail }, body });
    assert.deepEqual({ status: res.statusCode, body: JSON.parse(await res.body.text()) as unknown }, { status: 500, body: INTERNAL }, fail);
  }
  // A request no host code fails is served.
  assert.equal((await request(url, { method: 'POST', headers: modernHeaders('tools/list'), body })).statusCode, 200);

  const errors = sy.records.filter((r) => (r.level as number) >= 40);
  assert.deepEqual(
    errors.map((r) => [r.level, r.msg, (r.err as { message: string }).message, r.method, r.url]),
    [
      [50, 'a hook of the host application threw', 'host onRequest bug', 'POST', '/mcp'],
      [50, 'a hook of the host application threw', 'host preValidation bug', 'POST', '/mcp'],
      [50, 'a hook of the host application threw', 'host preHandler bug', 'POST', '/mcp'],
      [50, 'the identity() of the host application threw', 'host identity bug', 'POST', '/mcp'],
      [50, 'the identity() of the host application threw', 'host store down', 'POST', '/mcp'],
    ],
  );
});
