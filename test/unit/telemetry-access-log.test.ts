// Access lines from real requestEnd messages, parsed back from pino's JSON output: exact fields,
// constant message, and nothing secret (identity, params, session, authorization).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { channels } from '../../src/core/diagnostics.js';
import type { RequestContext } from '../../src/core/request.js';
import { createAccessLog, ACCESS_LOG_MESSAGE } from '../../src/telemetry/access-log.js';

const SECRETS = ['sk-live-abc123', 'alice@example.com', 'sess-0123456789', 'top-secret-argument', 'Bearer xyz'];

function ctxOf(over: Partial<RequestContext> = {}): RequestContext {
  return {
    method: 'tools/call',
    params: { name: 'send-mail', arguments: { body: 'top-secret-argument' } },
    protocolVersion: '2025-06-18',
    clientInfo: { name: 'c', version: '1' },
    clientCapabilities: {},
    logLevel: undefined,
    identity: { issuer: 'https://issuer.example', subject: 'alice@example.com', scopes: ['mail'], claims: { email: 'alice@example.com' }, source: 'jwt' },
    mount: 'main',
    dialect: '2025-03-26',
    upstream: 'mail',
    sessionKey: 'sess-0123456789',
    authorization: 'Bearer xyz',
    traceContext: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'k=sk-live-abc123' },
    signal: new AbortController().signal,
    progressToken: undefined,
    onProgress() {},
    onLog() {},
    ask: undefined,
    ...over,
  };
}

function capture(level = 'info') {
  const lines: string[] = [];
  const log = pino(
    { level, base: undefined, timestamp: false },
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    }),
  );
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('one line per request with method, era, mount, upstream, outcome, codes and duration; nothing secret', (t) => {
  const { log, lines, records } = capture();
  const access = createAccessLog({ log });
  t.after(() => access.close());
  channels.requestEnd.publish({ ctx: ctxOf(), startedAt: 1, durationMs: 12.34567 });
  channels.requestEnd.publish({
    ctx: ctxOf({ method: 'resources/read', params: { uri: 'file:///etc/sk-live-abc123' } }),
    startedAt: 1,
    durationMs: 3,
    code: 'SWY_ERR_UPSTREAM_UNAVAILABLE',
    rpcCode: -32000,
    fault: 'upstream',
    error: new Error('spawn failed sk-live-abc123'),
  });
  channels.requestEnd.publish({
    ctx: ctxOf({ method: 'x'.repeat(500), protocolVersion: 'evil', mount: undefined, upstream: undefined, dialect: undefined }),
    startedAt: 1,
    durationMs: 0.5,
    rpcCode: -32601,
  });
  assert.deepEqual(records(), [
    {
      level: 30,
      method: 'tools/call',
      dialect: '2025-03-26',
      protocolVersion: '2025-06-18',
      mount: 'main',
      upstream: 'mail',
      outcome: 'ok',
      durationMs: 12.346,
      msg: ACCESS_LOG_MESSAGE,
    },
    {
      level: 30,
      method: 'resources/read',
      dialect: '2025-03-26',
      protocolVersion: '2025-06-18',
      mount: 'main',
      upstream: 'mail',
      outcome: 'error',
      rpcCode: -32000,
      code: 'SWY_ERR_UPSTREAM_UNAVAILABLE',
      fault: 'upstream',
      durationMs: 3,
      msg: ACCESS_LOG_MESSAGE,
    },
    { level: 30, method: '_other', protocolVersion: '_other', outcome: 'error', rpcCode: -32601, durationMs: 0.5, msg: ACCESS_LOG_MESSAGE },
  ]);
  for (const s of SECRETS) assert.ok(!lines.join('\n').includes(s), s);
});

test('the configured level is used, and a level below the logger writes nothing', (t) => {
  const debug = capture('debug');
  const a = createAccessLog({ log: debug.log, level: 'debug' });
  t.after(() => a.close());
  const quiet = capture('info');
  const b = createAccessLog({ log: quiet.log, level: 'debug' });
  t.after(() => b.close());
  channels.requestEnd.publish({ ctx: ctxOf({ method: 'ping', params: {} }), startedAt: 0, durationMs: 1 });
  assert.deepEqual(
    debug.records().map((r) => [r.level, r.method, r.msg]),
    [[20, 'ping', 'request']],
  );
  assert.deepEqual(quiet.lines, []);
});

test('close() stops the lines', () => {
  const { log, lines } = capture();
  const access = createAccessLog({ log });
  access.close();
  channels.requestEnd.publish({ ctx: ctxOf(), startedAt: 0, durationMs: 1 });
  assert.deepEqual(lines, []);
  assert.equal(channels.requestEnd.hasSubscribers, false);
});
