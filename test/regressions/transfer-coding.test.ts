// Transfer codings other than chunked. Found by a trial: `Transfer-Encoding: gzip, chunked` was
// served with the gzip step ignored (node:http undoes chunked alone, so the body reached the
// JSON parser still compressed, or, when not compressed at all, was taken as plain). RFC 9112
// §6.1: a server that receives a transfer coding it does not understand ought to answer 501
// (Not Implemented) and close the connection.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import Fastify from 'fastify';
import { gateway } from '../helpers/gateway.js';
import { switchyard, modernRequest } from '../helpers/library.js';
import { modernBody, modernHeaders } from '../helpers/http.js';

const REFUSED = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Not Implemented: unsupported Transfer-Encoding' } };

const CALL = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }));

/** `text` as chunked framing: one chunk, then the last. */
const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;

/**
 * Writes `head` (request line and field lines, no blank line) and `body` on a fresh socket, keeps
 * it open, and reads until the server closes: the status, the field lines by lower-case name,
 * and the body (its framing undone when chunked).
 */
function exchange(port: number, head: string, body: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let got = '';
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no close within 10 s: ${got.slice(0, 300)}`));
    }, 10_000);
    s.on('data', (d: Buffer) => (got += d.toString('utf8')));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      const split = got.indexOf('\r\n\r\n');
      const [statusLine, ...fields] = got.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const f of fields) headers[f.slice(0, f.indexOf(':')).toLowerCase()] = f.slice(f.indexOf(':') + 1).trim();
      let payload = got.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') payload = payload.slice(payload.indexOf('\r\n') + 2, payload.lastIndexOf('\r\n0\r\n'));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: payload });
    });
    s.write(`${head}\r\n\r\n${body}`);
  });
}

/** The head of a 2026-07-28 `tools/call` POST to `path` with the given Transfer-Encoding field lines (no Connection: close). */
function head(port: number, path: string, codings: string[]): string {
  const fields = Object.entries(modernHeaders('tools/call', 'echo')).map(([k, v]) => `${k}: ${v}`);
  return [`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...fields, ...codings.map((c) => `Transfer-Encoding: ${c}`)].join('\r\n');
}

/** Every refused form gets 501, the JSON-RPC body, `Connection: close`, and the socket closes; `chunked` alone is served. */
async function assertRefusesCodings(port: number, paths: string[]): Promise<void> {
  for (const path of paths)
    for (const codings of [['gzip, chunked'], ['identity, chunked'], ['x-custom;level=1, Chunked'], ['gzip', 'chunked'], ['deflate, chunked']]) {
      const r = await exchange(port, head(port, path, codings), chunked(CALL));
      const what = `${path} ${codings.join(' | ')}: ${r.body}`;
      assert.equal(r.status, 501, what);
      assert.equal(r.headers['content-type'], 'application/json', what);
      assert.equal(r.headers.connection, 'close', what);
      assert.deepEqual(JSON.parse(r.body), REFUSED, what);
    }
  for (const te of ['chunked', 'Chunked']) {
    const ok = await exchange(port, `${head(port, '/mcp', [te])}\r\nConnection: close`, chunked(CALL));
    assert.equal(ok.status, 200, ok.body);
    assert.deepEqual((JSON.parse(ok.body) as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);
  }
}

test('the standalone listener: a transfer coding other than chunked is 501 with a JSON-RPC error, then the connection closes; on an unknown path too', async (t) => {
  const gw = await gateway(t);
  await assertRefusesCodings(Number(new URL(gw.url).port), ['/mcp', '/elsewhere']);
  const logged = gw.records.filter((r) => r.reason === 'transfer coding');
  assert.equal(logged.length, 10);
  assert.deepEqual(
    logged.slice(0, 5).map((r) => [r.level, r.coding]),
    [
      [30, 'gzip'],
      [30, 'identity'],
      [30, 'x-custom'],
      [30, 'gzip'],
      [30, 'deflate'],
    ],
  );
});

test('the fastify plugin in a host application, and the Node handler: the same 501', async (t) => {
  const sy = switchyard(t);
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  await assertRefusesCodings((app.server.address() as AddressInfo).port, ['/mcp']);

  const server = http.createServer((req, res) => void sy.handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await assertRefusesCodings((server.address() as AddressInfo).port, ['/mcp']);
});

// The fetch handler gets the body from its host with chunked undone (a host keeps the field, as
// @hono/node-server does): a coding left in the field is still on the body.
test('the fetch handler: a Transfer-Encoding naming a coding other than chunked is 501 with Connection: close; chunked alone is served', async (t) => {
  const sy = switchyard(t);
  const refused = await sy.fetch(
    modernRequest('tools/call', { name: 'echo', arguments: { message: 'hi' } }, { name: 'echo', headers: { 'transfer-encoding': 'gzip, chunked' } }),
  );
  assert.equal(refused.status, 501);
  assert.equal(refused.headers.get('connection'), 'close');
  assert.deepEqual(await refused.json(), REFUSED);
  const served = await sy.fetch(
    modernRequest('tools/call', { name: 'echo', arguments: { message: 'hi' } }, { name: 'echo', headers: { 'transfer-encoding': 'chunked' } }),
  );
  assert.equal(served.status, 200);
  assert.deepEqual(((await served.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);
});
