// Server-to-client requests that cross eras: what a client of each revision is sent, and what
// the upstream gets back. The upstream is test/fixtures/scripted-server.mjs over stdio, whose
// `script` tool sends the requests and notifications its arguments name.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, openHttpSseSession, openSse, parseSse, post, send } from '../helpers/http.js';

/** The scripted stdio server, at initialize-era revision `rev` or `modern` (2026-07-28). */
function scripted(rev = '2025-11-25'): string {
  return `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/scripted-server.mjs')}" ${rev}`;
}

/**
 * The default limits with a short shutdown grace, ms: a test that ends on an unanswered
 * input_required round leaves its upstream call held, in flight, and the teardown's close would
 * wait the default 5 s grace for its retry. Nothing here tests shutdown.
 */
const LIMITS = { ...DEFAULT_LIMITS, shutdownGraceMs: 200 };

const violations = (records: Array<Record<string, unknown>>) => records.filter((r) => r.msg === 'strict: schema violation').map((r) => r.strict);

type Message = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/**
 * Calls `script` with `args` in the 2025-era session `h`; answers every server request it is sent
 * with `answer` (when a test fails, the call still ends). Resolves with every message of the
 * call's stream (SSE, or the JSON reply alone), the response last.
 */
async function callInSession(url: string, h: Record<string, string>, args: Record<string, unknown>, answer: Record<string, unknown>): Promise<Message[]> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'script', arguments: args, _meta: { progressToken: 'p1' } } });
  const sse = await openSse(url, 'POST', h, body);
  const out: Message[] = [];
  if (String(sse.headers['content-type']).startsWith('application/json')) {
    // Nothing came before the response: a plain JSON reply.
    await sse.ended;
    return [JSON.parse(sse.raw()) as Message];
  }
  try {
    for (;;) {
      const ev = await sse.next(20_000);
      if (!ev.data) continue;
      const m = JSON.parse(ev.data) as Message;
      out.push(m);
      if (m.method !== undefined && m.id !== undefined) await post(url, { jsonrpc: '2.0', id: m.id, result: answer }, h);
      if (m.method === undefined && m.id === 1) return out;
    }
  } finally {
    sse.close();
  }
}

/** What the scripted server got back for its requests (the text of the call's result). */
function upstreamGot(messages: Message[]): Array<{ result?: unknown; error?: { code: number } }> {
  const res = messages.at(-1)?.result as { content: Array<{ text: string }> };
  return JSON.parse(res.content[0].text) as Array<{ result?: unknown; error?: { code: number } }>;
}

const URL_ELICITATION = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/auth', elicitationId: 'e-1' } };

test('URL-mode elicitation reaches only clients that declared elicitation.url; others are not sent it and the upstream gets -32602', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const steps = { steps: [{ ask: URL_ELICITATION }] };
  // 2025-06-18 has no URL mode, and `elicitation: {}` means form only (2025-11-25 client/elicitation#capabilities).
  for (const [rev, caps] of [
    ['2025-06-18', { elicitation: {} }],
    ['2025-11-25', { elicitation: {} }],
    ['2025-11-25', { elicitation: { form: {} } }],
  ] as const) {
    const h = await initSession(gw.url, rev, caps);
    const messages = await callInSession(gw.url, h, steps, { action: 'accept' });
    assert.deepEqual(
      messages.filter((m) => m.method === 'elicitation/create'),
      [],
      `${rev} ${JSON.stringify(caps)}: no URL elicitation sent`,
    );
    const got = upstreamGot(messages);
    assert.equal(got[0].error?.code, -32602, `${rev} ${JSON.stringify(caps)}: the upstream is told the client cannot answer`);
  }
  // A client that declared URL mode gets it as the upstream sent it, and its answer goes back.
  const h = await initSession(gw.url, '2025-11-25', { elicitation: { url: {} } });
  const messages = await callInSession(gw.url, h, steps, { action: 'accept' });
  const asked = messages.find((m) => m.method === 'elicitation/create');
  assert.deepEqual(asked?.params, URL_ELICITATION.params);
  assert.deepEqual(upstreamGot(messages), [{ result: { action: 'accept' } }]);
  assert.deepEqual(violations(gw.records), []);
});

test('URL-mode elicitation toward a 2026-07-28 client that declared form mode only: 400/-32021 naming elicitation.url, no round', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const call = { name: 'script', arguments: { steps: [{ ask: URL_ELICITATION }] } };
  const r = await post(gw.url, modernBody(1, 'tools/call', call, { elicitation: {} }), modernHeaders('tools/call', 'script'));
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.json, {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { elicitation: { url: {} } } } },
  });
  // Form mode toward a client that declared URL mode only names form.
  const form = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } };
  const f = await post(
    gw.url,
    modernBody(3, 'tools/call', { name: 'script', arguments: { steps: [{ ask: form }] } }, { elicitation: { url: {} } }),
    modernHeaders('tools/call', 'script'),
  );
  assert.equal(f.status, 400, f.text);
  assert.deepEqual((f.json as { error: { data: unknown } }).error.data, { requiredCapabilities: { elicitation: { form: {} } } });
  // Declared: the round carries it.
  const ok = await post(gw.url, modernBody(2, 'tools/call', call, { elicitation: { url: {} } }), modernHeaders('tools/call', 'script'));
  const result = (ok.json as { result: { resultType: string; inputRequests: Record<string, { method: string; params: unknown }> } }).result;
  assert.equal(result.resultType, 'input_required', ok.text);
  assert.deepEqual(Object.values(result.inputRequests), [URL_ELICITATION]);
  assert.deepEqual(violations(gw.records), []);
});

const TOOL_SAMPLING = {
  method: 'sampling/createMessage',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'Weather in Paris?' } }],
    maxTokens: 50,
    tools: [{ name: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
    toolChoice: { mode: 'auto' },
  },
};

test('tool-enabled sampling reaches only clients that declared sampling.tools; others are not sent it and the upstream gets -32602', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const steps = { steps: [{ ask: TOOL_SAMPLING }] };
  const answer = { role: 'assistant', content: { type: 'text', text: 'Sunny' }, model: 'm' };
  for (const [rev, caps] of [
    ['2025-06-18', { sampling: {} }],
    ['2025-11-25', { sampling: {} }],
  ] as const) {
    const h = await initSession(gw.url, rev, caps);
    const messages = await callInSession(gw.url, h, steps, answer);
    assert.deepEqual(
      messages.filter((m) => m.method === 'sampling/createMessage'),
      [],
      `${rev}: no tool-enabled sampling sent`,
    );
    assert.equal(upstreamGot(messages)[0].error?.code, -32602, `${rev}: the upstream is told the client cannot answer`);
  }
  const h = await initSession(gw.url, '2025-11-25', { sampling: { tools: {} } });
  const messages = await callInSession(gw.url, h, steps, answer);
  assert.deepEqual(messages.find((m) => m.method === 'sampling/createMessage')?.params, TOOL_SAMPLING.params);
  assert.deepEqual(upstreamGot(messages), [{ result: answer }]);
  // 2026-07-28: -32021 naming sampling.tools, no round.
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'script', arguments: steps }, { sampling: {} }), modernHeaders('tools/call', 'script'));
  assert.equal(r.status, 400, r.text);
  assert.deepEqual((r.json as { error: { code: number; data: unknown } }).error, {
    code: -32021,
    message: 'Missing required client capability',
    data: { requiredCapabilities: { sampling: { tools: {} } } },
  });
  assert.deepEqual(violations(gw.records), []);
});

test('a 2026-07-28 upstream’s URL-mode elicitation reaches a 2025-11-25 client with the elicitationId that revision requires', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted('modern') });
  const ask = { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://example.com/auth' } };
  const h = await initSession(gw.url, '2025-11-25', { elicitation: { url: {} } });
  const messages = await callInSession(gw.url, h, { inputRequests: { signin: ask } }, { action: 'accept' });
  const asked = messages.find((m) => m.method === 'elicitation/create');
  const { elicitationId, ...rest } = asked?.params ?? {};
  assert.equal(typeof elicitationId, 'string');
  assert.notEqual(elicitationId, '');
  assert.deepEqual(rest, ask.params);
  const result = messages.at(-1)?.result as { content: Array<{ text: string }> };
  assert.deepEqual(JSON.parse(result.content[0].text), { signin: { action: 'accept' } });
  assert.deepEqual(violations(gw.records), []);
});

test('sampling messages whose content is a list of blocks (2025-11-25) reach older clients as one message per block, in order', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const text = (s: string) => ({ type: 'text', text: s });
  const ask = {
    method: 'sampling/createMessage',
    params: {
      messages: [
        { role: 'user', content: [text('Here is a picture'), { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] },
        { role: 'assistant', content: text('Nice.') },
        { role: 'user', content: [text('Describe it')] },
      ],
      maxTokens: 50,
    },
  };
  const answer = { role: 'assistant', content: text('A dot'), model: 'm' };
  const sent: Record<string, unknown> = {};
  for (const rev of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    const h = await initSession(gw.url, rev, { sampling: {} });
    const messages = await callInSession(gw.url, h, { steps: [{ ask }] }, answer);
    sent[rev] = (messages.find((m) => m.method === 'sampling/createMessage')?.params as { messages: unknown } | undefined)?.messages;
    assert.deepEqual(upstreamGot(messages), [{ result: answer }], rev);
  }
  const split = [
    { role: 'user', content: text('Here is a picture') },
    { role: 'user', content: { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } },
    { role: 'assistant', content: text('Nice.') },
    { role: 'user', content: text('Describe it') },
  ];
  assert.deepEqual(sent['2025-03-26'], split);
  assert.deepEqual(sent['2025-06-18'], split);
  assert.deepEqual(sent['2025-11-25'], ask.params.messages);
  assert.deepEqual(violations(gw.records), []);
});

test('a log message that follows a server request into a 2026-07-28 input_required round keeps its logger', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const ask = { method: 'roots/list', params: {}, noWait: true };
  const log = { method: 'notifications/message', params: { level: 'warning', logger: 'fs', data: 'slow disk' } };
  const body = modernBody(1, 'tools/call', { name: 'script', arguments: { steps: [{ ask }, { notify: log }] } }, { roots: {} });
  (body.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/logLevel'] = 'debug';
  const r = await post(gw.url, body, modernHeaders('tools/call', 'script'));
  assert.equal(r.status, 200, r.text);
  const messages = parseSse(r.text).map((e) => JSON.parse(e.data) as Message);
  assert.deepEqual(
    messages.filter((m) => m.method === 'notifications/message').map((m) => m.params),
    [log.params],
  );
  assert.equal((messages.at(-1)?.result as { resultType?: string }).resultType, 'input_required');
  assert.deepEqual(violations(gw.records), []);
});

test('an elicitation form with a required multi-select field (2025-11-25) is not sent to older clients: the upstream gets -32602; an optional one is left out of the form', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const colours = { type: 'array', items: { type: 'string', enum: ['red', 'green'] } };
  const ask = {
    method: 'elicitation/create',
    params: {
      message: 'Pick colours',
      requestedSchema: { type: 'object', properties: { colours }, required: ['colours'] },
    },
  };
  // Optional: the form goes without it (the client answers the other fields).
  const optional = {
    method: 'elicitation/create',
    params: { message: 'Name, and colours if you like', requestedSchema: { type: 'object', properties: { name: { type: 'string' }, colours } } },
  };
  const older = await initSession(gw.url, '2025-06-18', { elicitation: {} });
  const named = { action: 'accept', content: { name: 'Ada' } };
  const sent = await callInSession(gw.url, older, { steps: [{ ask: optional }] }, named);
  assert.deepEqual(sent.find((m) => m.method === 'elicitation/create')?.params, {
    message: 'Name, and colours if you like',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
  });
  assert.deepEqual(upstreamGot(sent), [{ result: named }]);

  const answer = { action: 'accept', content: { colours: ['red'] } };
  const h = await initSession(gw.url, '2025-06-18', { elicitation: {} });
  const messages = await callInSession(gw.url, h, { steps: [{ ask }] }, answer);
  assert.deepEqual(
    messages.filter((m) => m.method === 'elicitation/create'),
    [],
  );
  assert.equal(upstreamGot(messages)[0].error?.code, -32602);
  // 2025-11-25 has multi-select: sent as it came.
  const newer = await initSession(gw.url, '2025-11-25', { elicitation: {} });
  const got = await callInSession(gw.url, newer, { steps: [{ ask }] }, answer);
  assert.deepEqual(got.find((m) => m.method === 'elicitation/create')?.params, ask.params);
  assert.deepEqual(upstreamGot(got), [{ result: answer }]);
  assert.deepEqual(violations(gw.records), []);
});

/** Reads `sse` until `pred` holds for one message or `ms` pass; resolves with every message read. */
async function readFor(sse: Awaited<ReturnType<typeof openSse>>, ms: number, pred: (m: Message) => boolean = () => false): Promise<Message[]> {
  const out: Message[] = [];
  const until = Date.now() + ms;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) return out;
    let ev;
    try {
      ev = await sse.next(left);
    } catch {
      return out;
    }
    if (!ev.data) continue;
    const m = JSON.parse(ev.data) as Message;
    out.push(m);
    if (pred(m)) return out;
  }
}

const completes = (messages: Message[]) => messages.filter((m) => m.method === 'notifications/elicitation/complete').map((m) => m.params);

test('notifications/elicitation/complete reaches the one 2025-11-25 session that got the URL elicitation, during its call or after it; 2026-07-28 clients get none', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const caps = { elicitation: { url: {} } };
  const a = await initSession(gw.url, '2025-11-25', caps);
  const b = await initSession(gw.url, '2025-11-25', caps);
  const getA = await openSse(gw.url, 'GET', { ...a, accept: 'text/event-stream' });
  const getB = await openSse(gw.url, 'GET', { ...b, accept: 'text/event-stream' });
  t.after(() => {
    getA.close();
    getB.close();
  });
  const complete = (elicitationId: string) => ({ notify: { method: 'notifications/elicitation/complete', params: { elicitationId } } });
  // During the call: on the call's own stream.
  const during = await callInSession(gw.url, a, { steps: [{ ask: URL_ELICITATION }, complete('e-1')] }, { action: 'accept' });
  assert.deepEqual(completes(during), [{ elicitationId: 'e-1' }]);
  // After the call: a completion the server sends later (here during another session's call)
  // reaches A's GET stream, and neither B's call nor B's GET stream. A completion told once is
  // not told again (e-1), and an unknown one reaches nobody.
  const e2 = { ...URL_ELICITATION, params: { ...URL_ELICITATION.params, elicitationId: 'e-2' } };
  await callInSession(gw.url, a, { steps: [{ ask: e2 }] }, { action: 'accept' });
  const other = await callInSession(gw.url, b, { steps: [complete('e-2'), complete('e-1'), complete('e-unknown'), { sleep: 100 }] }, {});
  assert.deepEqual(completes(other), []);
  assert.deepEqual(completes(await readFor(getA, 2_000, (m) => m.method === 'notifications/elicitation/complete')), [{ elicitationId: 'e-2' }]);
  assert.deepEqual(completes(await readFor(getB, 300)), []);
  // A client that declined started no interaction: its completion goes nowhere.
  const e3 = { ...URL_ELICITATION, params: { ...URL_ELICITATION.params, elicitationId: 'e-3' } };
  const declined = await callInSession(gw.url, a, { steps: [{ ask: e3 }, complete('e-3')] }, { action: 'decline' });
  assert.deepEqual(completes(declined), []);
  // 2026-07-28 has no such notification (its URL elicitation has no elicitationId; the client
  // learns the outcome by retrying): nothing carries it to the held call's client.
  const body = modernBody(1, 'tools/call', { name: 'script', arguments: { steps: [{ ask: { ...e2, noWait: true } }, complete('e-2')] } }, caps);
  const r = await post(gw.url, body, modernHeaders('tools/call', 'script'));
  assert.equal(r.status, 200, r.text);
  assert.doesNotMatch(r.text, /elicitation\/complete/);
  assert.equal((r.json as { result?: { resultType?: string } } | undefined)?.result?.resultType, 'input_required', r.text);
  assert.deepEqual(completes(await readFor(getA, 300)), []);
  assert.deepEqual(violations(gw.records), []);
});

const FORM = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } };
const ROOTS = { method: 'roots/list', params: {} };

/**
 * Reads a call's messages up to its response without answering server requests, except that a
 * request the client was told is cancelled is answered all the same (a client racing the
 * cancellation), with `answer` on `to` (`h` its headers).
 */
async function racingClient(
  sse: Awaited<ReturnType<typeof openSse>>,
  to: string,
  h: Record<string, string>,
  answer: Record<string, unknown>,
): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const ev = await sse.next(20_000);
    if (!ev.data || ev.event === 'endpoint') continue;
    const m = JSON.parse(ev.data) as Message;
    out.push(m);
    if (m.method === 'notifications/cancelled') await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: m.params?.requestId, result: answer }), h);
    if (m.method === undefined && m.id === 1) return out;
  }
}

test('the upstream’s notifications/cancelled for its own server request reaches the client with the id it saw, and no answer goes upstream (2025 session, HTTP+SSE, 2026-07-28 round)', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted(), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const cancelled = (asked: Message | undefined, messages: Message[]) => {
    assert.equal(typeof asked?.id, 'string', JSON.stringify(messages));
    assert.deepEqual(
      messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId),
      [asked?.id],
      JSON.stringify(messages),
    );
    // With the reason the upstream gave, not one of ours.
    assert.deepEqual(
      messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.reason),
      ['not needed'],
    );
  };
  // 2025-11-25 session: the elicitation, then its cancellation on the call's stream; the answer
  // the client sends all the same is not passed on.
  const h = await initSession(gw.url, '2025-11-25', { elicitation: {} });
  const steps = (ask: unknown) => ({
    steps: [{ ask: { ...(ask as object), noWait: true } }, { sleep: 200 }, { cancel: { reason: 'not needed' } }, { sleep: 300 }],
  });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'script', arguments: steps(FORM) } });
  const messages = await racingClient(await openSse(gw.url, 'POST', h, body), gw.url, h, { action: 'accept', content: { n: 'x' } });
  cancelled(
    messages.find((m) => m.method === 'elicitation/create'),
    messages,
  );
  const firstAsk = upstreamGot(messages)[0] as { cancelled?: string };
  assert.match(String(firstAsk.cancelled), /^ask-/);
  // HTTP+SSE (2024-11-05): the same on its one stream.
  const legacy = await openHttpSseSession(t, new URL(gw.url).origin, { roots: {} });
  const hs = { 'content-type': 'application/json' };
  await send(legacy.to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'script', arguments: steps(ROOTS) } }), hs);
  const onSse = await racingClient(legacy.sse, legacy.to, hs, { roots: [] });
  cancelled(
    onSse.find((m) => m.method === 'roots/list'),
    onSse,
  );
  // 2026-07-28: a request cancelled before its round is sent is not in it ...
  const modern = (id: number, args: unknown, extra: Record<string, unknown> = {}) =>
    post(
      gw.url,
      modernBody(id, 'tools/call', { name: 'script', arguments: args, ...extra }, { roots: {}, elicitation: {} }),
      modernHeaders('tools/call', 'script'),
    );
  const early = await modern(1, { steps: [{ ask: { ...ROOTS, noWait: true } }, { cancel: {} }, { sleep: 100 }] });
  const earlyResult = (early.json as { result: { resultType?: string; content?: Array<{ text: string }> } }).result;
  assert.notEqual(earlyResult.resultType, 'input_required', early.text);
  assert.match(earlyResult.content?.[0].text ?? '', /^\[\{"cancelled":"ask-\d+"\}\]$/);
  // ... and one cancelled while the call is held leaves the round: the retry needs not answer it
  // (an answer given all the same is ignored), and the call goes on.
  const held = await modern(2, {
    steps: [{ ask: { ...ROOTS, noWait: true } }, { ask: { ...FORM, noWait: true } }, { sleep: 300 }, { cancel: {} }, { sleep: 50 }],
  });
  const round = (held.json as { result: { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string } }).result;
  assert.equal(round.resultType, 'input_required', held.text);
  assert.equal(Object.keys(round.inputRequests).length, 2);
  await new Promise((resolve) => setTimeout(resolve, 600));
  const rootsKey = Object.keys(round.inputRequests).find((k) => round.inputRequests[k].method === 'roots/list')!;
  const retry = await modern(
    3,
    { steps: [{ ask: { ...ROOTS, noWait: true } }, { ask: { ...FORM, noWait: true } }, { sleep: 300 }, { cancel: {} }, { sleep: 50 }] },
    { inputResponses: { [rootsKey]: { roots: [] } }, requestState: round.requestState },
  );
  const done = (retry.json as { result: { resultType?: string; content?: Array<{ text: string }> } }).result;
  assert.notEqual(done.resultType, 'input_required', retry.text);
  const got = JSON.parse(done.content?.[0].text ?? 'null') as Array<Record<string, unknown>>;
  assert.deepEqual(got[0], { result: { roots: [] } });
  assert.match(String(got[1].cancelled), /^ask-/);
  // Nothing was answered upstream for any cancelled request.
  assert.equal(got.length, 2, JSON.stringify(got));
  assert.deepEqual(violations(gw.records), []);
});

test('a task-augmented elicitation or sampling from an upstream reaches clients without its task param, and the upstream gets the plain answer (the gateway declares no tasks upstream)', async (t) => {
  const gw = await gateway(t, { strict: 'log', limits: LIMITS, stdio: scripted() });
  const form = { message: 'Name?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } };
  const sampling = { messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 10 };
  const task = { ttl: 60_000 };
  const steps = {
    steps: [{ ask: { method: 'elicitation/create', params: { ...form, task } } }, { ask: { method: 'sampling/createMessage', params: { ...sampling, task } } }],
  };
  const answer = { action: 'accept', content: { n: 'Ada' } };
  // A 2025-11-25 client that serves task-augmented elicitation and sampling itself.
  const caps = { elicitation: {}, sampling: {}, tasks: { requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } } };
  const h = await initSession(gw.url, '2025-11-25', caps);
  const messages = await callInSession(gw.url, h, steps, answer);
  assert.deepEqual(
    messages.filter((m) => m.id !== undefined && m.method !== undefined).map((m) => [m.method, m.params]),
    [
      ['elicitation/create', form],
      ['sampling/createMessage', sampling],
    ],
  );
  assert.deepEqual(upstreamGot(messages), [{ result: answer }, { result: answer }]);
  // A 2026-07-28 round: its inputRequests carry no task either.
  const r = await post(
    gw.url,
    modernBody(1, 'tools/call', { name: 'script', arguments: { steps: steps.steps.slice(0, 1) } }, { elicitation: {} }),
    modernHeaders('tools/call', 'script'),
  );
  const result = (r.json as { result: { resultType: string; inputRequests: Record<string, unknown> } }).result;
  assert.equal(result.resultType, 'input_required', r.text);
  assert.deepEqual(Object.values(result.inputRequests), [{ method: 'elicitation/create', params: form }]);
  assert.deepEqual(violations(gw.records), []);
});
