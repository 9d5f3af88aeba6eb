// Found by h-docs (2026-12): a reload that changed the `cluster` section (a new key, another
// replica id, `readinessRequiresRedis`, another Redis) was reported as `config reloaded` with
// nothing to restart, while the running replica went on with the section it started with (the
// Redis client, the sealer and the replica id are made once, at start). An operator rotating the
// key through a ConfigMap and `--watch` had no sign that nothing changed. The section is now a
// restart key: the reload names it in `needRestart` (the `config keys changed that take effect
// after a restart` line) and the running values stay.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../src/config/load.js';
import { configGateway } from '../helpers/ops.js';

test('a reload that changes the cluster section says it needs a restart, and keeps the running section', async (t) => {
  const key = Buffer.alloc(32, 1).toString('base64');
  const raw = { cluster: { key, replicaId: 'r1' }, upstreams: { a: { transport: 'embedded' } } };
  const gw = await configGateway(t, raw);
  assert.equal(gw.cluster.replicaId, 'r1');
  const next = validateConfig(
    { ...raw, listen: { host: '127.0.0.1', port: 0 }, cluster: { key: Buffer.alloc(32, 2).toString('base64'), replicaId: 'r2', sessionMaxAgeMs: 60_000 } },
    'test',
    { env: {} },
  );
  const report = await gw.reload(next);
  assert.deepEqual(report.needRestart, ['cluster']);
  assert.deepEqual([report.added, report.removed, report.changed], [[], [], []]);
  assert.equal(gw.cluster.replicaId, 'r1');
  assert.deepEqual(gw.config.cluster, { key, replicaId: 'r1', sessionMaxAgeMs: 86_400_000, readinessRequiresRedis: false });
  assert.ok(gw.records.some((r) => r.msg === 'config keys changed that take effect after a restart' && JSON.stringify(r.keys) === '["cluster"]'));
});
