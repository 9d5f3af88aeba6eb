// Found by a trial (2026-12-05): in the fastify plugin (and the Node handler) the upstreams were
// started by a preHandler hook of the whole context, which ran before the route authenticated:
// a GET or DELETE without a token, and a GET of the RFC 9728 metadata, started every upstream
// (spawning stdio children), where docs/embedding.md says a request refused at the front door
// starts nothing. (Two instances sharing the metadata routes: library-two-authenticated.test.ts.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { CHANNELS } from '../../src/core/diagnostics.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { allOn, switchyard } from '../helpers/library.js';

const keyOf = (name: string) => `${name}-key_0123456789abcdefghijklmnopqrstuvwxyz`;
const authFor = (name: string) => ({ apiKeys: [{ name, sha256: createHash('sha256').update(keyOf(name)).digest('hex') }] });

test('fastify plugin with auth: refused requests and metadata GETs start no upstream; the first admitted request does', async (t) => {
  const ready = allOn<{ upstream: string }>(t, CHANNELS.upstreamReady);
  const sy = switchyard(t, { auth: authFor('one') });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  assert.equal((await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).status, 200);
  assert.equal((await fetch(`${origin}/.well-known/oauth-protected-resource`)).status, 200);
  assert.equal((await fetch(`${origin}/mcp`, { headers: { accept: 'text/event-stream' } })).status, 401);
  assert.equal((await fetch(`${origin}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': 'x' } })).status, 401);
  const body = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }));
  assert.equal((await fetch(`${origin}/mcp`, { method: 'POST', headers: modernHeaders('tools/call', 'echo'), body })).status, 401);
  assert.equal(ready.length, 0, 'no upstream started');

  const ok = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: { ...modernHeaders('tools/call', 'echo'), authorization: `Bearer ${keyOf('one')}` },
    body,
  });
  assert.equal(ok.status, 200);
  assert.deepEqual(
    ready.map((m) => m.upstream),
    ['default'],
  );
});
