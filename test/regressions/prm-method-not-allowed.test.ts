// A POST (or PUT, DELETE, PATCH) to a protected resource metadata URL answered 404, as if the
// document did not exist; RFC 9110 §15.5.6 wants 405 with `Allow` naming the methods the target
// serves, GET and HEAD (found by h-trial8). A path that names no document stays 404.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { send } from '../helpers/http.js';
import { gatewayFromConfig, refusalBody } from '../helpers/identity.js';

const KEY = 'prm-key_0123456789abcdefghijklmnopqrstuvwxyz';

test('POST, PUT, DELETE, PATCH to an RFC 9728 metadata URL: 405 with Allow: GET, HEAD, the body unread; another path 404; GET still 200', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: { apiKeys: [{ name: 'k', sha256: createHash('sha256').update(KEY).digest('hex') }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const origin = new URL(gw.urls[0]).origin;
  const prm = `${origin}/.well-known/oauth-protected-resource/demo/mcp`;
  assert.equal((await send(prm, 'GET', undefined, {})).status, 200);
  for (const url of [prm, `${origin}/.well-known/oauth-protected-resource`]) {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      const r = await send(url, method, '{not json', { 'content-type': 'application/json' });
      assert.equal(r.status, 405, `${method} ${url}`);
      assert.equal(r.headers.allow, 'GET, HEAD');
      assert.deepEqual(r.json, refusalBody('Method not allowed'));
    }
  }
  const other = await send(`${origin}/.well-known/oauth-protected-resource/nope/mcp`, 'POST', '{}', { 'content-type': 'application/json' });
  assert.equal(other.status, 404);
  assert.equal(other.headers.allow, undefined);
});
