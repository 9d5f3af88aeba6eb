// Regression (found by h-trial3, left as a judgement call): a reload that changed both a working
// upstream's connection (a `command` that does not start) and what applies in place (its `tools`
// curation, `optional`, `description`) kept the running upstream with all of its old entry: the
// tool the new file hides stayed listed and callable, and `optional` stayed as it was. Now a kept
// upstream keeps only what would restart it; its policy keys, `optional` and `description` are the
// reload's, as for an unchanged upstream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, getText, openSession, RAW_SERVER } from '../helpers/ops.js';

const working = { command: process.execPath, args: [RAW_SERVER, 'stdio'] };
const configOf = (swap: Record<string, unknown>) => ({ listen: { port: 0 }, admin: { port: 0 }, upstreams: { swap } });

test('a kept upstream takes the reload’s curation, with its running connection', async (t) => {
  const file = configFile(t, configOf(working));
  const cli = await startOpsCli(t, ['--config', file]);
  const session = await openSession(cli.url);
  const toolNames = async (id: number) => {
    const r = await post(cli.url, { jsonrpc: '2.0', id, method: 'tools/list' }, session.headers);
    return ((r.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((x) => x.name);
  };
  assert.ok((await toolNames(1)).includes('echo'));

  const from = cli.records.length;
  writeFileSync(
    file,
    JSON.stringify(
      configOf({
        command: process.execPath,
        args: [path.join(path.dirname(file), 'no-such-server.mjs')],
        tools: { exclude: ['echo'] },
        optional: true,
        description: 'now optional',
      }),
    ),
  );
  cli.child.kill('SIGHUP');
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([reloaded.kept, reloaded.changed, reloaded.policy], [['swap'], [], ['swap']]);

  // The running child still serves the session, under the new curation.
  assert.equal((await toolNames(2)).includes('echo'), false);
  const call = await post(cli.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, session.headers);
  assert.notEqual((call.json as { error?: unknown }).error, undefined, `echo answered: ${call.text}`);
  // Still the running instance, up (what the status document reads from its supervisor).
  const status = (await getText(new URL('/status.json', cli.admin).href)).json as { upstreams: Array<{ name: string; state: string }> };
  assert.deepEqual(
    status.upstreams.map((u) => [u.name, u.state]),
    [['swap', 'up']],
  );
  assert.equal(await cli.stop(), 0);
});
