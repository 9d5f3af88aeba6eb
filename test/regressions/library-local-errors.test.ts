// A user trial of the library: a config error found when the gateway assembles (a policy rule
// whose CEL does not compile) reached requests as SWY_ERR_CONFIG_INVALID, whose HTTP status is
// 0: the Node handler threw ERR_HTTP_INVALID_STATUS_CODE out of `http.createServer`'s callback
// (killing the host) and `fetch` rejected instead of resolving. Now every entry point answers
// 500 with a JSON-RPC -32603 and the log has the config error once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const CEL_ERROR = { policy: { default: 'allow', rules: [{ name: 'r', effect: 'deny', when: 'principal.sub ==' }] } };
const INTERNAL = { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } };
const CEL_MESSAGE = 'Invalid configuration: policy: 1 error: /policy/rules/0/when: Unexpected token: EOF (at character 17)';

test('a policy whose CEL does not compile: the Node handler and fetch answer 500 -32603 (the host lives), ready() rejects with the config error, the log has it once', async (t) => {
  // CEL is loaded when the gateway assembles (docs/embedding.md), so createSwitchyard does not throw.
  const sy = switchyard(t, CEL_ERROR);
  const server = http.createServer((req, res) => void sy.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const body = JSON.stringify(modernBody(1, 'tools/list'));

  for (let i = 0; i < 2; i++) {
    const r = await request(url, { method: 'POST', headers: modernHeaders('tools/list'), body });
    assert.deepEqual([r.statusCode, r.headers['content-type'], await r.body.json()], [500, 'application/json', INTERNAL]);
    const f = await sy.fetch(modernRequest('tools/list'));
    assert.deepEqual([f.status, f.headers.get('content-type'), await f.json()], [500, 'application/json', INTERNAL]);
  }
  await assert.rejects(sy.ready(), (err: Error & { code?: string; data?: { errors?: unknown } }) => {
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.equal(err.message, CEL_MESSAGE);
    assert.deepEqual(err.data?.errors, [{ path: '/policy/rules/0/when', message: 'Unexpected token: EOF (at character 17)' }]);
    return true;
  });

  // Logged once, at error, with its code: not once per request.
  const errors = sy.records.filter((r) => r.level === 50);
  assert.deepEqual(
    errors.map((r) => [r.msg, r.code, (r.err as { message?: string }).message]),
    [['internal error', 'SWY_ERR_CONFIG_INVALID', CEL_MESSAGE]],
  );
});

test('a policy whose CEL does not compile: registering the fastify plugin rejects with the config error', async (t) => {
  const sy = switchyard(t, CEL_ERROR);
  const app = Fastify();
  t.after(() => app.close());
  await assert.rejects(
    (async () => {
      await app.register(sy.plugin);
    })(),
    { code: 'SWY_ERR_CONFIG_INVALID', message: CEL_MESSAGE },
  );
});
