// The library's Node (req, res) handler in a plain node:http server on a real socket: the official
// v2 client through it, the host's identity per request, Switchyard's own answers on its paths.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { CHANNELS, hostIdentity } from '../../src/index.js';
import type { RequestStartMessage } from '../../src/core/diagnostics.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { listAndEcho, V2_MODES } from '../helpers/examples.js';
import { allOn, switchyard } from '../helpers/library.js';

test('the Node handler serves the v2 client, takes the host’s identity per request, and answers its own refusals', async (t) => {
  const sy = switchyard(t, { dialects: { legacySse: true } });
  assert.deepEqual(sy.paths, ['/mcp', '/sse', '/messages']);
  const server = http.createServer((req, res) => {
    if (req.url === '/health') return void res.writeHead(200).end('ok');
    // The host's own (test) authentication decides the identity.
    const user = req.headers['x-host-user'];
    void sy.handle(req, res, { identity: typeof user === 'string' ? hostIdentity(user) : null });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  for (const mode of V2_MODES) await listAndEcho(`${base}/mcp`, mode);

  const started = allOn<RequestStartMessage>(t, CHANNELS.requestStart);
  const echo = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'n' } }));
  for (const headers of [{ 'x-host-user': 'dave' }, { authorization: 'Bearer unverified' }]) {
    const r = await request(`${base}/mcp`, { method: 'POST', headers: { ...modernHeaders('tools/call', 'echo'), ...headers }, body: echo });
    assert.equal(r.statusCode, 200);
    await r.body.text();
  }
  assert.deepEqual(
    started.filter((m) => m.ctx.method === 'tools/call').map((m) => m.ctx.identity),
    [{ issuer: 'switchyard:host', subject: 'dave', scopes: [], claims: {}, source: 'host' }, null],
  );

  // HTTP+SSE works through the same handler: the endpoint event names the message path.
  const ac = new AbortController();
  const sse = await request(`${base}/sse`, { method: 'GET', headers: { accept: 'text/event-stream' }, signal: ac.signal });
  assert.equal(sse.statusCode, 200);
  const first = await new Promise<string>((resolve) => sse.body.once('data', (c: Buffer) => resolve(c.toString('utf8'))));
  assert.match(first, /^event: endpoint\ndata: messages\?sessionId=[0-9a-f-]{36}\n\n$/);
  sse.body.on('error', () => {});
  ac.abort();

  // Paths Switchyard does not serve get its JSON-RPC 404; the host's own routes are the host's.
  const nope = await request(`${base}/nope`);
  assert.deepEqual([nope.statusCode, await nope.body.json()], [404, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not found' } }]);
  const health = await request(`${base}/health`);
  assert.deepEqual([health.statusCode, await health.body.text()], [200, 'ok']);
  const evil = await request(`${base}/mcp`, { method: 'POST', headers: { ...modernHeaders('tools/list'), origin: 'http://evil.example' }, body: '{}' });
  assert.deepEqual(
    [evil.statusCode, await evil.body.json()],
    [403, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Origin not allowed' } }],
  );
});

test('the Node handler on a loopback socket keeps the Host allowlist of the command: its own port only', async (t) => {
  const sy = switchyard(t, {});
  const server = http.createServer((req, res) => void sy.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const body = JSON.stringify(modernBody(1, 'tools/list'));
  const post = async (host: string) => {
    const r = await request(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { ...modernHeaders('tools/list'), host }, body });
    return [r.statusCode, r.statusCode === 200 ? 'ok' : await r.body.json()];
  };
  const forbidden = [403, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: Host not allowed' } }];
  // A rebinding page's name, and the right name on another port, are refused as by the command.
  assert.deepEqual(await post('evil.example'), forbidden);
  assert.deepEqual(await post(`localhost:${port + 1 === 65536 ? 1 : port + 1}`), forbidden);
  assert.deepEqual(await post(`127.0.0.1:${port}`), [200, 'ok']);
  assert.deepEqual(await post(`localhost:${port}`), [200, 'ok']);
});

test('a body the host read before handle() (a body parser such as express.json()) is refused at once with 500, and logged', async (t) => {
  // Found by a helper mounting the handler in Express behind `app.use(express.json())`: the body
  // had already been read, fastify waited for it forever, and the client got no answer at all.
  const sy = switchyard(t);
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.headers['x-host-parses'] === '1') for await (const chunk of req) void chunk; // what a body parser does
      await sy.handle(req, res, { identity: hostIdentity('erin') });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const echo = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'n' } }));
  const post = (headers: Record<string, string> = {}, body = echo) =>
    request(`${base}/mcp`, { method: 'POST', headers: { ...modernHeaders('tools/call', 'echo'), ...headers }, body, headersTimeout: 5_000 });
  // An empty body read to its end counts too: fastify would wait for its end all the same.
  for (const body of [echo, '']) {
    const read = await post({ 'x-host-parses': '1' }, body);
    assert.deepEqual([read.statusCode, await read.body.json()], [500, { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }]);
  }
  const bodyRead = sy.records.filter((r) => r.msg === 'the host application read the request body before handle()');
  assert.equal(bodyRead.length, 1);
  assert.equal(bodyRead[0]?.level, 50);
  // An unread body on the same handler is served as usual.
  const fine = await post();
  assert.equal(fine.statusCode, 200);
  await fine.body.text();
});
