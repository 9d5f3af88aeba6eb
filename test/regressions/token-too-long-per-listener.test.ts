// Found by a tester: docs/security.md's check-order diagram said a bearer token over 16,384
// characters gets 400 SWY_ERR_AUTH_TOKEN_TOO_LONG; on the standalone listener a 20,000-character
// token gets 431 from Node's header bound (maxHeaderSize, 16 KiB for every header together) before
// any route, so that 400 cannot happen there at Node's default. The docs (diagram, catalogue) now
// say what each listener does; this test holds both behaviours.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startCli } from '../helpers/cli.js';
import { configFile } from '../helpers/ops.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const KEY = 'long-key_0123456789abcdefghijklmnopqrstuv';
const AUTH = { apiKeys: [{ name: 'alice', sha256: createHash('sha256').update(KEY).digest('hex') }] };
const LONG = `Bearer ${'a'.repeat(20_000)}`;
const TOO_LONG = 'Bad Request: bearer token longer than the limit: more than 16384 characters';
const body = modernBody(1, 'tools/list');

test('standalone listener: a 20,000-character bearer token gets 431 from Node, no challenge; with a larger --max-http-header-size, the 400', async (t) => {
  const file = configFile(t, { auth: AUTH });
  const gw = await startCli(t, ['--no-admin', '--config', file]);
  const r = await post(gw.url, body, { ...modernHeaders('tools/list'), authorization: LONG });
  assert.equal(r.status, 431);
  assert.equal(r.headers['www-authenticate'], undefined);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid HTTP request: Request Header Fields Too Large' } });

  const roomy = await startCli(t, ['--no-admin', '--config', file], { ...process.env, NODE_OPTIONS: '--max-http-header-size=65536' });
  const r2 = await post(roomy.url, body, { ...modernHeaders('tools/list'), authorization: LONG });
  assert.equal(r2.status, 400);
  assert.equal(
    r2.headers['www-authenticate'],
    `Bearer resource_metadata="${roomy.origin}/.well-known/oauth-protected-resource/mcp", error="invalid_request", error_description="more than 16384 characters"`,
  );
  assert.deepEqual(r2.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: TOO_LONG } });
});

test('library fetch handler: a 20,000-character bearer token gets 400 SWY_ERR_AUTH_TOKEN_TOO_LONG with its challenge', async (t) => {
  const sy = switchyard(t, { auth: AUTH });
  const res = await sy.fetch(
    new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { ...modernHeaders('tools/list'), authorization: LONG }, body: JSON.stringify(body) }),
  );
  assert.equal(res.status, 400);
  assert.equal(
    res.headers.get('www-authenticate'),
    'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", error="invalid_request", error_description="more than 16384 characters"',
  );
  assert.deepEqual(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32000, message: TOO_LONG } });
});
