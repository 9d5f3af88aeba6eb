// An access log its logger would drop is not subscribed: every request, and every answer the
// gateway gives itself (the `initialize` of each idle HTTP+SSE session), then skips building its
// request start and end messages, which cost an idle HTTP+SSE session about 6 KB of allocation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { channels } from '../../src/core/diagnostics.js';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';

/** A gateway with operations on and no admin listener, logging at `level` into `records`. */
async function opsGateway(t: { after(fn: () => Promise<void>): void }, level: string, records: Array<Record<string, unknown>>) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) records.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const config = validateConfig({ listen: { host: '127.0.0.1', port: 0 }, admin: false }, 'test', { env: {} });
  const gw = await startGatewayFromConfig(config, pino({ level }, sink), { operations: true, env: {} });
  t.after(() => gw.close());
  return gw;
}

test('at log level warn the access log (info) is not subscribed to requestEnd; at info it is, and writes its line', async (t) => {
  await t.test('warn', async (t) => {
    await opsGateway(t, 'warn', []);
    assert.equal(channels.requestEnd.hasSubscribers, false);
    assert.equal(channels.requestStart.hasSubscribers, false);
  });
  await t.test('info', async (t) => {
    const records: Array<Record<string, unknown>> = [];
    await opsGateway(t, 'info', records);
    assert.equal(channels.requestEnd.hasSubscribers, true);
    channels.requestEnd.publish({
      ctx: { method: 'ping', protocolVersion: '2025-06-18', mount: 'main', dialect: '2025-03-26' } as never,
      startedAt: 0,
      durationMs: 1,
    });
    assert.deepEqual(
      records.filter((r) => r.msg === 'request').map((r) => [r.level, r.method, r.outcome]),
      [[30, 'ping', 'ok']],
    );
  });
});
