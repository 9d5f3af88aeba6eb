// Found by a trial (2026-12-05): `sy.paths` ("every path served, for routing in your app") left
// out the RFC 9728 metadata paths, so a host that routed `sy.paths` to Switchyard, as
// examples/node-http.mjs does, answered 404 for the metadata its own 401 challenges named, and an
// OAuth client could not find the authorization server.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const KEY = 'paths-key_0123456789abcdefghijklmnopqrstuvwx';

test('with auth, sy.paths holds the metadata paths: a node:http host routing sy.paths serves the document its challenge names', async (t) => {
  const sy = switchyard(t, { auth: { apiKeys: [{ name: 'alice', sha256: createHash('sha256').update(KEY).digest('hex') }] } });
  assert.deepEqual(sy.paths, ['/mcp', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
  // The host of examples/node-http.mjs: Switchyard's paths to it, anything else a plain 404.
  const served = new Set(sy.paths);
  const server = http.createServer((req, res) => {
    if (served.has(new URL(req.url ?? '/', 'http://h').pathname)) void sy.handle(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const refused = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: modernHeaders('tools/list'),
    body: JSON.stringify(modernBody(1, 'tools/list', {})),
  });
  assert.equal(refused.status, 401);
  const named = /resource_metadata="([^"]+)"/.exec(String(refused.headers.get('www-authenticate')))?.[1];
  assert.equal(named, `${origin}/.well-known/oauth-protected-resource/mcp`);
  for (const url of [named, `${origin}/.well-known/oauth-protected-resource`]) {
    const doc = await fetch(url);
    assert.equal(doc.status, 200, url);
    assert.deepEqual(await doc.json(), { resource: `${origin}/mcp`, bearer_methods_supported: ['header'] }, url);
  }
});

test('without auth, sy.paths is the MCP and HTTP+SSE paths only', (t) => {
  assert.deepEqual(switchyard(t, { dialects: { legacySse: true } }).paths, ['/mcp', '/sse', '/messages']);
});
