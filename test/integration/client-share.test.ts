// `maxSessionsPerClient` and `maxSubscriptionsPerClient`: one client (a remote address, behind a
// trusted proxy the forwarded one; the verified principal on a mount with `auth`) cannot take
// every 2025 session, HTTP+SSE session or listen stream of a mount. The one past its share is
// 429 SWY_ERR_SESSION_CLIENT_LIMIT / SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT with Retry-After, another
// client still opens, and a place comes back when its session or stream ends. Found by an
// attacker trial: one address opened all 10,000 sessions in about 7 s and every other client got
// 503 until the idle expiry. Real gateway on 127.0.0.1 port 0; 127.0.0.2 is a second address on
// Linux loopback (docs/config.md, Limits; RFC 6585 §4).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request, type Dispatcher } from 'undici';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { ClientShares, clientKey } from '../../src/core/client-share.js';
import { hostIdentity } from '../../src/index.js';
import { startCli } from '../helpers/cli.js';
import { connect } from '../helpers/clients.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { gatewayFromConfig, sessionHeaders } from '../helpers/identity.js';

const ALPHA = 'sy_live_alpha_0123456789abcdefghijklmnop';
const BETA = 'sy_live_beta_0123456789abcdefghijklmnopq';

/** A client on its own source address (127.0.0.1 or 127.0.0.2), closed in teardown. */
function from(t: { after(fn: () => Promise<void>): void }, localAddress: string): Agent {
  const agent = new Agent({ localAddress });
  t.after(() => agent.destroy());
  return agent;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

async function answer(res: Dispatcher.ResponseData): Promise<Answer> {
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

const INIT = {
  jsonrpc: '2.0',
  id: 7,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'share', version: '1' } },
};

/** A 2025 initialize from `agent` (with `headers` added). */
async function initialize(url: string, agent: Agent, headers: Record<string, string> = {}): Promise<Answer> {
  return answer(await request(url, { method: 'POST', dispatcher: agent, body: JSON.stringify(INIT), headers: { ...sessionHeaders(), ...headers } }));
}

function sessionRefusal(id: unknown, limit: number): unknown {
  return { jsonrpc: '2.0', id, error: { code: -32000, message: `Too many sessions: this client holds too many sessions: limit ${limit} on this mount` } };
}

/** Retries `open` until it answers 200 (a place given back by the gateway's sweep), at most `ms`. */
async function eventually(open: () => Promise<Answer>, ms: number): Promise<Answer> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await open();
    if (r.status === 200 || Date.now() > until) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

test('2025 sessions: one address opens its share, the next is 429; another address still opens; DELETE gives the place back', async (t) => {
  const gw = await gatewayFromConfig(t, { limits: { maxSessionsPerClient: 2 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const one = from(t, '127.0.0.1');
  const two = from(t, '127.0.0.2');
  const first = await initialize(url, one);
  const second = await initialize(url, one);
  assert.deepEqual([first.status, second.status], [200, 200]);
  const over = await initialize(url, one);
  assert.equal(over.status, 429);
  assert.equal(over.headers['retry-after'], '1');
  assert.equal(over.headers['mcp-session-id'], undefined);
  assert.deepEqual(over.json, sessionRefusal(7, 2));
  // Another address has its own share.
  assert.equal((await initialize(url, two)).status, 200);
  // DELETE ends a session and gives its place back.
  const sid = first.headers['mcp-session-id'] as string;
  const del = await request(url, { method: 'DELETE', dispatcher: one, headers: { 'mcp-session-id': sid } });
  await del.body.dump();
  assert.equal(del.statusCode, 200);
  assert.equal((await initialize(url, one)).status, 200);
  assert.equal((await initialize(url, one)).status, 429);
});

test("2025 sessions: an initialize refused at maxSessions takes none of its client's places", async (t) => {
  const gw = await gatewayFromConfig(t, { limits: { maxSessions: 2, maxSessionsPerClient: 2 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const one = from(t, '127.0.0.1');
  const two = from(t, '127.0.0.2');
  const other = await initialize(url, two);
  assert.equal((await initialize(url, one)).status, 200);
  // Every place of the mount is taken: 503 for a client below its share, with the catalogue's body.
  const full = await initialize(url, one);
  assert.equal(full.status, 503);
  assert.deepEqual(full.json, { jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'Too many sessions' } });
  const del = await request(url, { method: 'DELETE', dispatcher: two, headers: { 'mcp-session-id': other.headers['mcp-session-id'] as string } });
  await del.body.dump();
  // The refused attempt kept nothing: the client holds one session, and opens its second.
  assert.equal((await initialize(url, one)).status, 200);
  assert.equal((await initialize(url, one)).status, 429);
});

test('2025 sessions: an expired session gives its place back', async (t) => {
  const gw = await gatewayFromConfig(t, { limits: { maxSessionsPerClient: 1, sessionIdleMs: 300 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const one = from(t, '127.0.0.1');
  assert.equal((await initialize(url, one)).status, 200);
  assert.equal((await initialize(url, one)).status, 429);
  // The sweep (every second at this idle time) ends the idle session; then the client opens again.
  assert.equal((await eventually(() => initialize(url, one), 10_000)).status, 200);
});

test('2025 sessions behind a trusted proxy: each forwarded client has its own share; untrusted X-Forwarded-For is ignored', async (t) => {
  const trusted = await gatewayFromConfig(t, {
    trustProxy: ['127.0.0.1'],
    limits: { maxSessionsPerClient: 1 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const proxy = from(t, '127.0.0.1');
  const a = { 'x-forwarded-for': '203.0.113.1' };
  assert.equal((await initialize(trusted.urls[0], proxy, a)).status, 200);
  assert.equal((await initialize(trusted.urls[0], proxy, a)).status, 429);
  assert.equal((await initialize(trusted.urls[0], proxy, { 'x-forwarded-for': '203.0.113.2' })).status, 200);
  // A peer that is not trusted cannot choose its client address: its X-Forwarded-For counts for nothing.
  const plain = await gatewayFromConfig(t, { limits: { maxSessionsPerClient: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  assert.equal((await initialize(plain.urls[0], proxy, a)).status, 200);
  assert.equal((await initialize(plain.urls[0], proxy, { 'x-forwarded-for': '203.0.113.2' })).status, 429);
});

// Found by h-mutants: the test above checks an untrusted X-Forwarded-For only without
// `trustProxy` (where the address is the peer's by a shortcut); with a proxy list, a peer not on
// it choosing its client address (escaping its share by naming new addresses) was not checked here.
test('2025 sessions with trustProxy set: a peer not on the list cannot choose its client address; the listed proxy can', async (t) => {
  const gw = await gatewayFromConfig(t, {
    trustProxy: ['127.0.0.2'],
    limits: { maxSessionsPerClient: 1 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const direct = from(t, '127.0.0.1');
  const proxy = from(t, '127.0.0.2');
  assert.equal((await initialize(url, direct, { 'x-forwarded-for': '203.0.113.1' })).status, 200);
  const spoofed = await initialize(url, direct, { 'x-forwarded-for': '203.0.113.2' });
  assert.deepEqual([spoofed.status, spoofed.json], [429, sessionRefusal(7, 1)]);
  assert.equal((await initialize(url, proxy, { 'x-forwarded-for': '203.0.113.1' })).status, 200);
  assert.equal((await initialize(url, proxy, { 'x-forwarded-for': '203.0.113.2' })).status, 200);
  assert.equal((await initialize(url, proxy, { 'x-forwarded-for': '203.0.113.2' })).status, 429);
});

test('2025 sessions on a mount with auth: the share is the principal, not the address', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: {
      apiKeys: [
        { name: 'alpha', sha256: hashApiKey(ALPHA) },
        { name: 'beta', sha256: hashApiKey(BETA) },
      ],
    },
    limits: { maxSessionsPerClient: 1 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const url = gw.urls[0];
  const one = from(t, '127.0.0.1');
  const two = from(t, '127.0.0.2');
  assert.equal((await initialize(url, one, { authorization: `Bearer ${ALPHA}` })).status, 200);
  // The same principal from another address is the same client.
  const over = await initialize(url, two, { authorization: `Bearer ${ALPHA}` });
  assert.equal(over.status, 429);
  assert.deepEqual(over.json, sessionRefusal(7, 1));
  // Another principal from the same address is another client.
  assert.equal((await initialize(url, one, { authorization: `Bearer ${BETA}` })).status, 200);
});

/** Opens an HTTP+SSE session's stream from `agent`: the status, and the open response to close. */
async function openStream(sseUrl: string, agent: Agent): Promise<{ status: number; res: Dispatcher.ResponseData; json?: unknown; headers: Answer['headers'] }> {
  const res = await request(sseUrl, { method: 'GET', dispatcher: agent, headers: { accept: 'text/event-stream' } });
  if (res.statusCode !== 200) {
    const a = await answer(res);
    return { status: a.status, res, json: a.json, headers: a.headers };
  }
  return { status: 200, res, headers: res.headers };
}

test('HTTP+SSE sessions: one address holds its share of streams; closing a stream gives its place back', async (t) => {
  const gw = await gatewayFromConfig(t, { dialects: { legacySse: true }, limits: { maxSessionsPerClient: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  // The mount's HTTP+SSE stream is beside its MCP path.
  const sseUrl = gw.urls[0].replace(/mcp$/, 'sse');
  const one = from(t, '127.0.0.1');
  const two = from(t, '127.0.0.2');
  const held = await openStream(sseUrl, one);
  assert.equal(held.status, 200);
  const over = await openStream(sseUrl, one);
  assert.equal(over.status, 429);
  assert.equal(over.headers['retry-after'], '1');
  assert.deepEqual(over.json, sessionRefusal(null, 1));
  const other = await openStream(sseUrl, two);
  assert.equal(other.status, 200);
  other.res.body.destroy();
  // Closing the stream ends the session (once the gateway sees the close).
  held.res.body.destroy();
  const again = await eventually(async () => {
    const r = await openStream(sseUrl, one);
    if (r.status === 200) t.after(() => void r.res.body.destroy());
    return { status: r.status, headers: r.headers, json: r.json };
  }, 5_000);
  assert.equal(again.status, 200);
});

// Found by h-mutants: an off-by-one in the HTTP+SSE door's maxSessions check (`>` for `>=`) let
// one stream more than the bound open, and no test saw it; the 2025 door's bound is pinned above.
test('HTTP+SSE sessions: at maxSessions a stream from a client below its share is 503 with Retry-After; a closed stream frees its place', async (t) => {
  const gw = await gatewayFromConfig(t, {
    dialects: { legacySse: true },
    limits: { maxSessions: 2, maxSessionsPerClient: 2 },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const sseUrl = gw.urls[0].replace(/mcp$/, 'sse');
  const one = from(t, '127.0.0.1');
  const two = from(t, '127.0.0.2');
  const first = await openStream(sseUrl, one);
  const second = await openStream(sseUrl, two);
  assert.deepEqual([first.status, second.status], [200, 200]);
  const full = await openStream(sseUrl, one);
  assert.equal(full.status, 503);
  assert.equal(full.headers['retry-after'], '1');
  assert.deepEqual(full.json, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Too many sessions' } });
  second.res.body.destroy();
  const again = await eventually(async () => {
    const r = await openStream(sseUrl, one);
    if (r.status === 200) t.after(() => void r.res.body.destroy());
    return { status: r.status, headers: r.headers, json: r.json };
  }, 5_000);
  assert.equal(again.status, 200);
  first.res.body.destroy();
});

/** Opens a 2026-07-28 listen from `agent` and keeps its stream open (closed in teardown or by the caller). */
async function listen(
  url: string,
  agent: Agent,
  id: number,
): Promise<{ status: number; res: Dispatcher.ResponseData; json?: unknown; headers: Answer['headers'] }> {
  const body = modernBody(id, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
  const res = await request(url, { method: 'POST', dispatcher: agent, body: JSON.stringify(body), headers: modernHeaders('subscriptions/listen') });
  if (!String(res.headers['content-type']).startsWith('text/event-stream')) {
    const a = await answer(res);
    return { status: a.status, res, json: a.json, headers: a.headers };
  }
  return { status: res.statusCode, res, headers: res.headers };
}

test('listen streams: one address holds its share; the next listen is 429; another address still listens; closing gives the place back', async (t) => {
  const gw = await gatewayFromConfig(t, { limits: { maxSubscriptionsPerClient: 2 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const one = from(t, '127.0.0.1');
  const two = from(t, '127.0.0.2');
  const first = await listen(url, one, 1);
  const second = await listen(url, one, 2);
  assert.deepEqual([first.status, second.status], [200, 200]);
  t.after(() => void second.res.body.destroy());
  const over = await listen(url, one, 3);
  assert.equal(over.status, 429);
  assert.equal(over.headers['retry-after'], '1');
  assert.deepEqual(over.json, {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32000, message: 'Too many subscriptions: this client holds too many listen streams: limit 2 on this mount' },
  });
  const other = await listen(url, two, 4);
  assert.equal(other.status, 200);
  other.res.body.destroy();
  first.res.body.destroy();
  const again = await eventually(async () => {
    const r = await listen(url, one, 5);
    if (r.status === 200) t.after(() => void r.res.body.destroy());
    return { status: r.status, headers: r.headers, json: r.json };
  }, 5_000);
  assert.equal(again.status, 200);
});

test('official v1 Streamable HTTP client: a second session past the share fails to connect with the catalogue error', async (t) => {
  const gw = await gatewayFromConfig(t, { limits: { maxSessionsPerClient: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  const first = await connect('v1-streamable', gw.urls[0]);
  t.after(() => first.close());
  await assert.rejects(connect('v1-streamable', gw.urls[0]), (err: Error & { code?: number }) => {
    assert.equal(err.code, 429);
    assert.match(err.message, /Too many sessions: this client holds too many sessions: limit 1 on this mount/);
    return true;
  });
  assert.ok((await first.listTools()).tools.length > 0);
});

test('official v1 HTTP+SSE client: a second stream past the share is refused with 429; closing the first lets it connect', async (t) => {
  const gw = await gatewayFromConfig(t, { dialects: { legacySse: true }, limits: { maxSessionsPerClient: 1 }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0].replace(/mcp$/, 'sse');
  const first = await connect('v1-sse-2024', url);
  await assert.rejects(connect('v1-sse-2024', url), /429/);
  await first.close();
  const until = Date.now() + 5_000;
  let second;
  while (!second) {
    try {
      second = await connect('v1-sse-2024', url);
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  assert.ok((await second.listTools()).tools.length > 0);
  await second.close();
});

test('the CLI sets both shares with --limit NAME=N', async (t) => {
  const run = await startCli(t, ['--no-admin', '--limit', 'maxSessionsPerClient=1', '--limit', 'maxSubscriptionsPerClient=1']);
  const one = from(t, '127.0.0.1');
  assert.equal((await initialize(run.url, one)).status, 200);
  assert.equal((await initialize(run.url, one)).status, 429);
  const held = await listen(run.url, one, 1);
  assert.equal(held.status, 200);
  t.after(() => void held.res.body.destroy());
  assert.equal((await listen(run.url, one, 2)).status, 429);
});

test('the per-client count keeps an entry only while its client holds a place', () => {
  const shares = new ClientShares(2);
  assert.equal(shares.take('a:10.0.0.1'), true);
  assert.equal(shares.take('a:10.0.0.1'), true);
  assert.equal(shares.take('a:10.0.0.1'), false);
  assert.equal(shares.take(undefined), true);
  assert.equal(shares.clients, 1);
  shares.release('a:10.0.0.1');
  shares.release('a:10.0.0.1');
  shares.release(undefined);
  assert.equal(shares.clients, 0);
  assert.equal(shares.holding('a:10.0.0.1'), 0);
});

test('clientKey: the principal when verified, else the address (IPv4-mapped folded); the stdio client is no one', () => {
  const alice = hostIdentity('alice');
  assert.match(clientKey(alice, '10.0.0.1') ?? '', /^p:/);
  assert.equal(clientKey(alice, '10.0.0.1'), clientKey(alice, '10.0.0.2'));
  assert.equal(clientKey(null, '::ffff:10.0.0.1'), 'a:10.0.0.1');
  assert.equal(clientKey(null, '::1'), 'a:::1');
  assert.equal(clientKey(null, undefined), undefined);
});
