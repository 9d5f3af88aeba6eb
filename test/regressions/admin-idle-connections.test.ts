// Found by h-trial7 (2026-12): docs/operations.md bounds the admin listener at 64 connections and
// 10 s per request, but a connection that sent nothing was kept for 30 s (fastify's
// connectionTimeout) and one whose request head never ended for 30–40 s (Node checks the request
// timeout only every connectionsCheckingInterval, 30 s by default). 64 such sockets from anyone
// who reaches the admin port kept /healthz and /readyz unanswered that long: in deploy/kubernetes
// the liveness probe's whole budget (3 × 10 s), so the pod was restarted. Both now end within 10 s
// (and a second).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startCli } from '../helpers/cli.js';
import { until } from '../helpers/replicas.js';

test('64 idle or half-sent connections hold the admin listener at most about 10 s', async (t) => {
  const cli = await startCli(t, []);
  const admin = new URL(cli.records().find((r) => r.msg === 'admin listener up')?.url as string);
  const port = Number(admin.port);
  assert.equal((await fetch(new URL('/healthz', admin))).status, 200);

  const socks: net.Socket[] = [];
  let closed = 0;
  const started = Date.now();
  for (let i = 0; i < 64; i++) {
    // From 8 loopback addresses, 8 each: one address may hold only admin.maxConnectionsPerAddress
    // (test/regressions/admin-greedy-peer.test.ts).
    const s = net.connect({ host: '127.0.0.1', port, localAddress: `127.0.0.${1 + (i % 8)}` });
    s.on('error', () => {});
    s.on('close', () => closed++);
    // Half of them send the start of a request and never end its head; the others send nothing.
    if (i % 2 === 0) s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    socks.push(s);
  }
  t.after(() => socks.forEach((s) => s.destroy()));
  await Promise.all(socks.map((s) => new Promise((resolve) => s.once('connect', resolve))));

  await until(() => closed === 64, 'the listener to close all 64 connections', 13_000, 100);
  const heldMs = Date.now() - started;
  assert.ok(heldMs >= 9_000, `closed after ${heldMs} ms`);
  assert.ok(heldMs < 12_500, `closed after ${heldMs} ms`);
  const health = await fetch(new URL('/healthz', admin));
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
});
