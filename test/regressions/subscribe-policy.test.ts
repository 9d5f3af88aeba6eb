// Policy and curation decide resources/subscribe (2025 sessions, HTTP+SSE) and the
// resourceSubscriptions of a 2026-07-28 subscriptions/listen, as docs/policy.md says: a denied
// subscription is refused like a denied resources/read (an audit line each), and a listen
// acknowledges only the URIs it honours (2026-07-28 basic/patterns/subscriptions).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gatewayFromConfig, modernCall, openSession, sessionHeaders, type ConfigGateway } from '../helpers/identity.js';
import { modernBody, modernHeaders, nextSseMessage, openSse, post } from '../helpers/http.js';

const KEYS = { alice: 'alice-key_0123456789abcdefghijklmnopqrstuv', bob: 'bob-key_0123456789abcdefghijklmnopqrstuvwx' };
const AUTH = {
  apiKeys: Object.entries(KEYS).map(([name, key]) => ({ name, sha256: createHash('sha256').update(key).digest('hex') })),
};
const ALICE = `Bearer ${KEYS.alice}`;
const BOB = `Bearer ${KEYS.bob}`;
/** The embedded demo's item `alpha` (served by its template `demo://items/{id}`) and its readme. */
const ALPHA = 'demo://items/alpha';
const README = 'demo://readme';
const NO_ALPHA_SUBSCRIPTION_FOR_BOB = {
  default: 'allow',
  rules: [
    {
      name: 'no-alpha-subscription-for-bob',
      effect: 'deny',
      when: `principal.sub == "bob" && request.method == "resources/subscribe" && component.name == "${ALPHA}"`,
    },
  ],
};
const DENIED_ALPHA = { code: -32010, message: `Forbidden by policy: resource ${ALPHA}`, data: { kind: 'resource', name: ALPHA } };
const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });

function subscribeDecisions(gw: ConfigGateway): unknown[] {
  return gw.records
    .filter((r) => r.msg === 'policy decision' && r.method === 'resources/subscribe')
    .map(({ level, principal, component, method, decision, rule }) => ({ level, principal, component, method, decision, rule }));
}

const audit = (who: string, uri: string, decision: string, upstream = 'demo') => ({
  level: 30,
  principal: { sub: who, iss: 'switchyard:api-key' },
  component: { kind: 'resource', name: uri, upstream },
  method: 'resources/subscribe',
  decision,
  rule: decision === 'deny' ? 'no-alpha-subscription-for-bob' : null,
});

/** Alice touches `uris` in order through the demo's `touch` tool (a 2026-07-28 call). */
async function touch(url: string, ...uris: string[]): Promise<void> {
  for (const [i, uri] of uris.entries()) {
    const r = await modernCall(url, 100 + i, 'tools/call', { name: 'touch', arguments: { uri } }, ALICE);
    assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Touched ${uri}` }]);
  }
}

test('2025 session: a subscription the policy denies is refused with -32010 and an audit line, and its updates never arrive', async (t) => {
  const gw = await gatewayFromConfig(t, { auth: AUTH, policy: NO_ALPHA_SUBSCRIPTION_FOR_BOB, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const sid = await openSession(url, BOB);
  const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26', authorization: BOB });
  t.after(() => get.close());
  const subscribe = (id: number, uri: string) => post(url, { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }, sessionHeaders(sid, BOB));

  const denied = await subscribe(1, ALPHA);
  assert.equal(denied.status, 200);
  assert.deepEqual(denied.json, { jsonrpc: '2.0', id: 1, error: DENIED_ALPHA });
  const allowed = await subscribe(2, README);
  assert.equal(allowed.status, 200);
  assert.deepEqual(allowed.json, { jsonrpc: '2.0', id: 2, result: {} });
  assert.deepEqual(subscribeDecisions(gw), [audit('bob', ALPHA, 'deny'), audit('bob', README, 'allow')]);
  // The rule names the subscription only: bob may still read the resource.
  const read = await post(url, { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: ALPHA } }, sessionHeaders(sid, BOB));
  assert.equal((read.json as { result: { contents: Array<{ uri: string }> } }).result.contents[0].uri, ALPHA);

  // Alice may subscribe to it.
  const aliceSid = await openSession(url, ALICE);
  const alices = await post(url, { jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: { uri: ALPHA } }, sessionHeaders(aliceSid, ALICE));
  assert.deepEqual(alices.json, { jsonrpc: '2.0', id: 4, result: {} });

  await touch(url, ALPHA, README);
  // In order on bob's stream: the first update he gets is the readme's.
  assert.deepEqual(await nextSseMessage(get), updated(README));
});

test('HTTP+SSE (2024-11-05): a denied subscription is answered on the stream with -32010', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: AUTH,
    dialects: { legacySse: true },
    policy: NO_ALPHA_SUBSCRIPTION_FOR_BOB,
    upstreams: { demo: { transport: 'embedded' } },
  });
  const origin = new URL(gw.urls[0]).origin;
  const sse = await openSse(`${origin}/demo/sse`, 'GET', { accept: 'text/event-stream', authorization: BOB });
  t.after(() => sse.close());
  const target = new URL((await sse.next()).data, `${origin}/demo/sse`).href;
  const h = { 'content-type': 'application/json', authorization: BOB };
  const init = { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'x', version: '1' } };
  assert.equal((await post(target, { jsonrpc: '2.0', id: 1, method: 'initialize', params: init }, h)).status, 202);
  await nextSseMessage(sse);
  await post(target, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);

  assert.equal((await post(target, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: ALPHA } }, h)).status, 202);
  assert.deepEqual(await nextSseMessage(sse), { jsonrpc: '2.0', id: 2, error: DENIED_ALPHA });
  assert.equal((await post(target, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: README } }, h)).status, 202);
  assert.deepEqual(await nextSseMessage(sse), { jsonrpc: '2.0', id: 3, result: {} });
  assert.deepEqual(subscribeDecisions(gw), [audit('bob', ALPHA, 'deny'), audit('bob', README, 'allow')]);

  await touch(gw.urls[0], ALPHA, README);
  assert.deepEqual(await nextSseMessage(sse), updated(README));
});

test('2026-07-28 subscriptions/listen: a denied URI is left out of the acknowledgement and its updates never arrive', async (t) => {
  const gw = await gatewayFromConfig(t, { auth: AUTH, policy: NO_ALPHA_SUBSCRIPTION_FOR_BOB, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const listen = await openSse(
    url,
    'POST',
    { ...modernHeaders('subscriptions/listen'), authorization: BOB },
    JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { resourcesListChanged: true, resourceSubscriptions: [ALPHA, README] } })),
  );
  t.after(() => listen.close());
  assert.equal(listen.status, 200);
  const tag = { 'io.modelcontextprotocol/subscriptionId': 'L' };
  assert.deepEqual(await nextSseMessage(listen), {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: tag, notifications: { resourcesListChanged: true, resourceSubscriptions: [README] } },
  });
  assert.deepEqual(subscribeDecisions(gw), [audit('bob', ALPHA, 'deny'), audit('bob', README, 'allow')]);

  await touch(url, ALPHA, README);
  assert.deepEqual(await nextSseMessage(listen), { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: README, _meta: tag } });
});

test('through the aggregate: the member decides on its own URI, and the denial names it as a resources/read denial would', async (t) => {
  const gw = await gatewayFromConfig(t, { auth: AUTH, policy: NO_ALPHA_SUBSCRIPTION_FOR_BOB, upstreams: { demo: { transport: 'embedded' } }, aggregate: {} });
  const agg = gw.urls[1];
  const sid = await openSession(agg, BOB);
  const subscribe = (id: number, uri: string) => post(agg, { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }, sessionHeaders(sid, BOB));
  assert.deepEqual((await subscribe(1, `switchyard://demo/${ALPHA}`)).json, { jsonrpc: '2.0', id: 1, error: DENIED_ALPHA });
  assert.deepEqual((await subscribe(2, `switchyard://demo/${README}`)).json, { jsonrpc: '2.0', id: 2, result: {} });
  assert.deepEqual(subscribeDecisions(gw), [audit('bob', ALPHA, 'deny'), audit('bob', README, 'allow')]);
});

test('hideDenied: a denied subscription gets the error of an unknown resource (-32002 toward a 2025 session)', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: AUTH,
    policy: { ...NO_ALPHA_SUBSCRIPTION_FOR_BOB, hideDenied: true },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const sid = await openSession(url, BOB);
  const r = await post(url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: ALPHA } }, sessionHeaders(sid, BOB));
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32002, message: `Resource not found: ${ALPHA}`, data: { uri: ALPHA } } });
  assert.deepEqual(subscribeDecisions(gw), [audit('bob', ALPHA, 'deny')]);
});

test('curation: a URI that resources.exclude hides cannot be subscribed to, in a 2025 session or a listen', async (t) => {
  const gw = await gatewayFromConfig(t, { upstreams: { demo: { transport: 'embedded', resources: { exclude: ['demo://items/*'] } } } });
  const url = gw.urls[0];
  const sid = await openSession(url);
  const r = await post(url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: ALPHA } }, sessionHeaders(sid));
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32002, message: `Resource not found: ${ALPHA}`, data: { uri: ALPHA } } });
  const ok = await post(url, { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: README } }, sessionHeaders(sid));
  assert.deepEqual(ok.json, { jsonrpc: '2.0', id: 2, result: {} });

  const listen = await openSse(
    url,
    'POST',
    modernHeaders('subscriptions/listen'),
    JSON.stringify(modernBody('L', 'subscriptions/listen', { notifications: { resourceSubscriptions: [ALPHA, README] } })),
  );
  t.after(() => listen.close());
  assert.deepEqual(await nextSseMessage(listen), {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'L' }, notifications: { resourceSubscriptions: [README] } },
  });
});

test('a subscription decision takes no rate-limit token: it is not an upstream call', async (t) => {
  const gw = await gatewayFromConfig(t, {
    rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 0.001, burst: 1 }],
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const sid = await openSession(url);
  for (const [id, uri] of [ALPHA, README, ALPHA].entries()) {
    const r = await post(url, { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } }, sessionHeaders(sid));
    assert.deepEqual(r.json, { jsonrpc: '2.0', id, result: {} });
  }
  assert.equal((await post(url, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, sessionHeaders(sid))).status, 200);
  assert.equal((await post(url, { jsonrpc: '2.0', id: 10, method: 'tools/list' }, sessionHeaders(sid))).status, 429);
});
