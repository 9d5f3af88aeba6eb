// Regression (found by an operator's trial of hot reload): a reload that kept a running upstream
// (its new settings did not start) and changed the top-level `policy` applied the new rules to the
// kept upstream but told none of its subscribers: no `notifications/tools/list_changed` on their
// streams, and the `config reloaded` line's `policy` did not name it, where the same policy change
// without the failed settings did both.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSse, post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, openSession, RAW_SERVER } from '../helpers/ops.js';

const working = { command: process.execPath, args: [RAW_SERVER, 'stdio'] };
const denyEcho = { default: 'allow', rules: [{ name: 'no-echo', effect: 'deny', when: 'component.name == "echo"' }] };

test('a reload that keeps an upstream and changes the top-level policy tells its subscribers', async (t) => {
  const file = configFile(t, { listen: { port: 0 }, admin: false, upstreams: { swap: working } });
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const session = await openSession(cli.url);
  await post(cli.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, session.headers);
  const stream = await openSse(cli.url, 'GET', { ...session.headers, accept: 'text/event-stream' });
  t.after(() => stream.close());

  const from = cli.records.length;
  const missing = { command: process.execPath, args: [path.join(path.dirname(file), 'no-such-server.mjs')] };
  writeFileSync(file, JSON.stringify({ listen: { port: 0 }, admin: false, policy: denyEcho, upstreams: { swap: missing } }));
  cli.child.kill('SIGHUP');
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([reloaded.kept, reloaded.policy], [['swap'], ['swap']]);

  const event = await stream.next(20_000);
  assert.equal((JSON.parse(event.data) as { method: string }).method, 'notifications/tools/list_changed');
  assert.equal(await cli.stop(), 0);
});
