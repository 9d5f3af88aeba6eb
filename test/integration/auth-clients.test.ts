// Real clients against an authenticated gateway: the official v2 client with its OAuth providers
// follows the gateway's 401 through its RFC 9728 metadata and the authorization server's RFC 8414
// metadata to a token (client credentials; the authorization code flow with PKCE), the v1 client
// with a bearer token, and mcp-remote with `--header`.
// See 2025-11-25 basic/authorization (authorization flow steps); RFC 9728 §5.1; RFC 8707.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startAuthServer, type AuthServer } from '../fixtures/auth-server.js';
import { connectWithToken, gatewayFromConfig } from '../helpers/identity.js';
import { PublicClient } from '../helpers/oauth.js';

const require = createRequire(import.meta.url);

/** A gateway on the embedded demo whose policy lets only `mcp:read` holders call echo, and names who called. */
async function protectedGateway(t: { after(fn: () => Promise<void>): void }, as: AuthServer) {
  return gatewayFromConfig(t, {
    auth: { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } },
    policy: { default: 'deny', rules: [{ name: 'readers-echo', effect: 'allow', when: "'mcp:read' in principal.scopes && component.name == 'echo'" }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
}

const echoed = (r: unknown) => (r as { content: Array<{ text: string }> }).content[0].text;

test('the v2 client with ClientCredentialsProvider follows the 401 through PRM and AS metadata to a token, then calls', async (t) => {
  const as = await startAuthServer(t);
  const gw = await protectedGateway(t, as);
  const authProvider = new ClientCredentialsProvider({
    clientId: as.confidentialClient.clientId,
    clientSecret: as.confidentialClient.clientSecret,
    scope: 'mcp:read',
    expectedIssuer: as.issuer,
  });
  const client = new Client({ name: 'm2m', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.urls[0]), { authProvider }));
  assert.equal(echoed(await client.callTool({ name: 'echo', arguments: { message: 'm2m' } })), 'Echo: m2m');
  assert.equal(as.count('/token'), 1);
  assert.ok(as.count('/.well-known/oauth-authorization-server') >= 1);
  // The client was challenged first, then let in as the client it is.
  assert.ok(gw.records.some((r) => r.msg === 'authentication refused' && r.code === 'SWY_ERR_AUTH_REQUIRED'));
  assert.ok(gw.records.some((r) => r.msg === 'policy decision' && (r.principal as { sub: string }).sub === 'switchyard' && r.decision === 'allow'));
});

test('the v2 client runs the authorization code flow with PKCE and resource = the mount URL, then calls as the user', async (t) => {
  const as = await startAuthServer(t, { accountId: 'carol' });
  const gw = await protectedGateway(t, as);
  const url = gw.urls[0];
  const provider = new PublicClient(as);
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider as OAuthClientProvider });
  const c1 = new Client({ name: 'user', version: '1.0.0' });
  await assert.rejects(c1.connect(first), UnauthorizedError);
  const auth = provider.authorizationUrl!;
  assert.equal(auth.searchParams.get('resource'), url);
  // The challenge's scope; the client adds offline_access, which the server advertises, for its refresh_token grant.
  assert.equal(auth.searchParams.get('scope'), 'mcp:read offline_access');
  assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
  await first.finishAuth((await as.followAuthorization(auth.href)).searchParams);
  await c1.close();

  const client = new Client({ name: 'user', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider as OAuthClientProvider }));
  assert.equal(echoed(await client.callTool({ name: 'echo', arguments: { message: 'carol' } })), 'Echo: carol');
  assert.ok(gw.records.some((r) => r.msg === 'policy decision' && (r.principal as { sub: string }).sub === 'carol'));
});

test('the v1 client with a bearer token; without one it is refused', async (t) => {
  const as = await startAuthServer(t);
  const gw = await protectedGateway(t, as);
  const url = gw.urls[0];
  const token = await as.clientCredentialsToken(url, 'mcp:read');
  const client = await connectWithToken('v1-streamable', url, token);
  t.after(() => client.close());
  assert.equal(echoed(await client.callTool('echo', { message: 'v1' })), 'Echo: v1');
  // The policy's refusal is a JSON-RPC error, which the v1 client throws.
  await assert.rejects(client.callTool('add', { a: 1, b: 2 }), { code: -32010, message: 'MCP error -32010: Forbidden by policy: tool add' });

  const bare = new V1Client({ name: 'bare', version: '1.0.0' }, { capabilities: {} });
  const { StreamableHTTPClientTransport: V1Streamable } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  await assert.rejects(bare.connect(new V1Streamable(new URL(url))), /401|Unauthorized/);
});

test('mcp-remote with --header "Authorization: Bearer …" reaches the tools', async (t) => {
  const as = await startAuthServer(t);
  const gw = await protectedGateway(t, as);
  const url = gw.urls[0];
  const token = await as.clientCredentialsToken(url, 'mcp:read');
  const configDir = mkdtempSync(path.join(tmpdir(), 'mcp-remote-'));
  t.after(() => rmSync(configDir, { recursive: true, force: true }));
  const bin = path.join(path.dirname(require.resolve('mcp-remote/package.json')), 'dist/proxy.js');
  const transport = new StdioClientTransport({
    command: process.execPath,
    // mcp-remote substitutes ${VAR} in header values from its environment, so the token stays off the command line.
    args: [bin, url, '--transport', 'http-only', '--header', 'Authorization:Bearer ${SWY_TOKEN}'],
    env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir, SWY_TOKEN: token },
    stderr: 'pipe',
  });
  const client = new V1Client({ name: 'via-mcp-remote', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((x) => x.name),
    ['echo'],
  );
  assert.equal(echoed(await client.callTool({ name: 'echo', arguments: { message: 'remote' } })), 'Echo: remote');
});
