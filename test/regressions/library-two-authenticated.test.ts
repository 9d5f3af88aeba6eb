// Found by a trial (2026-12-05): two Switchyards with `auth`, each registered as a plugin of one
// fastify application, could not coexist: both registered GET /.well-known/oauth-protected-resource
// (and its wildcard), so the second `register` threw FST_ERR_DUPLICATED_ROUTE and so did `listen`.
// Now the first registration's metadata routes serve every instance's documents. And, found by
// the same trial, closing the first of the two made the second's metadata answer 503.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const keyOf = (name: string) => `${name}-key_0123456789abcdefghijklmnopqrstuvwxyz`;
const authFor = (name: string) => ({ apiKeys: [{ name, sha256: createHash('sha256').update(keyOf(name)).digest('hex') }] });

/** Two authenticated instances (`/mcp`, `/two/mcp`) as plugins of one fastify app on 127.0.0.1 port 0. */
async function twoInOneApp(t: Parameters<typeof switchyard>[0] & { after(fn: () => Promise<void>): void }) {
  const one = switchyard(t, { auth: authFor('one') });
  const two = switchyard(t, { auth: authFor('two'), listen: { path: '/two' } });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(one.plugin);
  await app.register(two.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { one, two, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

test('two authenticated Switchyards in one fastify app: both register, each mount has its own metadata and challenge, the bare document names neither', async (t) => {
  const { origin } = await twoInOneApp(t);
  const prm = (path: string) => `${origin}/.well-known/oauth-protected-resource${path}`;

  for (const path of ['/mcp', '/two/mcp']) {
    const doc = await fetch(prm(path));
    assert.equal(doc.status, 200, path);
    assert.deepEqual(await doc.json(), { resource: `${origin}${path}`, bearer_methods_supported: ['header'] }, path);
    const call = (authorization?: string) =>
      fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { ...modernHeaders('tools/call', 'echo'), ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: path } })),
      });
    const refused = await call();
    assert.equal(refused.status, 401, path);
    assert.equal(refused.headers.get('www-authenticate'), `Bearer resource_metadata="${prm(path)}"`, path);
    const own = path === '/mcp' ? 'one' : 'two';
    const other = own === 'one' ? 'two' : 'one';
    assert.equal((await call(`Bearer ${keyOf(other)}`)).status, 401, `${path} with the other instance's key`);
    const ok = await call(`Bearer ${keyOf(own)}`);
    assert.equal(ok.status, 200, path);
    assert.deepEqual(((await ok.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Echo: ${path}` }]);
  }
  // Two mounts in the app: a bare document could name only one of them (RFC 9728 §3.3).
  assert.equal((await fetch(prm(''))).status, 404);
});

test('two authenticated instances in one app: closing the first leaves the second its metadata', async (t) => {
  const { one, origin } = await twoInOneApp(t);
  await one.close();
  const doc = await fetch(`${origin}/.well-known/oauth-protected-resource/two/mcp`);
  assert.equal(doc.status, 200);
  assert.deepEqual(await doc.json(), { resource: `${origin}/two/mcp`, bearer_methods_supported: ['header'] });
});
