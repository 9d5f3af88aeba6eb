// Named in the closing notes of the last round: the protocol faults an upstream commits that no
// call sees (a batch dropped from an upstream without batches, a batched response nobody waits
// for, a second response for one id, a line that is not JSON, a response to an id never sent)
// were only logged, so no alert could fire on them. Each is now counted in
// `switchyard_upstream_protocol_faults_total{upstream, kind}` on the admin /metrics
// (docs/operations.md, "Metrics").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, find, getText } from '../helpers/ops.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');
const NAME = 'switchyard_upstream_protocol_faults_total';

test('a stdio child that commits each fault outside a call: each kind counted once, under its upstream', async (t) => {
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    upstreams: { breaking: { transport: 'stdio', command: process.execPath, args: [FIXTURE, '2025-11-25'] } },
  });
  const cli = await startOpsCli(t, ['--config', file]);
  const metrics = async () => (await getText(new URL('/metrics', cli.admin).href)).text;
  // Nothing yet: the counter has no series before a fault.
  assert.deepEqual(find(await metrics(), NAME), []);

  const r = await post(cli.url, modernBody(9, 'tools/call', { name: 'faults', arguments: {} }), modernHeaders('tools/call', 'faults'));
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'first' }]);
  // The second response comes in the same write as the first, so it is counted once the call's
  // warn line about it is written (the log line and the count are one step).
  await cli.waitFor((x) => x.msg === 'upstream sent a second response for one id');

  const counted = find(await metrics(), NAME)
    .map((s) => [s.labels.upstream, s.labels.kind, s.value])
    .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
  assert.deepEqual(counted, [
    ['breaking', 'batch_dropped', 1],
    ['breaking', 'batched_response', 1],
    ['breaking', 'duplicate_response', 1],
    ['breaking', 'unknown_id', 1],
    ['breaking', 'unparsable', 1],
  ]);
});
