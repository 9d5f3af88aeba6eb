// Found by a trial (2026-12-03): with a trace collector that takes connections and never answers,
// SIGTERM held the gateway for the whole OTLP export timeout (10 s by default, retries included)
// after every request had been answered. The final export is now bounded by `shutdownGraceMs`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startCli } from '../helpers/cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('a collector that never answers does not hold SIGTERM past shutdownGraceMs: the exit is 0 and the dropped export is logged', async (t) => {
  const sockets = new Set<net.Socket>();
  const collector = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.resume(); // reads the export and never answers
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    collector.close();
  });
  const port = (collector.address() as net.AddressInfo).port;
  const cli = await startCli(t, ['--no-admin', '--limit', 'shutdownGraceMs=1000'], {
    ...process.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    // An export timeout far past the test's own: without the bound, the exit waits for it.
    OTEL_EXPORTER_OTLP_TIMEOUT: '600000',
    // Spans wait in the batch until shutdown.
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  });
  const r = await post(cli.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200);
  const code = await cli.stop('SIGTERM');
  assert.equal(code, 0);
  const failed = cli.records().find((rec) => rec.msg === 'trace export at shutdown failed');
  assert.match(String((failed?.err as { message?: string } | undefined)?.message), /still unfinished after 1000 ms/);
  // The collector did get the export attempt: the bound cut a real export, not an idle one.
  assert.ok(sockets.size >= 1);
});
