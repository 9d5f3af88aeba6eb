// Regression (found by an operator's trial of hot reload): once a reload had kept a running
// upstream (its new settings did not start), no later reload's policy or curation reached it. The
// new instance that failed had registered its own policy stage under the upstream's name, and the
// running one's stage was no longer the one a commit swapped: the next reload logged the upstream
// under `policy` (applied) while its clients still saw and called what the new rules hide.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, openSession, RAW_SERVER } from '../helpers/ops.js';

const working = { command: process.execPath, args: [RAW_SERVER, 'stdio'] };
const configOf = (swap: Record<string, unknown>) => ({ listen: { port: 0 }, admin: false, upstreams: { swap } });

test('a policy reload after a reload that kept the running upstream applies to it', async (t) => {
  const file = configFile(t, configOf(working));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const session = await openSession(cli.url);
  const toolNames = async (id: number) => {
    const r = await post(cli.url, { jsonrpc: '2.0', id, method: 'tools/list' }, session.headers);
    return ((r.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((x) => x.name);
  };
  assert.ok((await toolNames(1)).includes('echo'));

  // New settings that do not start: the running upstream is kept.
  let from = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf({ command: process.execPath, args: [path.join(path.dirname(file), 'no-such-server.mjs')] })));
  cli.child.kill('SIGHUP');
  const kept = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual(kept.kept, ['swap']);

  // Back to the running settings, with curation that hides `echo`: a policy change, applied in place.
  from = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf({ ...working, tools: { exclude: ['echo'] } })));
  cli.child.kill('SIGHUP');
  const applied = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([applied.policy, applied.changed, applied.kept], [['swap'], [], undefined]);

  assert.equal((await toolNames(2)).includes('echo'), false);
  const call = await post(
    cli.url,
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hidden' } } },
    session.headers,
  );
  assert.equal((call.json as { error?: unknown }).error !== undefined, true, `echo answered: ${call.text}`);
  assert.equal(await cli.stop(), 0);
});
