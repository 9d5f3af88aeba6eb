// The one routing table for upstream messages that name no request: every row, with exact decisions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallQueue } from '../../src/core/calls.js';
import type { RequestContext } from '../../src/core/request.js';
import { CallTable, progressOf, routeUnlabelled, UNROUTABLE } from '../../src/upstreams/routing.js';

const ctx = (method: string, logLevel?: string): RequestContext => ({
  method,
  params: {},
  protocolVersion: '2025-11-25',
  clientInfo: undefined,
  clientCapabilities: {},
  logLevel,
  identity: null,
  signal: new AbortController().signal,
  progressToken: undefined,
  onProgress: () => {},
  onLog: () => {},
  ask: undefined,
});
const clean = (p: Record<string, unknown>) => {
  const { _meta: _m, ...rest } = p;
  void _m;
  return rest;
};

test('list changes and resource updates go to subscribers, cleaned by the era client', () => {
  const calls = new CallTable();
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'a://b', _meta: { x: 1 } } }, calls, clean), {
    to: 'subscribers',
    notification: { method: 'notifications/resources/updated', params: { uri: 'a://b' } },
  });
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }, calls, clean), {
    to: 'subscribers',
    notification: { method: 'notifications/tools/list_changed', params: {} },
  });
});

test('progress goes to the call whose id is the token; an unknown token to nobody (basic/utilities/progress)', () => {
  const calls = new CallTable();
  const mine = { queue: new CallQueue(), ctx: ctx('tools/call') };
  calls.add(7, mine);
  const params = { progressToken: 7, progress: 1, total: 2 };
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', method: 'notifications/progress', params }, calls, clean), {
    to: 'call',
    call: mine,
    event: { kind: 'progress', params },
  });
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 8, progress: 1 } }, calls, clean), {
    to: 'nobody',
    method: 'notifications/progress',
  });
  assert.deepEqual(progressOf({ progressToken: 7, progress: 1, total: 2, message: 'm', extra: true }), { progress: 1, total: 2, message: 'm' });
});

test('a log message goes to the one request in flight when that call asked for logs, never guessed', () => {
  const calls = new CallTable();
  const logging = { queue: new CallQueue(), ctx: ctx('tools/call', 'info') };
  calls.add(1, logging);
  const m = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } };
  assert.deepEqual(routeUnlabelled(m, calls, clean), { to: 'call', call: logging, event: { kind: 'log', params: m.params } });
  // A request of the gateway's own in flight may have made the server write it: nobody's.
  assert.deepEqual(routeUnlabelled(m, calls, clean, false, undefined, 1), { to: 'nobody', method: 'notifications/message' });
  // Another call in flight, though it asked for no logs, may be the one the server logged for.
  calls.add(2, { queue: new CallQueue(), ctx: ctx('tools/list') });
  assert.deepEqual(routeUnlabelled(m, calls, clean), { to: 'nobody', method: 'notifications/message' });
  calls.add(3, { queue: new CallQueue(), ctx: ctx('prompts/get', 'debug') });
  assert.deepEqual(routeUnlabelled(m, calls, clean), { to: 'nobody', method: 'notifications/message' });
  // The one call in flight that asked for none gets none.
  const quiet = new CallTable();
  quiet.add(1, { queue: new CallQueue(), ctx: ctx('tools/call') });
  assert.deepEqual(routeUnlabelled(m, quiet, clean), { to: 'nobody', method: 'notifications/message' });
});

test("a log message no call owns goes to the session's subscribers on a connection of one client session, to nobody on a shared one", () => {
  const calls = new CallTable();
  const m = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x', _meta: { y: 1 } } };
  assert.deepEqual(routeUnlabelled(m, calls, clean), { to: 'nobody', method: 'notifications/message' });
  assert.deepEqual(routeUnlabelled(m, calls, clean, false), { to: 'nobody', method: 'notifications/message' });
  assert.deepEqual(routeUnlabelled(m, calls, clean, true), {
    to: 'subscribers',
    notification: { method: 'notifications/message', params: { level: 'info', data: 'x' } },
  });
  // A call that asked for logs still takes it first, as on any connection, when it is the one in flight.
  const logging = { queue: new CallQueue(), ctx: ctx('tools/call', 'info') };
  calls.add(1, logging);
  assert.deepEqual(routeUnlabelled(m, calls, clean, true), { to: 'call', call: logging, event: { kind: 'log', params: m.params } });
  // With another call of the session in flight, the session's own stream carries it.
  calls.add(2, { queue: new CallQueue(), ctx: ctx('tools/list') });
  assert.deepEqual(routeUnlabelled(m, calls, clean, true), {
    to: 'subscribers',
    notification: { method: 'notifications/message', params: { level: 'info', data: 'x' } },
  });
});

test('ping is answered; a server request goes to the one request in flight when it is an input-capable call, else -32603', () => {
  const calls = new CallTable();
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', id: 'p', method: 'ping' }, calls, clean), { to: 'answer', id: 'p', answer: { result: {} } });
  const ask = { jsonrpc: '2.0', id: 5, method: 'elicitation/create', params: { message: 'Name?' } };
  const refused = { to: 'answer', id: 5, answer: { error: { code: -32603, message: 'Switchyard cannot route this request to a client' } } };
  assert.deepEqual(routeUnlabelled(ask, calls, clean), { to: 'answer', id: 5, answer: { error: UNROUTABLE } });
  const tool = { queue: new CallQueue(), ctx: ctx('tools/call') };
  calls.add(1, tool);
  assert.deepEqual(routeUnlabelled(ask, calls, clean), {
    to: 'call',
    call: tool,
    event: { kind: 'request', id: 5, method: 'elicitation/create', params: { message: 'Name?' } },
  });
  // One of the gateway's own requests in flight (a subscription it opened for another client) may have asked.
  assert.deepEqual(routeUnlabelled(ask, calls, clean, false, undefined, 1), refused);
  // Another client's request of another kind in flight may have asked: the sole input-capable call is not guessed.
  calls.add(2, { queue: new CallQueue(), ctx: ctx('completion/complete') });
  assert.deepEqual(routeUnlabelled(ask, calls, clean), refused);
  calls.add(3, { queue: new CallQueue(), ctx: ctx('resources/read') });
  assert.deepEqual(routeUnlabelled(ask, calls, clean), refused);
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', method: 'notifications/elicitation/complete' }, calls, clean), {
    to: 'nobody',
    method: 'notifications/elicitation/complete',
  });
});

test('a roots/list, sampling or elicitation no call can own goes to the connection’s own client session; any other, and any on a shared connection, is refused (client/roots, client/sampling, client/elicitation)', () => {
  const calls = new CallTable();
  const roots = { jsonrpc: '2.0', id: 'r1', method: 'roots/list' };
  assert.deepEqual(routeUnlabelled(roots, calls, clean, true), { to: 'session', id: 'r1', method: 'roots/list', params: {} });
  assert.deepEqual(routeUnlabelled(roots, calls, clean), { to: 'answer', id: 'r1', answer: { error: UNROUTABLE } });
  for (const method of ['elicitation/create', 'sampling/createMessage']) {
    const params = { message: 'Name?' };
    assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', id: 2, method, params }, calls, clean, true), { to: 'session', id: 2, method, params });
    assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', id: 2, method, params }, calls, clean), { to: 'answer', id: 2, answer: { error: UNROUTABLE } });
  }
  // A method that is no client feature is refused even on a connection of one client session.
  assert.deepEqual(routeUnlabelled({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, calls, clean, true), {
    to: 'answer',
    id: 3,
    answer: { error: UNROUTABLE },
  });
  // With two calls that could take input (one client session's), still that session, on its own stream.
  calls.add(1, { queue: new CallQueue(), ctx: ctx('tools/call') });
  calls.add(2, { queue: new CallQueue(), ctx: ctx('prompts/get') });
  assert.deepEqual(routeUnlabelled(roots, calls, clean, true), { to: 'session', id: 'r1', method: 'roots/list', params: {} });
});

test('a request sent outside a call: open once per id, taken back by the upstream’s cancellation or the connection’s end, answered only while open', () => {
  const calls = new CallTable();
  const a = new AbortController();
  assert.equal(calls.openOutside('r1', a), true);
  assert.equal(calls.openOutside('r1', new AbortController()), false);
  // 1 and "1" are different ids (JSON-RPC 2.0 §4).
  const one = new AbortController();
  assert.equal(calls.openOutside(1, one), true);
  assert.equal(calls.openOutside('1', new AbortController()), true);
  assert.equal(calls.closeOutside(1, one), true);
  const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'r1', reason: 'gone' } };
  assert.deepEqual(routeUnlabelled(cancelled, calls, clean, true), { to: 'done' });
  assert.equal(a.signal.aborted, true);
  assert.equal((a.signal.reason as { reason?: string }).reason, 'gone');
  // Taken back: its late answer goes nowhere, and a second cancellation names nothing.
  assert.equal(calls.closeOutside('r1', a), false);
  assert.deepEqual(routeUnlabelled(cancelled, calls, clean, true), { to: 'nobody', method: 'notifications/cancelled' });
  const b = new AbortController();
  calls.openOutside(2, b);
  calls.failAll(new Error('session ended'));
  assert.equal(b.signal.aborted, true);
  assert.equal(calls.closeOutside(2, b), false);
  const c = new AbortController();
  calls.openOutside(3, c);
  assert.equal(calls.closeOutside(3, c), true);
  assert.equal(calls.closeOutside(3, c), false);
});
