// Outbound credentials, no passthrough: recording upstreams (a real SDK server for the 2025 era,
// a small 2026-07-28 server) verify every token they get at the real authorization server and
// prove that the client's token never reaches them; a refused upstream token is refreshed once.
// See 2025-11-25 basic/authorization, Token Passthrough; RFC 6749 §4.4; RFC 8693; RFC 8707.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { FORWARD_AUTHORIZATION_WARNING } from '../../src/auth/wire.js';
import { startAuthServer, type AuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';

/** One request the upstream received. */
interface Seen {
  rpc: string;
  authorization: string | undefined;
  apiKey: string | undefined;
  /** The verified token's claims; undefined without a token or when it did not verify. */
  claims?: JWTPayload;
}

interface Recording {
  url: string;
  seen: Seen[];
  /** Answer the next N `tools/call` requests 401 with the upstream's own challenge. */
  refuseNext: number;
}

/**
 * A protected upstream on 127.0.0.1: tokens verified with the authorization server's JWKS for
 * audience = its own URL; `open` methods pass without one. `era` `2025`: the official SDK's
 * stateless Streamable HTTP server with a `whoami` tool; `2026`: a hand-written 2026-07-28 server.
 */
async function recordingUpstream(
  t: { after(fn: () => Promise<void>): void },
  as: AuthServer,
  era: '2025' | '2026',
  open: readonly string[] = [],
): Promise<Recording> {
  const jwks = createRemoteJWKSet(new URL(`${as.issuer}/jwks`));
  const rec: Recording = { url: '', seen: [], refuseNext: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const rpc = body.length > 0 ? ((JSON.parse(body.toString()) as { method?: string }).method ?? 'response') : `${req.method}`;
        const authorization = req.headers.authorization;
        const entry: Seen = { rpc, authorization, apiKey: req.headers['x-api-key'] as string | undefined };
        rec.seen.push(entry);
        const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
        if (token)
          entry.claims = await jwtVerify(token, jwks, { issuer: as.issuer, audience: rec.url }).then(
            (v) => v.payload,
            () => undefined,
          );
        const refuse = rpc === 'tools/call' && rec.refuseNext > 0;
        if (refuse || (!entry.claims && !open.includes(rpc))) {
          if (refuse) rec.refuseNext--;
          res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${rec.url}/.well-known/x"`, 'content-type': 'application/json' });
          res.end('{"error":"invalid_token"}');
          return;
        }
        if (era === '2026') return modern(res, body, entry);
        // A stateless server offers no GET stream (2025-11-25 basic/transports#listening-for-messages-from-the-server).
        if (req.method === 'GET') return void res.writeHead(405, { allow: 'POST' }).end();
        const mcp = new McpServer({ name: 'recording', version: '1.0.0' });
        mcp.registerTool('whoami', { description: 'Who the upstream thinks is calling' }, async () => ({
          content: [{ type: 'text', text: `${entry.claims?.sub} via ${(entry.claims?.act as { sub?: string } | undefined)?.sub ?? '-'}` }],
        }));
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await mcp.connect(transport);
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
        const answer = await transport.handleRequest(
          new Request(`${rec.url}`, { method: req.method, headers, body: req.method === 'POST' ? new Uint8Array(body) : undefined }),
        );
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(Buffer.from(await answer.arrayBuffer()));
        await mcp.close();
      })().catch((err: unknown) => res.writeHead(500).end(String(err)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rec.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  t.after(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return rec;
}

/** The 2026-07-28 side of the recording upstream: discover, tools/list, tools/call whoami. */
function modern(res: http.ServerResponse, body: Buffer, entry: Seen): void {
  const m = JSON.parse(body.toString()) as { id?: unknown; method: string };
  if (m.id === undefined) return void res.writeHead(202).end();
  const cache = { resultType: 'complete', ttlMs: 0, cacheScope: 'private' };
  const result =
    m.method === 'server/discover'
      ? {
          supportedVersions: ['2026-07-28'],
          capabilities: { tools: {} },
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'recording', version: '1' } },
          ...cache,
        }
      : m.method === 'tools/list'
        ? { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }], ...cache }
        : {
            content: [{ type: 'text', text: `${entry.claims?.sub} via ${(entry.claims?.act as { sub?: string } | undefined)?.sub ?? '-'}` }],
            resultType: 'complete',
          };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
}

const textOf = (r: { json: unknown }) => (r.json as { result?: { content?: Array<{ text: string }> } }).result?.content?.[0]?.text;

for (const era of ['2025', '2026'] as const) {
  test(`client credentials (${era} upstream): every upstream request carries the gateway's own token for the upstream, never the client's; a 401 is refreshed once`, async (t) => {
    const as = await startAuthServer(t, { machines: ['alice'] });
    const up = await recordingUpstream(t, as, era);
    const gw = await gatewayFromConfig(t, {
      auth: { bearer: { issuer: as.issuer } },
      upstreams: {
        up: {
          url: up.url,
          era: era === '2026' ? '2026-07-28' : '2025-03-26',
          credentials: {
            clientCredentials: {
              issuer: as.issuer,
              clientId: as.confidentialClient.clientId,
              clientSecret: as.confidentialClient.clientSecret,
              resource: up.url,
            },
          },
        },
      },
    });
    const url = gw.urls[0];
    const aliceToken = await as.clientCredentialsToken(url, undefined, 'alice');
    const r = await modernCall(url, 1, 'tools/call', { name: 'whoami', arguments: {} }, `Bearer ${aliceToken}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(textOf(r), 'switchyard via -');

    // Refused once by the upstream: a new token, one retry, and the client never hears of it.
    const tokens = as.count('/token');
    up.refuseNext = 1;
    const again = await modernCall(url, 2, 'tools/call', { name: 'whoami', arguments: {} }, `Bearer ${aliceToken}`);
    assert.equal(again.status, 200, again.text);
    assert.equal(textOf(again), 'switchyard via -');
    assert.equal(as.count('/token'), tokens + 1);
    assert.equal(again.headers['www-authenticate'], undefined);

    assert.ok(up.seen.length >= 4);
    for (const s of up.seen) {
      assert.ok(!s.authorization?.includes(aliceToken), `${s.rpc} carried the client's token`);
      assert.equal(s.authorization?.startsWith('Bearer '), true, s.rpc);
    }
    // Every request, the one refused on purpose included, carried a token that verifies for the upstream.
    assert.equal(up.seen.filter((s) => s.claims === undefined).length, 0);
    assert.ok(up.seen.every((s) => s.claims?.sub === 'switchyard' && s.claims?.aud === up.url));
  });
}

test("token exchange: the upstream gets a token for itself naming the caller as subject and the gateway as actor, never the caller's own", async (t) => {
  const as = await startAuthServer(t, { machines: ['alice'] });
  // The gateway's own requests (initialize of its control session) carry no credential with token exchange.
  const up = await recordingUpstream(t, as, '2025', ['initialize', 'notifications/initialized', 'GET', 'DELETE']);
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer } },
    upstreams: {
      up: {
        url: up.url,
        era: '2025-03-26',
        credentials: {
          tokenExchange: { issuer: as.issuer, clientId: as.confidentialClient.clientId, clientSecret: as.confidentialClient.clientSecret, resource: up.url },
        },
      },
    },
  });
  const url = gw.urls[0];
  const aliceToken = await as.clientCredentialsToken(url, undefined, 'alice');
  const r = await modernCall(url, 1, 'tools/call', { name: 'whoami', arguments: {} }, `Bearer ${aliceToken}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(textOf(r), 'alice via switchyard');
  assert.ok(up.seen.every((s) => !s.authorization?.includes(aliceToken)));
  const calls = up.seen.filter((s) => s.rpc === 'tools/call');
  assert.equal(calls.length, 1);
  assert.deepEqual([calls[0].claims?.sub, calls[0].claims?.aud, (calls[0].claims?.act as { sub: string }).sub], ['alice', up.url, 'switchyard']);
});

test('static credential headers reach the upstream; the client Authorization does not; forwardAuthorization logs a warning at start', async (t) => {
  const as = await startAuthServer(t, { machines: ['alice'] });
  const up = await recordingUpstream(t, as, '2026', ['server/discover', 'tools/list', 'tools/call']);
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer } },
    upstreams: {
      keyed: { url: up.url, era: '2026-07-28', credentials: { headers: { 'X-Api-Key': 'upstream-key' } } },
      forwarding: { url: up.url, era: '2026-07-28', forwardAuthorization: true },
    },
  });
  const [keyed, forwarding] = gw.urls;
  const token = await as.clientCredentialsToken(keyed, undefined, 'alice');
  assert.equal((await modernCall(keyed, 1, 'tools/call', { name: 'whoami', arguments: {} }, `Bearer ${token}`)).status, 200);
  const call = up.seen.find((s) => s.rpc === 'tools/call')!;
  assert.deepEqual([call.apiKey, call.authorization], ['upstream-key', undefined]);

  assert.deepEqual(
    gw.records.filter((r) => r.msg === FORWARD_AUTHORIZATION_WARNING),
    [{ level: 40, upstream: 'forwarding', msg: FORWARD_AUTHORIZATION_WARNING }],
  );
  const fwdToken = await as.clientCredentialsToken(forwarding, undefined, 'alice');
  up.seen.length = 0;
  assert.equal((await modernCall(forwarding, 2, 'tools/call', { name: 'whoami', arguments: {} }, `Bearer ${fwdToken}`)).status, 200);
  assert.equal(up.seen.find((s) => s.rpc === 'tools/call')?.authorization, `Bearer ${fwdToken}`);
});
