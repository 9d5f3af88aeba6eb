// Found by a trial (2026-12-05): the standalone listener and the fastify plugin read a POST's
// whole body (up to maxBodyBytes, within bodyTimeoutMs) before authenticating it, so a caller
// without a credential could hold a connection and a buffered body until it finished sending;
// docs/security.md says authentication comes before the body, and the fetch handler did answer
// at once. Now a POST is authenticated from its head, in the route's own onRequest hook.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import net from 'node:net';
import Fastify from 'fastify';
import { gatewayFromConfig } from '../helpers/identity.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const KEY = 'body-key_0123456789abcdefghijklmnopqrstuvwx';
const auth = { apiKeys: [{ name: 'alice', sha256: createHash('sha256').update(KEY).digest('hex') }] };

/**
 * Sends a POST head announcing a 1,000,000-byte body, then only its first bytes, and resolves
 * with the status line of the first answer, or `'no answer'` after `waitMs`.
 */
function postHeadOnly(port: number, path: string, authorization?: string, waitMs = 1500): Promise<{ status: string; head: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ status: 'no answer', head: '' });
    }, waitMs);
    s.on('error', reject);
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      s.destroy();
      resolve({ status: got.slice(0, got.indexOf('\r\n')), head: got.slice(0, end) });
    });
    s.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        (authorization ? `Authorization: ${authorization}\r\n` : '') +
        'Content-Length: 1000000\r\n\r\n{"jsonrpc":"2.0",',
    );
  });
}

test('standalone listener: a POST without a valid credential is refused before its body arrives, on the MCP and HTTP+SSE message paths', async (t) => {
  const gw = await gatewayFromConfig(t, { auth, dialects: { legacySse: true } });
  const port = new URL(gw.urls[0]).port;
  const none = await postHeadOnly(Number(port), '/mcp');
  assert.equal(none.status, 'HTTP/1.1 401 Unauthorized');
  assert.match(none.head, /\r\nwww-authenticate: Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/i);
  assert.equal((await postHeadOnly(Number(port), '/mcp', 'Bearer wrong-key_0123456789abcdefghijklmnopqrstu')).status, 'HTTP/1.1 401 Unauthorized');
  assert.equal((await postHeadOnly(Number(port), '/mcp', 'Bearer two words')).status, 'HTTP/1.1 400 Bad Request');
  assert.equal((await postHeadOnly(Number(port), '/messages?sessionId=x')).status, 'HTTP/1.1 401 Unauthorized');
  // A valid key: the request goes on, and its body is awaited.
  assert.equal((await postHeadOnly(Number(port), '/mcp', `Bearer ${KEY}`, 300)).status, 'no answer');
});

test('fastify plugin with auth: a POST without a credential is refused before its body arrives', async (t) => {
  const sy = switchyard(t, { auth });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as net.AddressInfo;
  assert.equal((await postHeadOnly(port, '/mcp')).status, 'HTTP/1.1 401 Unauthorized');
  assert.equal((await postHeadOnly(port, '/mcp', `Bearer ${KEY}`, 300)).status, 'no answer');
});

test("fastify plugin with auth: the host application's preParsing hooks run only for a request whose credential was accepted", async (t) => {
  // Authentication is a route `onRequest` hook, before every `preParsing` hook (the host's run
  // first among those): a refused caller does not start the host's body handling either.
  const sy = switchyard(t, { auth });
  const app = Fastify();
  t.after(() => app.close());
  const parsed: string[] = [];
  app.addHook('preParsing', (req, _reply, payload, done) => {
    parsed.push(String(req.headers.authorization ?? 'none'));
    done(null, payload);
  });
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as net.AddressInfo;
  const post = (authorization?: string) =>
    fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { ...modernHeaders('tools/list'), ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(modernBody(1, 'tools/list')),
    });
  assert.equal((await post()).status, 401);
  assert.equal((await post('Bearer wrong-key_0123456789abcdefghijklmnopqrstu')).status, 401);
  assert.deepEqual(parsed, []);
  const ok = await post(`Bearer ${KEY}`);
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  assert.deepEqual(parsed, [`Bearer ${KEY}`]);
});
