// The client-operation histogram names the upstream's transport and server, through the real
// `switchyard` command: a scrape of /metrics after calls to an HTTP upstream and a stdio child.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpsCli } from '../helpers/ops-cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configFile, find, getText, opsHttp, RAW_SERVER } from '../helpers/ops.js';

test('mcp_client_operation_duration_seconds carries network_transport, and server_address and server_port for an HTTP upstream', async (t) => {
  const upstream = await opsHttp(t);
  const port = Number(new URL(upstream.url).port);
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    upstreams: { web: { url: upstream.url }, child: { command: process.execPath, args: [RAW_SERVER, 'stdio'] } },
  });
  const cli = await startOpsCli(t, ['--config', file]);
  for (const mount of ['web', 'child']) {
    const r = await post(cli.urls[mount], modernBody(1, 'tools/call', { name: 'echo', arguments: { message: mount } }), modernHeaders('tools/call', 'echo'));
    assert.equal(r.status, 200);
  }
  const text = (await getText(`${cli.admin}metrics`)).text;
  const calls = (upstream: string) =>
    find(text, 'mcp_client_operation_duration_seconds_count', { mcp_method_name: 'tools/call', upstream }).map((s) => [s.labels, s.value]);
  // @see telemetry digest §4 (network.*, server.address, server.port Recommended on mcp.client.operation.duration) and §8
  assert.deepEqual(calls('web'), [
    [
      {
        mcp_method_name: 'tools/call',
        upstream: 'web',
        mcp_protocol_version: '2026-07-28',
        network_transport: 'tcp',
        server_address: '127.0.0.1',
        server_port: String(port),
        gen_ai_tool_name: 'echo',
        gen_ai_operation_name: 'execute_tool',
      },
      1,
    ],
  ]);
  // A stdio child has no network peer: `pipe`, and no server address or port.
  assert.deepEqual(calls('child'), [
    [
      {
        mcp_method_name: 'tools/call',
        upstream: 'child',
        mcp_protocol_version: '2025-11-25',
        network_transport: 'pipe',
        gen_ai_tool_name: 'echo',
        gen_ai_operation_name: 'execute_tool',
      },
      1,
    ],
  ]);
});
