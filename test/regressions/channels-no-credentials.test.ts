// Regression (found by h-secrets): every request and upstream-call message on the public
// diagnostics channels (`CHANNELS`, docs/architecture.md) carries the request's context, and the
// context held the client's `Authorization` value and its raw session id as own properties. A
// subscriber that logs or serializes what it receives (pino, JSON.stringify, util.inspect: what an
// APM agent or a debugging hook does) wrote the bearer token or API key and the session id, which
// the session channels themselves publish only as a digest. Both are now accessors on the
// context's prototype: readable by name, absent from every serialization.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { CHANNELS } from '../../src/index.js';
import { switchyard } from '../helpers/library.js';
import { modernRequest } from '../helpers/library.js';

const KEY = 'PLANTED_CHANNEL_KEY_3e7d';

test('no channel message, serialized or inspected, holds the client credential or the session id; the context still reads them', async (t) => {
  const messages: Array<[string, unknown]> = [];
  for (const name of Object.values(CHANNELS)) {
    const on = (m: unknown) => void messages.push([name, m]);
    diagnostics.subscribe(name, on);
    t.after(() => diagnostics.unsubscribe(name, on));
  }
  const sy = switchyard(t, { auth: { apiKeys: [{ name: 'ci', sha256: createHash('sha256').update(KEY).digest('hex') }] } });
  const authorization = `Bearer ${KEY}`;
  const call = await sy.fetch(modernRequest('tools/call', { name: 'echo', arguments: { message: 'x' } }, { name: 'echo', headers: { authorization } }));
  assert.equal(call.status, 200);
  await call.text();
  const json2025 = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization };
  const init = await sy.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: json2025,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      }),
    }),
  );
  const sessionId = init.headers.get('mcp-session-id')!;
  await init.text();
  const list = await sy.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { ...json2025, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    }),
  );
  assert.equal(list.status, 200);
  await list.text();
  const withCtx = messages.filter(([, m]) => (m as { ctx?: unknown }).ctx !== undefined);
  assert.ok(withCtx.some(([name]) => name === CHANNELS.requestStart) && withCtx.some(([name]) => name === CHANNELS.upstreamCallEnd));
  for (const [name, m] of messages) {
    for (const text of [JSON.stringify(m, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)), inspect(m, { depth: 8 })]) {
      assert.ok(!text.includes(KEY), `${name} carries the key`);
      assert.ok(!text.includes(sessionId), `${name} carries the session id`);
    }
  }
  const ctx = (withCtx.at(-1)![1] as { ctx: { authorization?: string; sessionKey?: string } }).ctx;
  assert.deepEqual([ctx.authorization, ctx.sessionKey], [authorization, sessionId]);
});
