// Regression (found by an operator's trial of hot reload): after a reload, `switchyard_upstream_state`
// and the client histogram's `mcp_protocol_version` disagreed with the gateway. An upstream the reload
// added started (and published its state) before the config listed it, so the metrics dropped its
// state and revision for good: no state series, client operations without `mcp_protocol_version`. An
// upstream the reload changed showed `down` while its new instance served, because the old
// instance's stop was published under the same name after the new one's `ready`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { startOpsCli } from '../helpers/ops-cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configFile, find, getText, RAW_SERVER } from '../helpers/ops.js';

const fixture = (...args: string[]) => ({ command: process.execPath, args: [RAW_SERVER, 'stdio', ...args] });

test('after a reload the upstream state gauge and the upstream revision label follow the upstreams that serve', async (t) => {
  const config = { listen: { host: '127.0.0.1', port: 0 }, admin: { port: 0 }, upstreams: { swap: fixture() } };
  const file = configFile(t, config);
  const cli = await startOpsCli(t, ['--config', file]);
  const ready = await cli.waitFor((r) => r.msg === 'upstream ready' && r.upstream === 'swap');
  const from = cli.records.length;
  writeFileSync(file, JSON.stringify({ ...config, upstreams: { swap: fixture('--name', 'swapped'), fresh: fixture() } }));
  cli.child.kill('SIGHUP');
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([done.added, done.removed, done.changed], [['fresh'], [], ['swap']]);

  const status = (await getText(`${cli.admin}status.json`)).json as { upstreams: Array<{ name: string; state: string }> };
  assert.deepEqual(
    status.upstreams.map((u) => [u.name, u.state]),
    [
      ['swap', 'up'],
      ['fresh', 'up'],
    ],
  );
  const metrics = (await getText(`${cli.admin}metrics`)).text;
  assert.deepEqual(
    find(metrics, 'switchyard_upstream_state')
      .filter((s) => s.value === 1)
      .map((s) => [s.labels.upstream, s.labels.state])
      .sort(),
    [
      ['fresh', 'up'],
      ['swap', 'up'],
    ],
  );

  const call = await post(
    new URL('/fresh/mcp', cli.url).href,
    modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'm' } }),
    modernHeaders('tools/call', 'echo'),
  );
  assert.equal(call.status, 200);
  const after = (await getText(`${cli.admin}metrics`)).text;
  assert.deepEqual(
    find(after, 'mcp_client_operation_duration_seconds_count', { mcp_method_name: 'tools/call', upstream: 'fresh' }).map((s) => s.labels.mcp_protocol_version),
    [ready.revision],
  );
});
