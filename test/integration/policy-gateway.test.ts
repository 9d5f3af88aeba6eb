// Policy, curation, rate limits and argument validation built from the config and wired into the
// real gateway: aggregate prefixes, renamed and hidden tools, batches, 429 where HTTP can say it,
// in-band where the reply travels on a stream, the validator's tool list renewed on list_changed.
// See 2025-11-25 server/tools; 2025-03-26 basic/transports (batches); RFC 6585 §4; RFC 9110 §10.2.3.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import diagnostics from 'node:diagnostics_channel';
import { CHANNELS, type UpstreamCallMessage } from '../../src/core/diagnostics.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig, modernCall, openSession, sessionHeaders } from '../helpers/identity.js';
import { openSse, post } from '../helpers/http.js';

const NO_ADD_FOR_BOB = {
  default: 'allow',
  rules: [{ name: 'no-add-for-bob', effect: 'deny', when: "principal.sub == 'bob' && component.kind == 'tool' && component.name == 'add'" }],
};
const DENIED_ADD = { code: -32010, message: 'Forbidden by policy: tool add', data: { kind: 'tool', name: 'add' } };
const namesOf = (r: { json: unknown }) => ((r.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((t) => t.name);

async function twoPrincipals(t: { after(fn: () => Promise<void>): void }, raw: Record<string, unknown>) {
  const as = await startAuthServer(t, { machines: ['alice', 'bob'] });
  const gw = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer } }, ...raw });
  const tokens = async (url: string) => ({
    alice: `Bearer ${await as.clientCredentialsToken(url, undefined, 'alice')}`,
    bob: `Bearer ${await as.clientCredentialsToken(url, undefined, 'bob')}`,
  });
  return { as, gw, tokens };
}

test('a tool denied to bob is refused through the aggregate prefix and absent from his aggregate list', async (t) => {
  const { gw, tokens } = await twoPrincipals(t, { policy: NO_ADD_FOR_BOB, upstreams: { demo: { transport: 'embedded' } }, aggregate: {} });
  const agg = gw.urls[1];
  const { alice, bob } = await tokens(agg);
  const bobs = namesOf(await modernCall(agg, 1, 'tools/list', {}, bob));
  assert.deepEqual(bobs, ['demo__echo', 'demo__slow', 'demo__ask', 'demo__lookup', 'demo__touch']);
  assert.ok(namesOf(await modernCall(agg, 2, 'tools/list', {}, alice)).includes('demo__add'));
  const denied = await modernCall(agg, 3, 'tools/call', { name: 'demo__add', arguments: { a: 1, b: 2 } }, bob);
  assert.equal(denied.status, 200);
  assert.deepEqual(denied.json, { jsonrpc: '2.0', id: 3, error: DENIED_ADD });
  const ok = await modernCall(agg, 4, 'tools/call', { name: 'demo__add', arguments: { a: 1, b: 2 } }, alice);
  assert.deepEqual((ok.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: '3' }]);
  // The rule saw the member's own name on the aggregate mount.
  assert.deepEqual(
    gw.records.filter((r) => r.msg === 'policy decision' && r.decision === 'deny').map((r) => r.component),
    [{ kind: 'tool', name: 'add', upstream: 'demo' }],
  );
});

test('curation: a renamed tool answers only to its new name, a hidden one to none, on its mount and through the aggregate', async (t) => {
  const gw = await gatewayFromConfig(t, {
    upstreams: {
      demo: { transport: 'embedded', tools: { exclude: ['slow', 'touch'], rename: { add: 'sum' }, describe: { sum: 'x', add: 'Adds two numbers.' } } },
    },
    aggregate: {},
  });
  const [own, agg] = gw.urls;
  const list = await modernCall(own, 1, 'tools/list', {});
  assert.deepEqual(namesOf(list), ['echo', 'sum', 'ask', 'lookup']);
  const sum = (list.json as { result: { tools: Array<{ name: string; description: string }> } }).result.tools.find((x) => x.name === 'sum');
  assert.equal(sum?.description, 'Adds two numbers.');
  const unknown = (name: string) => ({ code: -32602, message: `Invalid params: unknown tool: ${name}` });
  for (const [url, prefix] of [
    [own, ''],
    [agg, 'demo__'],
  ]) {
    const viaOld = await modernCall(url, 2, 'tools/call', { name: `${prefix}add`, arguments: { a: 1, b: 2 } });
    assert.deepEqual((viaOld.json as { error: unknown }).error, unknown('add'), url);
    const hidden = await modernCall(url, 3, 'tools/call', { name: `${prefix}slow`, arguments: {} });
    assert.deepEqual((hidden.json as { error: unknown }).error, unknown('slow'), url);
    const viaNew = await modernCall(url, 4, 'tools/call', { name: `${prefix}sum`, arguments: { a: 1, b: 2 } });
    assert.deepEqual((viaNew.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: '3' }], url);
  }
  assert.deepEqual(namesOf(await modernCall(agg, 5, 'tools/list', {})), ['demo__echo', 'demo__sum', 'demo__ask', 'demo__lookup']);
});

test('every element of a 2025-03-26 batch is authorized on its own: the denied call is refused, the others answered', async (t) => {
  const { gw, tokens } = await twoPrincipals(t, { policy: NO_ADD_FOR_BOB, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const { bob } = await tokens(url);
  const sid = await openSession(url, bob);
  const batch = [
    { jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'echo', arguments: { message: 'before' } } },
    { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
    { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: {} },
  ];
  const r = await post(url, batch, sessionHeaders(sid, bob));
  assert.equal(r.status, 200);
  const byId = new Map((r.json as Array<{ id: string }>).map((m) => [m.id, m]));
  assert.deepEqual(byId.get('a'), { jsonrpc: '2.0', id: 'a', error: DENIED_ADD });
  assert.deepEqual(byId.get('e'), { jsonrpc: '2.0', id: 'e', result: { content: [{ type: 'text', text: 'Echo: before' }] } });
  assert.ok(!(byId.get('l') as unknown as { result: { tools: Array<{ name: string }> } }).result.tools.some((x) => x.name === 'add'));
  assert.equal(gw.records.filter((x) => x.msg === 'policy decision').length, 2);
});

test('hideDenied: a denied tool gets exactly the error of a tool that does not exist', async (t) => {
  const { gw, tokens } = await twoPrincipals(t, { policy: { ...NO_ADD_FOR_BOB, hideDenied: true }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const { bob } = await tokens(url);
  const denied = await modernCall(url, 1, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, bob);
  const absent = await modernCall(url, 1, 'tools/call', { name: 'nosuch', arguments: {} }, bob);
  assert.deepEqual(denied.json, { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params: unknown tool: add' } });
  assert.deepEqual(absent.json, { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params: unknown tool: nosuch' } });
});

test('over a rate limit: 429 with Retry-After on a 2026 POST and a 2025 POST; in-band in a batch and on the HTTP+SSE stream', async (t) => {
  const gw = await gatewayFromConfig(t, {
    dialects: { legacySse: true },
    rateLimits: [{ name: 'echoes', per: 'principal+tool', ratePerSec: 0.001, burst: 1, tools: ['echo'] }],
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const echo = { name: 'echo', arguments: { message: 'x' } };
  assert.equal((await modernCall(url, 1, 'tools/call', echo)).status, 200);
  const r26 = await modernCall(url, 2, 'tools/call', echo);
  assert.equal(r26.status, 429);
  // One token per 1,000 s: the wait is that, less the few ms of refill since the first call;
  // Retry-After is the wait in whole seconds, rounded up (999 once the calls were over a second apart).
  const waitMs = (r26.json as { error: { data: { retryAfterMs: number } } }).error.data.retryAfterMs;
  assert.ok(waitMs > 990_000 && waitMs <= 1_000_000, String(waitMs));
  const waitSec = Math.ceil(waitMs / 1000);
  assert.equal(r26.headers['retry-after'], String(waitSec));
  assert.deepEqual(r26.json, {
    jsonrpc: '2.0',
    id: 2,
    error: {
      code: -32011,
      message: `Too many requests: rate limit exceeded: echoes; retry after ${waitSec} s`,
      data: { limit: 'echoes', retryAfterMs: waitMs },
    },
  });

  const sid = await openSession(url);
  const r25 = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: echo }, sessionHeaders(sid));
  assert.equal(r25.status, 429);
  const r25Error = (r25.json as { error: { code: number; data: { retryAfterMs: number } } }).error;
  assert.equal(r25Error.code, -32011);
  assert.ok(r25Error.data.retryAfterMs > 990_000 && r25Error.data.retryAfterMs <= 1_000_000, String(r25Error.data.retryAfterMs));
  assert.equal(r25.headers['retry-after'], String(Math.ceil(r25Error.data.retryAfterMs / 1000)));
  // Lists are not limited per tool.
  assert.equal((await post(url, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, sessionHeaders(sid))).status, 200);

  const batch = await post(url, [{ jsonrpc: '2.0', id: 5, method: 'tools/call', params: echo }], sessionHeaders(sid));
  assert.equal(batch.status, 200);
  assert.equal((batch.json as Array<{ error: { code: number } }>)[0].error.code, -32011);

  const origin = new URL(url).origin;
  const sse = await openSse(`${origin}/demo/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const target = new URL((await sse.next()).data, `${origin}/demo/sse`).href;
  const h = { 'content-type': 'application/json' };
  await post(
    target,
    { jsonrpc: '2.0', id: 6, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
    h,
  );
  await sse.next();
  assert.equal((await post(target, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: echo }, h)).status, 202);
  const onStream = JSON.parse((await sse.next()).data) as { id: number; error: { code: number } };
  assert.deepEqual([onStream.id, onStream.error.code], [7, -32011]);
});

test("arguments are checked against the tool's inputSchema before the upstream is called; validateArguments: false lets them through", async (t) => {
  const gw = await gatewayFromConfig(t, { upstreams: { on: { transport: 'embedded' }, off: { transport: 'embedded', validateArguments: false } } });
  const [on, off] = gw.urls;
  const bad = { name: 'add', arguments: { a: 'one', b: 2 } };
  const refused = await modernCall(on, 1, 'tools/call', bad);
  assert.equal(refused.status, 200);
  assert.deepEqual((refused.json as { error: { code: number; message: string } }).error.code, -32602);
  assert.equal(
    (refused.json as { error: { message: string } }).error.message,
    "Invalid params: arguments do not match the tool's inputSchema: add: /a must be number (keyword type)",
  );
  const passed = await modernCall(off, 2, 'tools/call', bad);
  // The demo upstream's own answer, not the gateway's.
  assert.notEqual((passed.json as { error?: { message: string } }).error?.message, (refused.json as { error: { message: string } }).error.message);
});

test("the validator's tool list is read once, and again after the upstream's tools/list_changed", async (t) => {
  const fixture = path.join(REPO_ROOT, 'test/fixtures/conformance-server/server.mjs');
  const gw = await gatewayFromConfig(t, { upstreams: { fx: { command: process.execPath, args: [fixture, 'stdio'] } } });
  const url = gw.urls[0];
  let lists = 0;
  const onCall = (m: unknown) => {
    if ((m as UpstreamCallMessage).ctx.method === 'tools/list') lists++;
  };
  diagnostics.subscribe(CHANNELS.upstreamCallStart, onCall);
  t.after(() => diagnostics.unsubscribe(CHANNELS.upstreamCallStart, onCall));
  // A 2025 session: its calls read no tool annotations of their own, so every tools/list upstream is the validator's.
  const sid = await openSession(url);
  const call = (id: number, name: string) => post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }, sessionHeaders(sid));

  assert.equal((await call(1, 'test_simple_text')).status, 200);
  assert.equal((await call(2, 'test_simple_text')).status, 200);
  assert.equal(lists, 1);

  const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' });
  t.after(() => get.close());
  assert.equal((await call(3, 'test_trigger_tool_change')).status, 200);
  // The session's stream and the validator hear the same notification; once it is here the list is stale.
  for (;;) {
    const ev = await get.next();
    if (ev.data && (JSON.parse(ev.data) as { method?: string }).method === 'notifications/tools/list_changed') break;
  }
  assert.equal((await call(4, 'test_simple_text')).status, 200);
  assert.equal(lists, 2);
});

test('completion of a denied prompt is refused and the prompt is not listed; a resource bob may not read sends him no updates', async (t) => {
  const { gw, tokens } = await twoPrincipals(t, {
    policy: {
      default: 'allow',
      rules: [
        { name: 'no-greeting-for-bob', effect: 'deny', when: "principal.sub == 'bob' && component.kind == 'prompt' && component.name == 'greeting'" },
        {
          name: 'no-readme-for-bob',
          effect: 'deny',
          when: "principal.sub == 'bob' && request.method == 'resources/read' && component.name == 'demo://readme'",
        },
      ],
    },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const { alice, bob } = await tokens(url);
  const prompts = await modernCall(url, 1, 'prompts/list', {}, bob);
  assert.deepEqual((prompts.json as { result: { prompts: unknown[] } }).result.prompts, []);
  const complete = await modernCall(
    url,
    2,
    'completion/complete',
    { ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'name', value: 'A' } },
    bob,
  );
  assert.deepEqual((complete.json as { error: unknown }).error, {
    code: -32010,
    message: 'Forbidden by policy: prompt greeting',
    data: { kind: 'prompt', name: 'greeting' },
  });

  // Both subscribe (subscribing is allowed); the update reaches only the one who may read the resource.
  const streams = [];
  for (const who of [alice, bob]) {
    const sid = await openSession(url, who);
    const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26', authorization: who });
    t.after(() => get.close());
    for (const uri of ['demo://readme', 'demo://other']) {
      const sub = await post(url, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri } }, sessionHeaders(sid, who));
      assert.deepEqual(sub.json, { jsonrpc: '2.0', id: 3, result: {} });
    }
    streams.push({ sid, get, who });
  }
  const [a, b] = streams;
  await post(url, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'touch', arguments: { uri: 'demo://readme' } } }, sessionHeaders(b.sid, bob));
  await post(url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'touch', arguments: { uri: 'demo://other' } } }, sessionHeaders(b.sid, bob));
  const seen = async (s: typeof a) => {
    for (;;) {
      const ev = await s.get.next();
      if (ev.data) return JSON.parse(ev.data) as { method: string; params: { uri: string } };
    }
  };
  const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
  assert.deepEqual(await seen(a), updated('demo://readme'));
  assert.deepEqual(await seen(a), updated('demo://other'));
  // Bob's stream is in order too: the first update he gets is the second one.
  assert.deepEqual(await seen(b), updated('demo://other'));
});

test('an upstream with its own policy and rate limits uses them instead of the top-level ones', async (t) => {
  const gw = await gatewayFromConfig(t, {
    policy: { default: 'deny' },
    rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 0.001, burst: 1 }],
    upstreams: {
      strict: { transport: 'embedded' },
      open: { transport: 'embedded', policy: { default: 'allow' }, rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 0.001, burst: 3 }] },
    },
  });
  const [strict, open] = gw.urls;
  const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } });
  const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
  const s1 = await openSession(strict);
  // Denied before the rate limit: it costs no token.
  assert.deepEqual((await post(strict, echo(1), sessionHeaders(s1))).json, {
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32010, message: 'Forbidden by policy: tool echo', data: { kind: 'tool', name: 'echo' } },
  });
  assert.equal((await post(strict, list(2), sessionHeaders(s1))).status, 200);
  assert.equal((await post(strict, list(3), sessionHeaders(s1))).status, 429);
  // The upstream's own limit has its own buckets, three tokens, though the name is the same.
  const s2 = await openSession(open);
  for (let i = 0; i < 3; i++) assert.equal((await post(open, echo(4 + i), sessionHeaders(s2))).status, 200, String(i));
  assert.equal((await post(open, echo(7), sessionHeaders(s2))).status, 429);
});
