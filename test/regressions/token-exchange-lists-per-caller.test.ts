// Pins (found by h-trial8 while checking docs/config.md): the list cache never serves a
// token-exchange upstream's lists. Such an upstream gets a token per caller (RFC 8693: the
// caller is the subject), so what it lists may be the caller's own (a drive's files, a
// repository's tools); a list cached from alice's call and served to bob would hand him alice's.
// docs/config.md named only `forwardAuthorization`; it now names token exchange too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startAuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';
import { listenForTest } from '../helpers/stub-http.js';

/** A 2026-07-28 upstream whose tools/list names the subject of the token it got (unverified: the test's own fixture). */
async function perCallerUpstream(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const m = JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const sub = token ? (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string }).sub : 'nobody';
      // A list the upstream says may be kept a minute, and whose changes it announces: cacheable, but not across callers.
      const cache = { resultType: 'complete', ttlMs: 60_000, cacheScope: 'private' };
      const result =
        m.method === 'server/discover'
          ? {
              supportedVersions: ['2026-07-28'],
              capabilities: { tools: { listChanged: true } },
              _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'per-caller', version: '1' } },
              ...cache,
            }
          : { tools: [{ name: `files_of_${sub}`, inputSchema: { type: 'object' } }], ...cache };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  return `${await listenForTest(t, server)}/mcp`;
}

test("a token-exchange upstream's tools/list is asked for each caller, never served from another caller's cached list", async (t) => {
  const as = await startAuthServer(t, { machines: ['alice', 'bob'] });
  const up = await perCallerUpstream(t);
  const { clientId, clientSecret } = as.confidentialClient;
  const gw = await gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer } },
    upstreams: { up: { url: up, era: '2026-07-28', credentials: { tokenExchange: { issuer: as.issuer, clientId, clientSecret, resource: up } } } },
  });
  const url = gw.urls[0];
  const names = async (sub: string) => {
    const r = await modernCall(url, 1, 'tools/list', {}, `Bearer ${await as.clientCredentialsToken(url, undefined, sub)}`);
    return ((r.json as { result?: { tools?: Array<{ name: string }> } }).result?.tools ?? []).map((x) => x.name);
  };
  assert.deepEqual(await names('alice'), ['files_of_alice']);
  assert.deepEqual(await names('bob'), ['files_of_bob']);
  assert.deepEqual(await names('alice'), ['files_of_alice']);
});
