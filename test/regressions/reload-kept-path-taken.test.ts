// Regression (found by an operator's trial of hot reload): a reload that moved a running upstream to
// another `path` with settings that did not start, and gave its old path to an upstream it added,
// kept the running upstream at its old path beside the new one: two mounts served one path (both
// in /status.json), the new one took the requests, and the kept upstream's sessions were answered
// 404 as unknown. A kept upstream keeps its old paths only when no mount of the new config serves
// them; otherwise it is replaced as the file says, as a changed upstream that was not up is.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, getText, openSession, RAW_SERVER } from '../helpers/ops.js';

const server = (name: string) => ({ command: process.execPath, args: [RAW_SERVER, 'stdio', '--name', name] });
const configOf = (upstreams: Record<string, unknown>) => ({ listen: { port: 0 }, admin: { port: 0 }, upstreams });

test('a running upstream is not kept on a path the new config gives to another mount', async (t) => {
  const file = configFile(t, configOf({ old: { ...server('old'), path: '/x/mcp' } }));
  const cli = await startOpsCli(t, ['--config', file]);
  const x = cli.url;
  assert.equal((await openSession(x)).serverName, 'old');

  // `old` moves to /y with a command that cannot start; `added` takes /x.
  const from = cli.records.length;
  const missing = { command: process.execPath, args: [path.join(path.dirname(file), 'no-such-server.mjs')], path: '/y/mcp' };
  writeFileSync(file, JSON.stringify(configOf({ old: missing, added: { ...server('added'), path: '/x/mcp' } })));
  cli.child.kill('SIGHUP');
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([reloaded.added, reloaded.changed, reloaded.kept], [['added'], ['old'], undefined]);
  const warned = cli.records.slice(from).find((r) => r.msg === 'config reload could not keep the running upstream: the new config serves its path elsewhere');
  assert.equal(warned?.upstream, 'old');
  assert.match(String(warned?.err), /child exited during start/);

  // One mount per path, as the file says: /x is `added`; `old` is at /y, down.
  const status = (await getText(new URL('/status.json', cli.admin).href)).json as { mounts: Array<{ name: string; url: string }> };
  const urls = status.mounts.map((m) => new URL(m.url).pathname);
  assert.deepEqual([...urls].sort(), ['/x/mcp', '/y/mcp']);
  assert.equal((await openSession(x)).serverName, 'added');
  const y = new URL('/y/mcp', x).href;
  const init = await post(
    y,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
  );
  assert.equal(init.status, 503);
  assert.equal(await cli.stop(), 0);
});
