// Upstream lifecycle on the diagnostics channels: spawn, ready (with the revision), down (with the
// cause), for a stdio child and an HTTP upstream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { HeldCalls } from '../../src/core/calls.js';
import { CHANNELS, type UpstreamStateMessage } from '../../src/core/diagnostics.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { eraClients } from '../../src/gateway.js';
import { createHttpUpstream } from '../../src/upstreams/http/index.js';
import { createStdioUpstream } from '../../src/upstreams/stdio/index.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');

/** Records every upstream state message until the test ends, as `state upstream revision? transport code?`. */
function record(t: { after(fn: () => void): void }): string[] {
  const seen: string[] = [];
  const on = (m: unknown) => {
    const s = m as UpstreamStateMessage;
    const code = s.error instanceof SwitchyardError ? ` ${s.error.code}: ${s.error.message}` : '';
    seen.push(`${s.state} ${s.upstream}${s.revision ? ` ${s.revision}` : ''} ${s.transport}${code}`);
  };
  for (const name of [CHANNELS.upstreamSpawn, CHANNELS.upstreamReady, CHANNELS.upstreamDown]) {
    diagnostics.subscribe(name, on);
    t.after(() => diagnostics.unsubscribe(name, on));
  }
  return seen;
}

test('a stdio child publishes spawn, ready with its revision, and down when it stops', async (t) => {
  const seen = record(t);
  const up = createStdioUpstream({
    command: '',
    argv: [process.execPath, RAW, 'stdio'],
    name: 'raw',
    log: pino({ level: 'silent' }),
    limits: DEFAULT_LIMITS,
    clientInfo: { name: 'switchyard', version: 'test' },
    eras: await eraClients(),
  });
  await up.start();
  await up.close();
  assert.deepEqual(seen, ['spawn raw stdio', 'ready raw 2025-11-25 stdio', 'down raw stdio SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: shutting down']);
});

test('an HTTP upstream that cannot be reached publishes spawn, then down with the cause', async (t) => {
  const seen = record(t);
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const up = createHttpUpstream({
    name: 'gone',
    url: `http://127.0.0.1:${port}/mcp`,
    era: '2026-07-28',
    log: pino({ level: 'silent' }),
    limits: DEFAULT_LIMITS,
    clientInfo: { name: 'switchyard', version: 'test' },
    held: new HeldCalls(undefined),
    eras: await eraClients(),
  });
  await assert.rejects(up.start(), {
    code: 'SWY_ERR_UPSTREAM_UNAVAILABLE',
    message: 'Upstream unavailable: connection refused',
    operatorMessage: `Upstream unavailable: http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`,
  });
  assert.deepEqual(seen, ['spawn gone http', 'down gone http SWY_ERR_UPSTREAM_UNAVAILABLE: Upstream unavailable: connection refused']);
});
