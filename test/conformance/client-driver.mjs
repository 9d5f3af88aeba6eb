#!/usr/bin/env node
// The client side for the suite's client scenarios: `client-driver.mjs URL`. The suite starts a test
// server at URL; this starts `switchyard --serve-stdio --upstream URL` and drives it over stdio with
// the v2 client, doing what the scenario (MCP_CONFORMANCE_SCENARIO) asks. So what the suite scores
// is the requests Switchyard makes upstream on the client's behalf.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(ROOT, 'dist/src/cli/main.js'), '--serve-stdio', '--upstream', url, '--log-level', 'warn'],
  stderr: 'inherit',
});
const client = new Client({ name: 'switchyard-conformance-client', version: '1.0.0' }, { capabilities: {} });
const deadline = setTimeout(() => {
  process.stderr.write('client-driver: deadline\n');
  process.exit(1);
}, 25_000);
try {
  await client.connect(transport);
  if (scenario !== 'initialize') {
    const { tools } = await client.listTools();
    if (tools.some((t) => t.name === 'add_numbers')) await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
    else if (tools[0]) await client.callTool({ name: tools[0].name, arguments: {} });
  }
  await client.close();
  clearTimeout(deadline);
  process.exit(0);
} catch (e) {
  process.stderr.write(`client-driver: ${e?.stack ?? e}\n`);
  process.exit(1);
}
