// Left by the last helper: an HTTP+SSE session's stream end dropped whatever session the pool held
// under its key (pool.drop(key), no identity check). A session ended to make room ends its stream
// a few ticks later; if its client called again meanwhile, the new session opened for it was
// dropped by the old one's end, and the client's next call opened yet another upstream session.
// Now only the session whose stream ended leaves the pool (the rule sessions.ts already kept).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { HeldCalls } from '../../src/core/calls.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { RequestContext } from '../../src/core/request.js';
import { eraClients } from '../../src/gateway.js';
import { createHttpUpstream } from '../../src/upstreams/http/index.js';
import { httpSseStub } from '../helpers/stub-http.js';

/** A tools/call from client session `sessionKey`. */
function call(sessionKey: string): RequestContext {
  return {
    sessionKey,
    clientCapabilities: {},
    clientInfo: { name: 'trial', version: '1.0.0' },
    protocolVersion: '2025-11-25',
    identity: null,
    method: 'tools/call',
    params: { name: 'which', arguments: {} },
    logLevel: undefined,
    signal: AbortSignal.timeout(20_000),
    progressToken: undefined,
    onProgress: () => {},
    onLog: () => {},
    ask: undefined,
  };
}

/** The upstream session (stub stream id) that answered a `which` call. */
const sessionOf = (r: unknown) => ((r as { content: { text: string }[] }).content[0] ?? { text: '' }).text;

test('HTTP+SSE: a session ended to make room whose stream ends after its client opened a new one leaves that new one pooled', async (t) => {
  const url = await httpSseStub(t, 'which', (m, write, _raw, session) => {
    if (m.method === 'tools/call') return write({ id: m.id, result: { content: [{ type: 'text', text: session }] } });
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [] } });
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const up = createHttpUpstream({
    name: 'which',
    url,
    era: '2024-11-05',
    isolation: 'per-session',
    log: pino({ level: 'silent' }),
    limits: { ...DEFAULT_LIMITS, maxSessions: 2 },
    clientInfo: { name: 'switchyard', version: 'test' },
    held: new HeldCalls(undefined),
    eras: await eraClients(),
  });
  await up.start();
  t.after(() => up.close());

  const a1 = sessionOf(await up.request(call('A')));
  const b1 = sessionOf(await up.request(call('B')));
  assert.notEqual(a1, b1);
  // In one tick: C's session ends A's (the least recently used) to make room, and A's call opens
  // A a new one (ending B's) before A's old stream has ended.
  const [c1, a2] = (await Promise.all([up.request(call('C')), up.request(call('A'))])).map(sessionOf);
  assert.notEqual(a2, a1);
  assert.notEqual(a2, c1);
  // A's next call is served by the session opened for it, not by a third one.
  assert.equal(sessionOf(await up.request(call('A'))), a2);
});
