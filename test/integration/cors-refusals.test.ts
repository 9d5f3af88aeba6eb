// CORS on refusals (docs/security.md, "CORS", actual answers): a page on a listed origin reads
// every refusal of a served path, on each HTTP front door: the 401 with its WWW-Authenticate
// (exposed), 413 (by Content-Length and while reading a chunked body), 429 of a rate limit and of
// the per-principal share, each with Retry-After (exposed), 404 for an unknown session.
// Raw HTTP with the Origin header of the allowlist; WHATWG Fetch §3.2.3.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { modernBody, modernHeaders, send } from '../helpers/http.js';
import { gatewayFromConfig } from '../helpers/identity.js';
import { switchyard } from '../helpers/library.js';

const KEY = 'cors-refusals-key_0123456789abcdefghijkl';
const PAGE = 'http://localhost:5173';
const EXPOSE = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After, Allow, Accept-Encoding';
const FIELDS = { 'access-control-allow-origin': PAGE, 'access-control-expose-headers': EXPOSE, vary: 'Origin' };
const CONFIG = {
  auth: { apiKeys: [{ name: 'page', sha256: createHash('sha256').update(KEY).digest('hex') }] },
  cors: { origins: [PAGE] },
  limits: { maxBodyBytes: 4096, maxConcurrentPerPrincipal: 1 },
  rateLimits: [{ name: 'r', per: 'principal' as const, ratePerSec: 0.001, burst: 1 }],
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}
/** One front door: sends a request, gives the answer. */
type Door = (method: string, headers: Record<string, string>, body?: string | AsyncIterable<Buffer>) => Promise<Answer>;

const corsOf = (a: Answer) => Object.fromEntries(Object.entries(a.headers).filter(([k]) => k.startsWith('access-control-') || k === 'vary'));
const authed = (method: string, name?: string) => ({ ...modernHeaders(method, name), authorization: `Bearer ${KEY}`, origin: PAGE });

/** Runs every refusal through `door` (whose resource URI and metadata URL are `prm`). */
async function refusals(door: Door, prm: string): Promise<void> {
  const list = JSON.stringify(modernBody(1, 'tools/list'));
  const noToken = await door('POST', { ...modernHeaders('tools/list'), origin: PAGE }, list);
  assert.equal(noToken.status, 401);
  assert.equal(noToken.headers['www-authenticate'], `Bearer resource_metadata="${prm}"`);
  assert.deepEqual(corsOf(noToken), FIELDS);

  const large = await door('POST', authed('tools/list'), 'x'.repeat(5000));
  assert.deepEqual([large.status, corsOf(large)], [413, FIELDS]);
  const chunked = await door(
    'POST',
    authed('tools/list'),
    (async function* () {
      for (let i = 0; i < 5; i++) yield Buffer.alloc(1000, 0x20);
    })(),
  );
  assert.deepEqual([chunked.status, corsOf(chunked)], [413, FIELDS]);

  const session = await door(
    'POST',
    { ...authed('ping'), 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-06-18' },
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  );
  assert.deepEqual([session.status, corsOf(session)], [404, FIELDS]);

  // The per-principal share: one call in flight, a second refused 429 with Retry-After.
  const slow = door('POST', authed('tools/call', 'slow'), JSON.stringify(modernBody(2, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 600 } })));
  await new Promise((r) => setTimeout(r, 200));
  const busy = await door('POST', authed('tools/list'), list);
  assert.deepEqual([busy.status, busy.headers['retry-after'], corsOf(busy)], [429, '1', FIELDS]);
  assert.equal((await slow).status, 200);

  // The rate limit (burst 1, taken by the slow call): 429 with Retry-After.
  const limited = await door('POST', authed('tools/list'), list);
  assert.deepEqual([limited.status, corsOf(limited)], [429, FIELDS]);
  // The next token comes 1,000 s after the slow call took the only one, less the time since (more
  // than a second on a loaded machine: Retry-After 999 then).
  const retryAfter = Number(limited.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 990 && retryAfter <= 1000, `Retry-After ${String(limited.headers['retry-after'])}`);
}

/** A door over HTTP at `url`'s origin. */
const httpDoor =
  (url: string): Door =>
  async (method, headers, body) => {
    const r = await request(url, { method: method as 'POST', headers, body: body as string });
    const text = await r.body.text();
    return { status: r.statusCode, headers: r.headers, json: text ? JSON.parse(text) : undefined };
  };

test('the standalone listener: every refusal of a served path carries the CORS fields of a listed origin', async (t) => {
  const gw = await gatewayFromConfig(t, { ...CONFIG, upstreams: { a: { transport: 'embedded' } } });
  const url = gw.urls[0];
  await refusals(httpDoor(url), `${new URL(url).origin}/.well-known/oauth-protected-resource/a/mcp`);
  // An unlisted origin's refusal carries Vary only.
  const other = await send(url, 'POST', '{}', { ...modernHeaders('tools/list'), origin: 'http://localhost:4000' });
  assert.deepEqual([other.status, corsOf(other)], [401, { vary: 'Origin' }]);
});

test('the fastify plugin in a host application: the same', async (t) => {
  const sy = switchyard(t, { ...CONFIG, upstreams: { demo: { transport: 'embedded', path: '/mcp' } } });
  const app = Fastify({ forceCloseConnections: true });
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await refusals(httpDoor(`${origin}/mcp`), `${origin}/.well-known/oauth-protected-resource/mcp`);
});

test('the fetch handler: the same', async (t) => {
  const sy = switchyard(t, { ...CONFIG, upstreams: { demo: { transport: 'embedded', path: '/mcp' } } });
  const door: Door = async (method, headers, body) => {
    const init: RequestInit & { duplex?: string } = { method, headers: { host: 'localhost:7600', ...headers } };
    if (typeof body === 'string') init.body = body;
    else if (body !== undefined) {
      const it = body[Symbol.asyncIterator]();
      init.body = new ReadableStream({
        async pull(c) {
          const n = await it.next();
          if (n.done) c.close();
          else c.enqueue(n.value);
        },
      });
      init.duplex = 'half';
    }
    const r = await sy.fetch(new Request('http://localhost:7600/mcp', init));
    const text = await r.text();
    return { status: r.status, headers: Object.fromEntries(r.headers), json: text ? JSON.parse(text) : undefined };
  };
  await refusals(door, 'http://localhost:7600/.well-known/oauth-protected-resource/mcp');
});
