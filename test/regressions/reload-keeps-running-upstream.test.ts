// Regression (left open by an operations trial): a reload that changed a working upstream's
// settings to ones that do not start (a mistyped `command`) stopped the working instance and put
// a down one in its place, and counted as a success. Now the new instance makes its first attempt
// first; when it fails while the running one is up, the running one is kept with its settings and
// sessions, the reload is logged and counted as `partial`, and the next reload tries again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, find, getText, openSession, RAW_SERVER } from '../helpers/ops.js';

const fixture = (...args: string[]) => ({ command: process.execPath, args: [RAW_SERVER, 'stdio', ...args] });
const configOf = (swap: unknown) => ({ listen: { port: 0 }, admin: { port: 0 }, upstreams: { swap } });

test('a reload whose new settings for a working upstream do not start keeps the running one', async (t) => {
  const file = configFile(t, configOf(fixture()));
  const cli = await startOpsCli(t, ['--config', file]);
  const url = cli.url;
  const session = await openSession(url);
  assert.equal(session.serverName, 'raw-fixture');
  const echo = (id: number) =>
    post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } }, session.headers);
  assert.equal((await echo(1)).status, 200);

  // A command that cannot start: a script that does not exist (node exits at once).
  const from = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf({ command: process.execPath, args: [path.join(path.dirname(file), 'no-such-server.mjs')] })));
  cli.child.kill('SIGHUP');
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([reloaded.changed, reloaded.kept], [[], ['swap']]);
  const warned = cli.records.slice(from).find((r) => r.msg === 'config reload kept the running upstream: its new settings did not start');
  assert.equal(warned?.upstream, 'swap');
  assert.equal(warned?.level, 40);

  // The running upstream still serves the same session.
  const after = await echo(2);
  assert.equal(after.status, 200);
  assert.deepEqual(after.json, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: m2' }] } });
  const status = (await getText(new URL('/status.json', cli.admin).href)).json as { ready: boolean; upstreams: Array<{ name: string; state: string }> };
  assert.equal(status.ready, true);
  assert.deepEqual(
    status.upstreams.map((u) => [u.name, u.state]),
    [['swap', 'up']],
  );
  const metrics = (await getText(new URL('/metrics', cli.admin).href)).text;
  assert.equal(find(metrics, 'switchyard_config_reloads_total', { result: 'partial' })[0]?.value, 1);
  assert.equal(find(metrics, 'switchyard_config_reloads_total', { result: 'success' })[0]?.value, 0);

  // The next reload tries the change again: settings that start replace the running one.
  const again = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf(fixture('--name', 'swapped'))));
  cli.child.kill('SIGHUP');
  const second = await cli.waitFor((r) => r.msg === 'config reloaded', again);
  assert.deepEqual([second.changed, second.kept], [['swap'], undefined]);
  assert.equal((await openSession(url)).serverName, 'swapped');
  assert.equal(await cli.stop(), 0);
});
