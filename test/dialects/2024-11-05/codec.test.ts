// Golden tests of the HTTP+SSE era's server side, with no sockets. The era is the initialize era
// over an older transport, so it shares the 2025-03-26 codec and session; what differs is the
// revision it offers first and what its vocabulary lacks (no elicitation, no batches).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeError, encodeResult, HTTP_SSE_REVISION, initializeResult, negotiate, STREAMABLE_REVISIONS } from '../../../dialects/2025-03-26/codec.js';
import { openSession } from '../../../dialects/2025-03-26/server.js';
import { SwitchyardError } from '../../../src/core/errors.js';
import { errorResponse, resultResponse } from '../../../src/core/message.js';
import { collect, sessionHarness } from '../../helpers/session-harness.js';
import { schemaOf } from '../../helpers/schemas.js';

const check = schemaOf('2024-11-05');
/** What the HTTP+SSE binding negotiates among (dialects/2024-11-05/http.ts): its own revision first. */
const OFFERED = [HTTP_SSE_REVISION, ...STREAMABLE_REVISIONS];

test('negotiation offers 2024-11-05 to a client asking for anything it does not serve (2024-11-05 basic/lifecycle)', () => {
  assert.equal(negotiate('2024-11-05', OFFERED), '2024-11-05');
  assert.equal(negotiate('2024-10-07', OFFERED), '2024-11-05');
  assert.equal(negotiate(undefined, OFFERED), '2024-11-05');
  // A newer client that reached the HTTP+SSE endpoint keeps its revision.
  assert.equal(negotiate('2025-06-18', OFFERED), '2025-06-18');
});

test('results and errors in the era’s shape validate against the 2024-11-05 schema', () => {
  const init = initializeResult('2024-11-05', {
    serverInfo: { name: 'switchyard-demo', version: '9.9.9' },
    capabilities: { tools: { listChanged: true }, logging: {} },
    upstreamRevision: '2025-06-18',
  });
  assert.deepEqual(init, {
    protocolVersion: '2024-11-05',
    capabilities: { tools: { listChanged: true }, logging: {} },
    serverInfo: { name: 'switchyard-demo', version: '9.9.9' },
  });
  check('InitializeResult', init);
  check('JSONRPCResponse', resultResponse(1, init));
  const listed = encodeResult({ prompts: [{ name: 'greeting' }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' }, '2024-11-05', 'prompts/list');
  assert.deepEqual(listed, { prompts: [{ name: 'greeting' }] });
  check('ListPromptsResult', listed);
  const missing = encodeError(new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND'));
  assert.equal(missing.code, -32002);
  check('JSONRPCError', errorResponse(2, missing));
});

test('a 2024-11-05 session, no transport: core requests carry the revision; elicitation, absent from this era, is never asked', async (t) => {
  const { deps, seen } = await sessionHarness(t, '2024-11-05');
  const initialize = {
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: { sampling: {} }, clientInfo: { name: 'OldClient', version: '0.9.0' } },
  };
  check('InitializeRequest', initialize);
  const { session, response } = openSession(deps, initialize, OFFERED, null);
  t.after(async () => session.close());
  check('InitializeResult', (response as { result: unknown }).result);
  assert.equal((response as unknown as { result: { protocolVersion: string } }).result.protocolVersion, '2024-11-05');

  const echo = collect();
  const call = { jsonrpc: '2.0' as const, id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'old' } } };
  check('CallToolRequest', call);
  await session.handle(call, 'request', echo.sink);
  assert.deepEqual(echo.finished(), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: old' }] } });
  check('CallToolResult', (echo.finished() as { result: unknown }).result);
  const ctx = seen.at(-1)!;
  assert.deepEqual(
    [ctx.protocolVersion, ctx.dialect, ctx.clientInfo, ctx.clientCapabilities, ctx.logLevel],
    ['2024-11-05', '2024-11-05', { name: 'OldClient', version: '0.9.0' }, { sampling: {} }, undefined],
  );

  // The demo's `ask` needs elicitation. This client cannot declare it (the capability arrived in
  // 2025-06-18), and one that does anyway is not taken at its word: upstreams (the demo among
  // them) are told its revision's capabilities only. Either way the call fails in-band, saying
  // why, and nothing goes to the client.
  const { deps: deps2, seen: seen2 } = await sessionHarness(t, '2024-11-05');
  const declared = openSession(
    deps2,
    { ...initialize, params: { ...initialize.params, capabilities: { elicitation: {}, sampling: {} } } },
    OFFERED,
    null,
  ).session;
  t.after(async () => declared.close());
  for (const s of [session, declared]) {
    const detail = 'elicitation/create does not exist in 2024-11-05';
    const ask = collect();
    await s.handle({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ask', arguments: {} } }, 'request', ask.sink);
    assert.deepEqual(ask.sent, []);
    assert.deepEqual(ask.finished(), errorResponse(3, new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail }).toRpcError()));
    check('JSONRPCError', ask.finished());
  }
  assert.deepEqual(seen2.at(-1)!.clientCapabilities, { sampling: {} });
});
