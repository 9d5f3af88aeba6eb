// Noted in docs/operations.md (2026-12) after admin-greedy-peer: the per-address cap of the admin
// listener stops one address, not a peer with many. 8 addresses with 8 idle sockets each held
// all 64 connections, and the orchestrator's /healthz and /readyz were refused at accept (a
// healthy replica restarted). Now, at the 64, the connection idle longest (no request under way)
// is closed to make room for the new one; only 64 requests under way refuse it. The admin
// listener answers a method with a body (it serves only GET and HEAD) before reading the body,
// so a body never sent cannot keep a request under way either.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { guardConnections, type ConnectionCloseEvent } from '../../src/io/connection-guard.js';
import { startCli } from '../helpers/cli.js';
import { getFrom, idleConnections, rawRequest } from '../helpers/raw-http.js';
import { until } from '../helpers/replicas.js';

/** The value of one sample line of a Prometheus exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Records which of `socks` the server closed. */
function watchClose(socks: readonly net.Socket[]): Set<net.Socket> {
  const closed = new Set<net.Socket>();
  for (const s of socks) {
    s.on('close', () => closed.add(s));
    s.on('end', () => closed.add(s));
  }
  return closed;
}

test('8 addresses with 8 idle admin connections each: probes from a 9th are answered, the longest idle connection making room', async (t) => {
  const cli = await startCli(t, []);
  const port = Number(new URL(cli.records().find((r) => r.msg === 'admin listener up')?.url as string).port);

  // 127.0.0.2 first, then .3 … .9: 64 in all, each address at its 8.
  const greedy: net.Socket[] = [];
  for (let i = 2; i <= 9; i++) greedy.push(...(await idleConnections(t, port, 8, `127.0.0.${i}`)));
  const closed = watchClose(greedy);
  const first = greedy.slice(0, 8);

  // Without the change both were closed at accept (ECONNRESET): 64 were open.
  assert.deepEqual(await getFrom(port, '/healthz', '127.0.0.10'), { status: 200, body: '{"status":"ok"}' });
  await until(() => closed.size === 1, 'one idle connection closed to make room', 5_000, 20);
  assert.ok(
    first.some((s) => closed.has(s)),
    'the one idle longest: 127.0.0.2 opened first',
  );
  assert.deepEqual(await getFrom(port, '/readyz', '127.0.0.10'), { status: 200, body: '{"ready":true,"reasons":[]}' });

  const metrics = await getFrom(port, '/metrics', '127.0.0.11');
  assert.ok('status' in metrics, JSON.stringify(metrics));
  assert.equal(metrics.status, 200);
  // Each probe made room when it found the 64 open (the one before it may have closed by then).
  const evicted = sample(metrics.body, 'switchyard_admin_connections_refused_total{reason="evicted_idle"}');
  assert.ok(evicted !== undefined && evicted >= 1 && evicted <= 3, metrics.body);
  assert.equal(sample(metrics.body, 'switchyard_admin_connections_refused_total{reason="at_limit"}'), 0);
  assert.equal(sample(metrics.body, 'switchyard_admin_connections_refused_total{reason="per_address"}'), 0);
  await until(() => closed.size === evicted, 'as many greedy sockets closed as counted', 5_000, 20);

  // One warn line for the first eviction (the next are counted in the line a minute later).
  const lines = cli.records().filter((r) => r.msg === 'admin idle connection closed to make room');
  assert.deepEqual(
    lines.map((l) => [l.level, l.remoteAddress, l.evicted]),
    [[40, '127.0.0.2', 1]],
  );
});

test('the admin listener answers a POST before its body arrives, and closes the connection', async (t) => {
  const cli = await startCli(t, []);
  const port = Number(new URL(cli.records().find((r) => r.msg === 'admin listener up')?.url as string).port);
  const s = net.connect({ host: '127.0.0.1', port });
  t.after(() => s.destroy());
  await once(s, 'connect');
  let text = '';
  s.setEncoding('utf8');
  s.on('data', (c: string) => (text += c));
  // 500 bytes announced, one sent: before, the answer waited for the other 499 (10 s, then nothing).
  s.write('POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{');
  await once(s, 'close');
  assert.match(text, /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
  assert.match(text, /\r\nallow: GET, HEAD\r\n/i);
  assert.match(text, /\r\nconnection: close\r\n/i);
  assert.ok(text.endsWith('{"error":{"code":"SWY_ERR_ADMIN_METHOD_NOT_ALLOWED","message":"Method not allowed on the admin listener"}}'), text);
  // An unknown path: 404, at once too.
  const other = await rawRequest(port, 'PUT /nowhere HTTP/1.1\r\nHost: 127.0.0.1', '{}');
  assert.equal(other.status, 404);
});

test('evictIdleAtLimit: at the total an idle connection makes room; with every connection busy the new one is refused', async (t) => {
  const release: Array<() => void> = [];
  const srv = http.createServer((_req, res) => {
    release.push(() => res.end('ok'));
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  const port = (srv.address() as net.AddressInfo).port;
  const events: ConnectionCloseEvent[] = [];
  const guard = guardConnections(srv, { maxConnections: 2, maxPerAddress: 8, evictIdleAtLimit: true, onClose: (e) => events.push(e) });
  t.after(() => guard.close());

  // Two requests under way (heads in, answers held): the 3rd connection is refused at accept.
  const busy = [getFrom(port, '/a', '127.0.0.2'), getFrom(port, '/b', '127.0.0.3')];
  await until(() => release.length === 2, 'two requests under way', 5_000, 10);
  assert.deepEqual(await getFrom(port, '/c', '127.0.0.4'), { error: 'ECONNRESET' });
  assert.deepEqual(
    events.map((e) => [e.reason, e.remoteAddress]),
    [['at-limit', '127.0.0.4']],
  );
  release.splice(0).forEach((go) => go());
  await Promise.all(busy);

  // Two idle connections: a new one closes the older and is served.
  await until(() => guard.stats().open === 0, 'the answered connections closed', 5_000, 10);
  const [older] = await idleConnections(t, port, 1, '127.0.0.5');
  const [newer] = await idleConnections(t, port, 1, '127.0.0.6');
  await until(() => guard.stats().open === 2, 'two idle connections', 5_000, 10);
  const served = getFrom(port, '/d', '127.0.0.7');
  await until(() => release.length === 1, 'the new request under way', 5_000, 10);
  release.splice(0).forEach((go) => go());
  assert.deepEqual(await served, { status: 200, body: 'ok' });
  await until(() => older.destroyed || older.readableEnded, 'the older idle connection closed', 5_000, 10);
  assert.equal(newer.destroyed || newer.readableEnded, false);
  assert.deepEqual(
    events.slice(1).map((e) => [e.reason, e.remoteAddress]),
    [['evicted-idle', '127.0.0.5']],
  );
  assert.equal(guard.stats().evictedIdle, 1);
  assert.equal(guard.stats().refusedAtLimit, 1);
});
