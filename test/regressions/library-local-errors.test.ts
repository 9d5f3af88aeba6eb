// A user trial of the library: a config error found when the gateway assembles (a policy rule
// whose CEL does not compile) reached requests as SWY_ERR_CONFIG_INVALID, whose HTTP status is
// 0: the Node handler threw ERR_HTTP_INVALID_STATUS_CODE out of `http.createServer`'s callback
// (killing the host) and `fetch` rejected instead of resolving. Now every entry point answers
// 500 with a JSON-RPC -32603 and the log has the config error once. And `era: match-client` on
// a stdio upstream (it cannot work over one child) passed `switchyard validate` and
// `createSwitchyard`, then failed the assembly, as did two API keys with one name or one hash:
// now both refuse them.

import { test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { createSwitchyard, SwitchyardError, type SwitchyardConfig } from '../../src/index.js';
import { startGateway } from '../../src/gateway.js';
import { validateFile } from '../helpers/cli.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const CEL_ERROR: SwitchyardConfig = { policy: { default: 'allow', rules: [{ name: 'r', effect: 'deny', when: 'principal.sub ==' }] } };
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

const MATCH_CLIENT_ON_STDIO = '`match-client` needs an HTTP upstream: a stdio child is one connection, in one era';

/** The SwitchyardError `fn` throws synchronously. */
function thrown(fn: () => unknown): SwitchyardError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return err;
  }
  assert.fail('expected a throw');
}

test('`era: match-client` on a stdio upstream: createSwitchyard throws at once, and `switchyard validate` lists the same path and message; a revision pins it', async (t) => {
  const config: SwitchyardConfig = { upstreams: { s: { command: process.execPath, args: ['-e', ''], era: 'match-client' } } };
  const err = thrown(() => createSwitchyard(config));
  assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
  assert.equal(err.message, `Invalid configuration: createSwitchyard: 1 error: /upstreams/s/era: ${MATCH_CLIENT_ON_STDIO}`);
  assert.deepEqual(err.data?.errors, [{ path: '/upstreams/s/era', message: MATCH_CLIENT_ON_STDIO }]);

  const { file, ...r } = await validateFile(t, 'c.json', JSON.stringify(config));
  assert.deepEqual(r, { code: 1, stdout: `${file}: invalid config, 1 error\n  /upstreams/s/era: ${MATCH_CLIENT_ON_STDIO}\n` });
  // A revision (or auto) pins a stdio child; an HTTP upstream keeps `match-client`.
  for (const era of ['2025-06-18', 'auto'] as const)
    assert.equal(createSwitchyard({ upstreams: { s: { command: process.execPath, era } } }).config.upstreams.s.transport, 'stdio');
  assert.equal(createSwitchyard({ upstreams: { h: { url: 'http://127.0.0.1:1/mcp', era: 'match-client' } } }).config.upstreams.h.transport, 'http');
});

test('the --upstream-era flag may pin a --stdio child, but `match-client` is refused before anything starts', async () => {
  await assert.rejects(startGateway({ port: 0, stdio: `"${process.execPath}" -e ""`, upstreamEra: 'match-client' }), (err: SwitchyardError) => {
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.deepEqual(err.data?.errors, [
      { path: '/upstreams/default/era', message: '`match-client` needs an HTTP upstream: a stdio child is one connection, in one era' },
    ]);
    return true;
  });
});

test('two API keys with one name or one hash: createSwitchyard throws at once and `switchyard validate` lists each, top level and per upstream', async (t) => {
  const hash = (k: string) => createHash('sha256').update(k).digest('hex');
  const config: SwitchyardConfig = {
    auth: {
      apiKeys: [
        { name: 'a', sha256: hash('1') },
        { name: 'a', sha256: hash('2') },
        { name: 'b', sha256: hash('1').toUpperCase() },
      ],
    },
    upstreams: {
      d: {
        transport: 'embedded',
        auth: {
          apiKeys: [
            { name: 'x', sha256: hash('3') },
            { name: 'x', sha256: hash('3') },
          ],
        },
      },
    },
  };
  const errors = [
    { path: '/auth/apiKeys/1/name', message: 'duplicate name a (also /auth/apiKeys/0/name)' },
    { path: '/auth/apiKeys/2/sha256', message: 'duplicate key (also /auth/apiKeys/0/sha256)' },
    { path: '/upstreams/d/auth/apiKeys/1/name', message: 'duplicate name x (also /upstreams/d/auth/apiKeys/0/name)' },
    { path: '/upstreams/d/auth/apiKeys/1/sha256', message: 'duplicate key (also /upstreams/d/auth/apiKeys/0/sha256)' },
  ];
  const err = thrown(() => createSwitchyard(config));
  assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
  assert.deepEqual(err.data?.errors, errors);

  const { file, ...r } = await validateFile(t, 'c.json', JSON.stringify(config));
  assert.deepEqual(r, { code: 1, stdout: `${file}: invalid config, 4 errors\n${errors.map((e) => `  ${e.path}: ${e.message}\n`).join('')}` });
});
