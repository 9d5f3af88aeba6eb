// Golden tests of the initialize era's server side (2025-03-26 … 2025-11-25), with no sockets:
// version negotiation, the initialize result, results and errors in the era's shape, the
// per-revision flags, and a session turning client messages into core requests; each wire
// message also checked against the official schema of its revision.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  encodeError,
  encodeResult,
  encodeServerRequest,
  eraHasServerRequest,
  FLAGS,
  initializeResult,
  HTTP_SSE_REVISION,
  negotiate,
  STREAMABLE_REVISIONS,
} from '../../../dialects/2025-03-26/codec.js';
import { openSession } from '../../../dialects/2025-03-26/server.js';
import { PeerRpcError, SwitchyardError } from '../../../src/core/errors.js';
import { errorResponse, resultResponse } from '../../../src/core/message.js';
import type { ServerDescription } from '../../../src/core/upstream.js';
import { collect, sessionHarness } from '../../helpers/session-harness.js';
import { schemaOf } from '../../helpers/schemas.js';

const DESC: ServerDescription = {
  serverInfo: { name: 'switchyard-demo', version: '9.9.9' },
  capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} },
  instructions: 'Try the echo tool.',
  upstreamRevision: '2026-07-28',
};
/** The result and error envelopes' definition names in each revision's schema. */
const RESULT_DEF: Record<string, string> = { '2025-03-26': 'JSONRPCResponse', '2025-06-18': 'JSONRPCResponse', '2025-11-25': 'JSONRPCResultResponse' };
const ERROR_DEF: Record<string, string> = { '2025-03-26': 'JSONRPCError', '2025-06-18': 'JSONRPCError', '2025-11-25': 'JSONRPCErrorResponse' };

test('negotiation: the requested revision when served, else the newest as the counter-offer (basic/lifecycle#version-negotiation)', () => {
  assert.deepEqual(STREAMABLE_REVISIONS, ['2025-11-25', '2025-06-18', '2025-03-26']);
  assert.equal(negotiate('2025-06-18', STREAMABLE_REVISIONS), '2025-06-18');
  assert.equal(negotiate('2025-03-26', STREAMABLE_REVISIONS), '2025-03-26');
  assert.equal(negotiate('2099-01-01', STREAMABLE_REVISIONS), '2025-11-25');
  assert.equal(negotiate('2026-07-28', STREAMABLE_REVISIONS), '2025-11-25');
  assert.equal(negotiate(20250618, STREAMABLE_REVISIONS), '2025-11-25');
  assert.equal(negotiate(undefined, STREAMABLE_REVISIONS), '2025-11-25');
});

for (const rev of STREAMABLE_REVISIONS) {
  test(`${rev}: the initialize result, results and errors in the era's shape validate (basic/lifecycle#initialization, server/resources#error-handling)`, () => {
    const check = schemaOf(rev);
    const init = initializeResult(rev, DESC);
    assert.deepEqual(init, { protocolVersion: rev, capabilities: DESC.capabilities, serverInfo: DESC.serverInfo, instructions: 'Try the echo tool.' });
    check('InitializeResult', init);
    check(RESULT_DEF[rev], resultResponse(1, init));

    // Fields that exist only in 2026-07-28 are removed.
    const listed = encodeResult(
      { tools: [{ name: 'echo', inputSchema: { type: 'object' } }], resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' },
      rev,
      'tools/list',
    );
    assert.deepEqual(listed, { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
    check('ListToolsResult', listed);
    // So is the 2026-07-28 envelope's serverInfo in _meta (a 2026-07-28 upstream's; found by a
    // client-author trial, h-t1); other _meta keys stay, and a _meta left empty goes.
    const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
    const called = encodeResult({ content: [], _meta: { [SERVER_INFO]: { name: 'up', version: '1' }, 'com.example/k': 1 } }, rev, 'tools/call');
    assert.deepEqual(called._meta, { 'com.example/k': 1 });
    assert.equal('_meta' in encodeResult({ content: [], _meta: { [SERVER_INFO]: { name: 'up', version: '1' } } }, rev, 'tools/call'), false);
    const untouched = { content: [{ type: 'text', text: 'hi' }] };
    assert.equal(encodeResult(untouched, rev, 'tools/call'), untouched, 'a result with nothing to remove is passed through');

    // Resource not found is -32002 in this era, also when a 2026-07-28 upstream said -32602 for a URI.
    const missing = encodeError(new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: 'demo://nope' }));
    assert.equal(missing.code, -32002);
    check(ERROR_DEF[rev], errorResponse(2, missing));
    assert.deepEqual(encodeError(new PeerRpcError({ code: -32602, message: 'Resource not found', data: { uri: 'file:///x' } })), {
      code: -32002,
      message: 'Resource not found',
      data: { uri: 'file:///x' },
    });
    assert.deepEqual(encodeError(new PeerRpcError({ code: -32602, message: 'Unknown tool' })), { code: -32602, message: 'Unknown tool' });
    // -32021 exists only in 2026-07-28: a missing capability is reported as input the client cannot give.
    const cap = encodeError(new SwitchyardError('SWY_ERR_MODERN_CAPABILITY', { data: { requiredCapabilities: { elicitation: {}, sampling: {} } } }));
    assert.deepEqual(cap, {
      code: -32602,
      message: `${new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED').message}: client did not declare elicitation, sampling`,
    });
    check(ERROR_DEF[rev], errorResponse(3, cap));
    assert.deepEqual(encodeError(new Error('boom')), { code: -32603, message: 'Internal error' });
  });
}

/** A 2025-06-18+ tool result with every content block type, as server-everything's tools send them. */
const RICH_CALL = {
  content: [
    { type: 'text', text: 'Here are 2 links' },
    {
      type: 'resource_link',
      uri: 'demo://resource/dynamic/text/2',
      name: 'Text Resource 2',
      description: 'Resource 2: plaintext resource',
      mimeType: 'text/plain',
    },
    { type: 'resource_link', uri: 'file:///tmp/a.md', name: 'a.md', title: 'Notes', annotations: { audience: ['user'], priority: 0.5 } },
    { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
    { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
  ],
};

for (const rev of [HTTP_SSE_REVISION, ...STREAMABLE_REVISIONS]) {
  test(`${rev}: content blocks of a later revision reach the client as blocks its own schema has (2025-06-18 server/tools#resource-links, 2025-03-26 audio)`, () => {
    const check = schemaOf(rev);
    const before = JSON.stringify(RICH_CALL);
    const call = encodeResult({ ...RICH_CALL, resultType: 'complete' }, rev, 'tools/call');
    check('CallToolResult', call);
    assert.equal(JSON.stringify(RICH_CALL), before, 'the result (perhaps a cached one) is not changed in place');
    const links = rev < '2025-06-18';
    const audio = rev < '2025-03-26';
    assert.deepEqual(call.content, [
      { type: 'text', text: 'Here are 2 links' },
      links
        ? { type: 'text', text: 'Resource link: Text Resource 2 <demo://resource/dynamic/text/2> (text/plain)\nResource 2: plaintext resource' }
        : RICH_CALL.content[1],
      links ? { type: 'text', text: 'Resource link: Notes <file:///tmp/a.md>', annotations: { audience: ['user'], priority: 0.5 } } : RICH_CALL.content[2],
      audio ? { type: 'text', text: '[audio content (audio/wav) left out: protocol revision 2024-11-05 has no audio content]' } : RICH_CALL.content[3],
      RICH_CALL.content[4],
    ]);

    // A prompt message's single content block is rewritten the same way.
    const prompt = {
      messages: [
        { role: 'user', content: { type: 'text', text: 'read this' } },
        { role: 'user', content: RICH_CALL.content[1] },
      ],
    };
    const got = encodeResult(prompt, rev, 'prompts/get');
    check('GetPromptResult', got);
    assert.equal(got === prompt, !links, 'a result with nothing to rewrite is passed through');
    assert.deepEqual((got.messages as { content: unknown }[])[1].content, links ? call.content?.[1] : RICH_CALL.content[1]);

    // Structured output alone: clients before 2025-06-18 get it as JSON text too (server/tools#structured-content).
    const structured = encodeResult({ content: [], structuredContent: { temperature: 22.5, conditions: 'sunny' } }, rev, 'tools/call');
    check('CallToolResult', structured);
    assert.deepEqual(structured.content, links ? [{ type: 'text', text: '{"temperature":22.5,"conditions":"sunny"}' }] : []);
    const withText = { content: [{ type: 'text', text: '22.5 and sunny' }], structuredContent: { temperature: 22.5 } };
    assert.equal(encodeResult(withText, rev, 'tools/call'), withText, 'a result that already has a text block is passed through');

    // Server-to-client requests: audio in a sampling message toward 2024-11-05; `mode` only from 2025-11-25.
    const sampling = { messages: [{ role: 'user', content: RICH_CALL.content[3] }], maxTokens: 10 };
    const asked = encodeServerRequest(rev, 'sampling/createMessage', sampling);
    check('CreateMessageRequest', { jsonrpc: '2.0', id: 'swy-1', method: 'sampling/createMessage', params: asked });
    assert.equal(asked === sampling, !audio);
    const form = { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } };
    assert.deepEqual(
      encodeServerRequest(rev, 'elicitation/create', form),
      rev >= '2025-11-25' ? form : { message: 'Name?', requestedSchema: form.requestedSchema },
    );

    // A titled single-select field (2025-11-25) keeps its choices before 2025-11-25, as enum + enumNames.
    const colour = {
      type: 'string',
      title: 'Colour',
      default: 'r',
      oneOf: [
        { const: 'r', title: 'Red' },
        { const: 'g', title: 'Green' },
      ],
    };
    const choose = { message: 'Pick', requestedSchema: { type: 'object', properties: { colour, note: { type: 'string' } }, required: ['colour'] } };
    const sent = encodeServerRequest(rev, 'elicitation/create', choose);
    if (rev >= '2025-06-18') check('ElicitRequest', { jsonrpc: '2.0', id: 'swy-2', method: 'elicitation/create', params: sent });
    assert.deepEqual(
      sent,
      rev >= '2025-11-25'
        ? choose
        : {
            message: 'Pick',
            requestedSchema: {
              type: 'object',
              properties: {
                colour: { type: 'string', title: 'Colour', default: 'r', enum: ['r', 'g'], enumNames: ['Red', 'Green'] },
                note: { type: 'string' },
              },
              required: ['colour'],
            },
          },
    );
  });
}

test('per-revision flags: batches only in 2025-03-26, priming and elicitation mode from 2025-11-25, elicitation from 2025-06-18', () => {
  const revs = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
  assert.deepEqual(
    revs.map((v) => [
      FLAGS.batches(v),
      FLAGS.priming(v),
      FLAGS.elicitationMode(v),
      eraHasServerRequest(v, 'elicitation/create'),
      eraHasServerRequest(v, 'roots/list'),
    ]),
    [
      [false, false, false, false, true],
      [true, false, false, false, true],
      [false, false, false, true, true],
      [false, true, true, true, true],
    ],
  );
  assert.equal(eraHasServerRequest('2025-11-25', 'tools/call'), false);
});

test('a 2025-06-18 session, no transport: initialize, then client messages become core requests carrying the session’s state', async (t) => {
  const check = schemaOf('2025-06-18');
  const { deps, seen } = await sessionHarness(t, '2025-03-26');
  const initialize = {
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'ExampleClient', version: '1.0.0' } },
  };
  check('InitializeRequest', initialize);
  const { session, response } = openSession(deps, initialize, STREAMABLE_REVISIONS, null);
  assert.deepEqual(response, { jsonrpc: '2.0', id: 1, result: initializeResult('2025-06-18', deps.executor.describe()) });
  check('InitializeResult', (response as { result: unknown }).result);
  t.after(async () => session.close());

  const level = collect();
  await session.handle({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'info' } }, 'request', level.sink);
  assert.deepEqual(level.finished(), { jsonrpc: '2.0', id: 2, result: {} });

  const call = {
    jsonrpc: '2.0' as const,
    id: 3,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 2, stepMs: 0 }, _meta: { progressToken: 'p' } },
  };
  check('CallToolRequest', call);
  const out = collect();
  await session.handle(call, 'request', out.sink);
  const ctx = seen.at(-1)!;
  assert.deepEqual(
    {
      method: ctx.method,
      params: ctx.params,
      protocolVersion: ctx.protocolVersion,
      clientInfo: ctx.clientInfo,
      clientCapabilities: ctx.clientCapabilities,
      logLevel: ctx.logLevel,
      identity: ctx.identity,
      mount: ctx.mount,
      dialect: ctx.dialect,
      upstream: ctx.upstream,
      component: ctx.component,
      sessionKey: ctx.sessionKey,
      progressToken: ctx.progressToken,
    },
    {
      method: 'tools/call',
      params: call.params,
      protocolVersion: '2025-06-18',
      clientInfo: { name: 'ExampleClient', version: '1.0.0' },
      clientCapabilities: { elicitation: {} },
      logLevel: 'info',
      identity: null,
      mount: 'default',
      dialect: '2025-03-26',
      upstream: 'demo',
      component: { kind: 'tool', name: 'slow', upstream: 'demo' },
      sessionKey: session.id,
      progressToken: 'p',
    },
  );
  // Progress for the client's token, and log messages at the session's level, before the response.
  assert.deepEqual(out.sent, [
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1, total: 2, message: 'step 1 of 2', progressToken: 'p' } },
    { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'demo.slow', data: 'step 1 done' } },
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 2, total: 2, message: 'step 2 of 2', progressToken: 'p' } },
    { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'demo.slow', data: 'step 2 done' } },
  ]);
  for (const m of out.sent) check(m.method === 'notifications/progress' ? 'ProgressNotification' : 'LoggingMessageNotification', m);
  assert.deepEqual(out.finished(), { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Finished 2 steps.' }] } });
  check('CallToolResult', (out.finished() as { result: unknown }).result);

  const read = collect();
  await session.handle({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'demo://nope' } }, 'request', read.sink);
  const err = read.finished() as { error: { code: number } };
  assert.equal(err.error.code, -32002);
  check('JSONRPCError', err);

  const again = collect();
  await session.handle(initialize, 'request', again.sink);
  assert.deepEqual(again.finished(), errorResponse(1, new SwitchyardError('SWY_ERR_SESSION_ALREADY_INITIALIZED').toRpcError()));
});

test('a session’s subscriptions, requests in flight and asks come and go: after each the session is back to none, and the same id may run again', async (t) => {
  const { deps } = await sessionHarness(t, '2025-03-26');
  const initialize = {
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  };
  const { session } = openSession(deps, initialize, STREAMABLE_REVISIONS, null);
  t.after(async () => session.close());
  assert.deepEqual([session.inFlight, session.pendingAsks, session.resourceUris.size, session.changes()], [0, 0, 0, {}]);

  const sub = collect();
  await session.handle({ jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'demo://readme' } }, 'request', sub.sink);
  assert.deepEqual(sub.finished(), { jsonrpc: '2.0', id: 2, result: {} });
  assert.deepEqual([...session.resourceUris], ['demo://readme']);
  assert.deepEqual(session.changes(), { s: ['demo://readme'] });
  const unsub = collect();
  await session.handle({ jsonrpc: '2.0', id: 3, method: 'resources/unsubscribe', params: { uri: 'demo://readme' } }, 'request', unsub.sink);
  assert.deepEqual(unsub.finished(), { jsonrpc: '2.0', id: 3, result: {} });
  assert.deepEqual([session.resourceUris.size, session.changes()], [0, {}]);
  // Unsubscribing what was never subscribed changes nothing.
  await session.handle({ jsonrpc: '2.0', id: 4, method: 'resources/unsubscribe', params: { uri: 'demo://other' } }, 'request', collect().sink);
  assert.equal(session.resourceUris.size, 0);
  // Another replica's changes are taken as they are, and an empty list empties them.
  session.applyChanges({ s: ['demo://readme', 'demo://a'] });
  assert.deepEqual([...session.resourceUris].sort(), ['demo://a', 'demo://readme']);
  session.applyChanges({});
  assert.equal(session.resourceUris.size, 0);

  // A request in flight is counted while it runs, a second one with its id is refused, and the
  // id is free again once it was answered.
  const slow = { jsonrpc: '2.0' as const, id: 5, method: 'tools/call', params: { name: 'slow', arguments: { steps: 2, stepMs: 30 } } };
  const first = collect();
  const running = session.handle(slow, 'request', first.sink);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(session.inFlight, 1);
  const dup = collect();
  await session.handle(slow, 'request', dup.sink);
  assert.equal((dup.finished() as { error: { message: string } }).error.message.includes('already'), true, JSON.stringify(dup.finished()));
  await running;
  assert.equal(session.inFlight, 0);
  const again = collect();
  await session.handle(slow, 'request', again.sink);
  assert.ok('result' in (again.finished() as object), JSON.stringify(again.finished()));
  assert.equal(session.inFlight, 0);
  await session.settled(100);

  // A server-to-client request is pending until the client answers, and again until the
  // session closes under it; each time the session is left with none pending.
  const { session: rooted } = openSession(
    deps,
    { ...initialize, id: 9, params: { ...initialize.params, capabilities: { roots: {} } } },
    STREAMABLE_REVISIONS,
    null,
  );
  const ac = new AbortController();
  const out = collect();
  const asked = rooted.ask(out.sink, 'roots/list', {}, ac.signal);
  assert.equal(rooted.pendingAsks, 1);
  const sent = out.sent.at(-1) as { id: string; method: string };
  assert.equal(sent.method, 'roots/list');
  await rooted.handle({ jsonrpc: '2.0', id: sent.id, result: { roots: [] } }, 'response', collect().sink);
  assert.deepEqual(await asked, { roots: [] });
  assert.equal(rooted.pendingAsks, 0);
  const unanswered = rooted.ask(out.sink, 'roots/list', {}, ac.signal);
  assert.equal(rooted.pendingAsks, 1);
  rooted.close();
  await assert.rejects(unanswered, (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_CANCELLED');
  assert.equal(rooted.pendingAsks, 0);
});

test('a request cancelled while it waits for the client’s answer (elicitation) gets no response, and nothing is logged as an internal fault', async (t) => {
  const { deps } = await sessionHarness(t, '2025-03-26');
  const errors: unknown[] = [];
  const logged = { ...deps, log: { ...deps.log, error: (...a: unknown[]) => void errors.push(a) } };
  const initialize = {
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'c', version: '1' } },
  };
  const { session } = openSession(logged, initialize, STREAMABLE_REVISIONS, null);
  t.after(async () => session.close());
  const out = collect();
  const running = session.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', arguments: {} } }, 'request', out.sink);
  for (let i = 0; i < 100 && !out.sent.some((m) => 'method' in m && m.method === 'elicitation/create'); i++) await new Promise((r) => setTimeout(r, 10));
  const asked = out.sent.find((m) => 'method' in m && m.method === 'elicitation/create') as { id: string } | undefined;
  assert.ok(asked, JSON.stringify(out.sent));
  await session.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }, 'notification', collect().sink);
  await running;
  // basic/utilities/cancellation: no response; the client is told its elicitation is moot.
  assert.equal(out.finished(), null);
  assert.deepEqual(out.sent.at(-1), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: asked.id, reason: 'request cancelled' } });
  assert.deepEqual(errors, []);
  assert.equal(session.inFlight, 0);
  assert.equal(session.pendingAsks, 0);
});
