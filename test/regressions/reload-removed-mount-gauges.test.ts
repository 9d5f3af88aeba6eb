// Regression (found by an operations trial): a reload that removed a mount left its sessions in
// `switchyard_sessions` for good. The metrics take the `mount` label only from the configured
// mounts, read live; the removed mount's sessions close during its drain, after the config no
// longer lists it, so each close was counted under `_other` (a new series, kept at 0) while the
// removed mount's series kept its last count, which /status.json (which no longer lists the
// mount) did not. The same held for `switchyard_streams`. Now a close is counted under the mount
// its open was, and a removed mount has no series.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { startOpsCli } from '../helpers/ops-cli.js';
import { initSession, openSse } from '../helpers/http.js';
import { configFile, find, getText } from '../helpers/ops.js';

test('a reload that removes a mount removes its session and stream series, and counts nothing under _other', async (t) => {
  const demo = { transport: 'embedded' };
  const config = { listen: { host: '127.0.0.1', port: 0 }, admin: { port: 0 }, upstreams: { keep: demo, gone: demo } };
  const file = configFile(t, config);
  const cli = await startOpsCli(t, ['--config', file]);
  await initSession(cli.urls.keep);
  const gone = await initSession(cli.urls.gone);
  const stream = await openSse(cli.urls.gone, 'GET', { ...gone, accept: 'text/event-stream' });
  t.after(() => stream.close());
  await initSession(cli.urls.gone);
  const gauges = async () => {
    const text = (await getText(`${cli.admin}metrics`)).text;
    return ['switchyard_sessions', 'switchyard_streams'].flatMap((name) => find(text, name).map((s) => [name, s.labels.mount, s.labels.kind ?? '', s.value]));
  };
  while ((await gauges()).length < 3) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(await gauges(), [
    ['switchyard_sessions', 'keep', '', 1],
    ['switchyard_sessions', 'gone', '', 2],
    ['switchyard_streams', 'gone', 'get', 1],
  ]);

  const from = cli.records.length;
  writeFileSync(file, JSON.stringify({ ...config, upstreams: { keep: demo } }));
  cli.child.kill('SIGHUP');
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual(done.removed, ['gone']);
  assert.deepEqual(await gauges(), [['switchyard_sessions', 'keep', '', 1]]);
});
