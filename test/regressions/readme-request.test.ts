// The README's first request by hand: the curl command it prints, replayed against the real
// command (its headers and body as written), answers the demo's echo.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';

/** The README's curl example: its URL, `-H` headers and `-d` body, read from the text. */
function readmeCurl(): { url: string; headers: Record<string, string>; body: string } {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /```sh\n(curl -s [^`]*?)\n```/.exec(readme)?.[1];
  assert.ok(block, 'README has a curl example');
  const command = block.replace(/\\\n\s*/g, ' ');
  const url = /curl -s (\S+)/.exec(command)?.[1];
  assert.ok(url);
  const headers: Record<string, string> = {};
  for (const m of command.matchAll(/-H '([^:']+):\s*([^']*)'/g)) headers[m[1].toLowerCase()] = m[2];
  const body = /-d '([^']*)'/.exec(command)?.[1];
  assert.ok(body);
  return { url, headers, body };
}

test("the README's curl request answers the demo's echo", async (t) => {
  const example = readmeCurl();
  assert.equal(example.url, 'http://127.0.0.1:7600/mcp', 'the example names the default listener');
  const cli = await startCli(t, ['--no-admin']);
  const res = await fetch(cli.url, { method: 'POST', headers: example.headers, body: example.body });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    jsonrpc: '2.0',
    id: 1,
    result: {
      content: [{ type: 'text', text: 'Echo: hi' }],
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'switchyard-demo', version: '0.1.0' } },
    },
  });
  assert.equal(await cli.stop('SIGTERM'), 0);
});
