// Two Switchyards with `auth` in one fastify application share the first one's RFC 9728 metadata
// routes (fastify has one router per server), and those routes were checked by the first one's
// hook alone: with `cors` on the second only, a page on the second's listed origin got 404 for its
// preflight of the second's metadata document (no OPTIONS route) and a GET of it without the
// CORS fields, so it could not read it; with `cors` on the first only, the second's document
// carried the first's fields. Each document is now checked by the Switchyard that owns it: its
// Origin and Host allowlists and its CORS, whichever registered the routes (docs/embedding.md).
// Spec: RFC 9728 §3.1; WHATWG Fetch §3.2, §4.8.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { send } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

/** A page origin (the default allowedOrigins lets localhost through, any port). */
const PAGE = 'http://localhost:5173';
const EXPOSE = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After, Allow, Accept-Encoding';
const authFor = (name: string) => ({
  apiKeys: [{ name, sha256: createHash('sha256').update(`${name}-key_0123456789abcdefghijklmnopqrstuvwxyz`).digest('hex') }],
});

/** The `access-control-*` and `vary` fields of an answer. */
function corsOf(headers: Record<string, string | string[] | undefined>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k.startsWith('access-control-') || k === 'vary'));
}

for (const withCors of ['second', 'first'] as const) {
  test(`two authenticated Switchyards in one fastify app, cors on the ${withCors} only: its metadata document answers a preflight and carries its CORS fields, the other's has none`, async (t) => {
    const cors = { cors: { origins: [PAGE] } };
    const one = switchyard(t, { auth: authFor('one'), ...(withCors === 'first' ? cors : {}) });
    const two = switchyard(t, { auth: authFor('two'), listen: { path: '/two' }, ...(withCors === 'second' ? cors : {}) });
    const app = Fastify({ forceCloseConnections: true });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ host: 'not found' }));
    t.after(() => app.close());
    await app.register(one.plugin);
    await app.register(two.plugin);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const prm = (path: string) => `${origin}/.well-known/oauth-protected-resource${path}`;
    const [corsPath, plainPath] = withCors === 'second' ? ['/two/mcp', '/mcp'] : ['/mcp', '/two/mcp'];

    // The document of the Switchyard with CORS: its preflight answered 204, its GET readable by the page.
    const pre = await send(prm(corsPath), 'OPTIONS', undefined, { origin: PAGE, 'access-control-request-method': 'GET' });
    assert.equal(pre.status, 204);
    assert.deepEqual(corsOf(pre.headers), {
      'access-control-allow-origin': PAGE,
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-max-age': '600',
      'access-control-expose-headers': EXPOSE,
      vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    });
    const doc = await send(prm(corsPath), 'GET', undefined, { origin: PAGE });
    assert.equal(doc.status, 200);
    assert.deepEqual(doc.json, { resource: `${origin}${corsPath}`, bearer_methods_supported: ['header'] });
    assert.deepEqual(corsOf(doc.headers), { 'access-control-allow-origin': PAGE, 'access-control-expose-headers': EXPOSE, vary: 'Origin' });

    // The other one's document: served, without CORS fields; its preflight gets the host's 404.
    const plain = await send(prm(plainPath), 'GET', undefined, { origin: PAGE });
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.json, { resource: `${origin}${plainPath}`, bearer_methods_supported: ['header'] });
    assert.deepEqual(corsOf(plain.headers), {});
    const plainPre = await send(prm(plainPath), 'OPTIONS', undefined, { origin: PAGE, 'access-control-request-method': 'GET' });
    assert.deepEqual([plainPre.status, plainPre.json, corsOf(plainPre.headers)], [404, { host: 'not found' }, {}]);
  });
}
