// Regression: 1,024 idle TCP connections (the default maxConnections) locked every new client out
// until Node's header timeout freed them. The connection guard closes silent connections after
// a first-byte deadline and caps connections per remote address.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { guardConnections, type ConnectionCloseEvent, type ConnectionGuard } from '../../src/io/connection-guard.js';
import { getFrom, idleConnections as idle } from '../helpers/raw-http.js';

type Closed = ConnectionCloseEvent;

async function server(t: { after(fn: () => Promise<void> | void): void }): Promise<{ srv: http.Server; port: number }> {
  const srv = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2, connection: 'close' });
    res.end('ok');
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { srv, port: (srv.address() as net.AddressInfo).port };
}

/** Waits (bounded) until `cond` holds; fails the test when it never does. */
async function until(cond: () => boolean, what: string, attempts = 600): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (cond()) return;
    await sleep(25);
  }
  assert.fail(`never: ${what}`);
}

test('without the guard, 1,024 idle connections at maxConnections 1,024 refuse the next client', async (t) => {
  const { srv, port } = await server(t);
  srv.maxConnections = 1024;
  let accepted = 0;
  srv.on('connection', () => accepted++);
  await idle(t, port, 1024);
  await until(() => accepted === 1024, '1,024 accepted');
  let dropped = 0;
  srv.on('drop', () => dropped++);
  const r = await getFrom(port, '/', '127.0.0.2');
  assert.ok('error' in r, JSON.stringify(r));
  assert.equal(dropped, 1);
});

test('with the guard, a new client is served while 1,024 idle connections are shed after the first-byte deadline', async (t) => {
  const { srv, port } = await server(t);
  const closed: Closed[] = [];
  // The default deadline, 2,000 ms.
  const guard = guardConnections(srv, { maxConnections: 1024, maxPerAddress: 2048, onClose: (e) => closed.push(e) });
  t.after(() => guard.close());
  let accepted = 0;
  srv.on('connection', () => accepted++);
  const sockets = await idle(t, port, 1024);
  await until(() => accepted === 1024, '1,024 accepted');
  // Generous bound: up to 100 tries, 200 ms apart.
  let served: { status: number; body: string } | undefined;
  let refused = 0;
  for (let i = 0; i < 100 && !served; i++) {
    const r = await getFrom(port, '/', '127.0.0.2');
    if ('status' in r) served = r;
    else {
      refused++;
      await sleep(200);
    }
  }
  assert.deepEqual(served, { status: 200, body: 'ok' });
  await until(() => sockets.every((s) => s.destroyed || s.readableEnded), 'idle sockets closed by the server');
  await until(() => guard.stats().open === 0, 'all closed');
  const s = guard.stats();
  assert.equal(s.closedNoFirstByte, 1024);
  assert.equal(s.refusedAtLimit, refused);
  assert.equal(s.refusedPerAddress, 0);
  assert.equal(closed.filter((e) => e.code === 'SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT').length, 1024);
  assert.equal(closed.filter((e) => e.code === 'SWY_ERR_HTTP_CONNECTION_LIMIT' && e.reason === 'at-limit').length, refused);
  assert.ok(closed.every((e) => e.remoteAddress === '127.0.0.1' || e.code === 'SWY_ERR_HTTP_CONNECTION_LIMIT'));
});

test('maxPerAddress: the Nth connection from one address is accepted, the N+1th closed at accept; other addresses are served', async (t) => {
  const { srv, port } = await server(t);
  const closed: Closed[] = [];
  const guard: ConnectionGuard = guardConnections(srv, { maxConnections: 100, maxPerAddress: 4, firstByteTimeoutMs: 60_000, onClose: (e) => closed.push(e) });
  t.after(() => guard.close());
  const four = await idle(t, port, 4);
  await until(() => guard.stats().open === 4, '4 open');
  const [fifth] = await idle(t, port, 1);
  const gotData: Buffer[] = [];
  fifth.on('data', (d: Buffer) => gotData.push(d));
  await once(fifth, 'close');
  assert.deepEqual(gotData, []);
  assert.deepEqual(guard.stats(), { open: 4, addresses: 1, refusedPerAddress: 1, refusedAtLimit: 0, evictedIdle: 0, closedNoFirstByte: 0 });
  assert.deepEqual(closed, [{ code: 'SWY_ERR_HTTP_CONNECTION_LIMIT', reason: 'per-address', remoteAddress: '127.0.0.1' }]);
  // Another address is not affected.
  assert.deepEqual(await getFrom(port, '/', '127.0.0.2'), { status: 200, body: 'ok' });
  // A request from the full address is refused too, until one of its connections closes.
  assert.ok('error' in (await getFrom(port, '/', '127.0.0.1')));
  four[0].destroy();
  await until(() => guard.stats().open === 4 - 1, 'one closed');
  assert.deepEqual(await getFrom(port, '/', '127.0.0.1'), { status: 200, body: 'ok' });
  await until(() => guard.stats().open === 3, 'request connection closed');
  assert.deepEqual(guard.stats(), { open: 3, addresses: 1, refusedPerAddress: 2, refusedAtLimit: 0, evictedIdle: 0, closedNoFirstByte: 0 });
});

test('the first-byte deadline closes a silent connection, not one that has started its request', async (t) => {
  const { srv, port } = await server(t);
  const closed: Closed[] = [];
  const guard = guardConnections(srv, { maxConnections: 100, maxPerAddress: 100, firstByteTimeoutMs: 300, onClose: (e) => closed.push(e) });
  t.after(() => guard.close());
  // The talker connects first, so its timer fires before the silent one's.
  const [talker] = await idle(t, port, 1);
  let reply = '';
  talker.setEncoding('utf8');
  talker.on('data', (d: string) => (reply += d));
  talker.write('G');
  await until(() => guard.stats().open === 1, 'talker accepted');
  const [silent] = await idle(t, port, 1);
  await once(silent, 'close');
  assert.equal(talker.destroyed, false);
  assert.deepEqual(closed, [{ code: 'SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT', reason: 'first-byte', remoteAddress: '127.0.0.1' }]);
  talker.write('ET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await once(talker, 'end');
  assert.equal(reply.replace(/\r\nDate: [^\r]*/, ''), 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
  await until(() => guard.stats().open === 0, 'all closed');
  assert.deepEqual(guard.stats(), { open: 0, addresses: 0, refusedPerAddress: 0, refusedAtLimit: 0, evictedIdle: 0, closedNoFirstByte: 1 });
});

test('close() removes the guard; bad bounds are refused', async (t) => {
  const { srv, port } = await server(t);
  const guard = guardConnections(srv, { maxConnections: 100, maxPerAddress: 1 });
  guard.close();
  await idle(t, port, 3);
  assert.deepEqual(await getFrom(port, '/', '127.0.0.1'), { status: 200, body: 'ok' });
  assert.equal(guard.stats().refusedPerAddress, 0);
  for (const bad of [
    { maxConnections: 0, maxPerAddress: 1 },
    { maxConnections: 1, maxPerAddress: 1.5 },
    { maxConnections: 1, maxPerAddress: 1, firstByteTimeoutMs: -1 },
  ]) {
    assert.throws(
      () => guardConnections(srv, bad),
      (e: unknown) => (e as { code?: string }).code === 'SWY_ERR_CONFIG_INVALID',
    );
  }
});
