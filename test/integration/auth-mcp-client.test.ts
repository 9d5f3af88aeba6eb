// The official MCP v2 client with its OAuth providers follows a 401 from a resource built on src/auth
// through PRM (RFC 9728) and AS metadata (RFC 8414) to a token at the real authorization server,
// then calls a tool as the verified identity: client credentials, and the authorization code
// flow with PKCE (consent approved automatically).
// See 2025-11-25 basic/authorization (authorization flow steps).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { Identity } from '../../src/core/identity.js';
import { startAuthServer } from '../fixtures/auth-server.js';
import { startAuthFront } from '../helpers/auth-front.js';
import { PublicClient } from '../helpers/oauth.js';

/** A stateless MCP server per request (the SDK's own pattern), told who the verified caller is. */
async function mcp(req: http.IncomingMessage, res: http.ServerResponse, identity: Identity | null, body: Buffer): Promise<void> {
  const server = new McpServer({ name: 'protected', version: '1.0.0' });
  server.registerTool('whoami', { description: 'The verified caller' }, async () => ({
    content: [{ type: 'text', text: `${identity?.issuer} ${identity?.subject} ${identity?.scopes.join(',')}` }],
  }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const headers = new Headers();
  // The token stops at the front door: the MCP server behind it never sees it.
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'authorization') headers.set(k, v);
  const response = await transport.handleRequest(
    new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? new Uint8Array(body) : undefined }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
  await server.close();
}

function inner(req: http.IncomingMessage, res: http.ServerResponse, identity: Identity | null, body: Buffer): void {
  mcp(req, res, identity, body).catch((err: unknown) => res.writeHead(500).end(String(err)));
}

async function whoami(client: Client): Promise<string> {
  const r = (await client.callTool({ name: 'whoami', arguments: {} })) as { content: Array<{ type: string; text: string }> };
  return r.content[0].text;
}

test('the v2 client with ClientCredentialsProvider gets a token for the resource and is let in', async (t) => {
  const as = await startAuthServer(t);
  const front = await startAuthFront(t, { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } }, { inner });
  const authProvider = new ClientCredentialsProvider({
    clientId: as.confidentialClient.clientId,
    clientSecret: as.confidentialClient.clientSecret,
    scope: 'mcp:read',
    expectedIssuer: as.issuer,
  });
  const client = new Client({ name: 'e2e-m2m', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(front.resource), { authProvider }));
  assert.equal(await whoami(client), `${as.issuer} switchyard mcp:read`);
  // It found the authorization server through the challenge and PRM, and asked it for a token once.
  assert.ok(as.count('/.well-known/oauth-authorization-server') >= 1);
  assert.equal(as.count('/token'), 1);
  assert.ok(front.seen.length >= 2);
  assert.ok(front.seen.every((id) => id.subject === 'switchyard' && id.source === 'jwt'));
  assert.ok(front.records.some((r) => r.msg === 'authentication refused' && r.code === 'SWY_ERR_AUTH_REQUIRED'));
});

test('the v2 client follows the authorization code flow with PKCE and the resource indicator', async (t) => {
  const as = await startAuthServer(t, { accountId: 'bob' });
  const front = await startAuthFront(t, { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } }, { inner });
  const provider = new PublicClient(as);
  const first = new StreamableHTTPClientTransport(new URL(front.resource), { authProvider: provider as OAuthClientProvider });
  const c1 = new Client({ name: 'e2e-user', version: '1.0.0' });
  await assert.rejects(c1.connect(first), UnauthorizedError);
  const url = provider.authorizationUrl!;
  assert.equal(url.origin + url.pathname, `${as.issuer}/auth`);
  assert.equal(url.searchParams.get('resource'), front.resource);
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  const back = await as.followAuthorization(url.href);
  assert.equal(back.searchParams.get('iss'), as.issuer);
  // RFC 9207: the client checks `iss` of the callback before redeeming the code.
  await first.finishAuth(back.searchParams);
  await c1.close();

  const client = new Client({ name: 'e2e-user', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(front.resource), { authProvider: provider as OAuthClientProvider }));
  assert.equal(await whoami(client), `${as.issuer} bob mcp:read`);
  assert.ok(front.seen.every((id) => id.subject === 'bob' && id.clientId === as.publicClient.clientId));
});
