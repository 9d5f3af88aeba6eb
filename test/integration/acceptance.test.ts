// The first issue's acceptance line 2, as a test: every client kind, plus mcp-remote, lists
// server-everything's tools and calls echo through one gateway started with --legacy-sse.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { CLIENT_KINDS, connect } from '../helpers/clients.js';

const require = createRequire(import.meta.url);

test('all client kinds and mcp-remote (http-first) reach server-everything through one gateway', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand(), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  for (const kind of CLIENT_KINDS) {
    // The v1 SSE client is pointed at the MCP path itself, as a fallback client would be.
    const client = await connect(kind, gw.url);
    const { tools } = await client.listTools();
    assert.ok(
      tools.some((x) => x.name === 'echo'),
      kind,
    );
    const r = await client.callTool({ name: 'echo', arguments: { message: kind } });
    assert.deepEqual(r.content, [{ type: 'text', text: `Echo: ${kind}` }]);
    await client.close();
  }

  const configDir = mkdtempSync(path.join(tmpdir(), 'mcp-remote-'));
  t.after(() => rmSync(configDir, { recursive: true, force: true }));
  const bin = path.join(path.dirname(require.resolve('mcp-remote/package.json')), 'dist/proxy.js');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, gw.url, '--transport', 'http-first'],
    env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'via-mcp-remote', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.ok(tools.some((x) => x.name === 'echo'));
  const r = await client.callTool({ name: 'echo', arguments: { message: 'via mcp-remote' } });
  assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: via mcp-remote' }]);
});
