// Found by h-docs (2026-12): a reload compared upstream entries as JSON text, and a merged `limits`
// takes its key order from what the file set (the schema's defaults follow). Adding a top-level
// `requestTimeoutMs` beside an upstream that sets its own reordered that upstream's limits, so the
// reload counted it as changed and restarted it (its sessions ended, a stdio child respawned)
// although none of its values changed; writing the top-level limits in another order restarted
// every upstream. Entries now compare by content.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../src/config/load.js';
import { configGateway } from '../helpers/ops.js';

const at = (raw: Record<string, unknown>) => validateConfig({ listen: { host: '127.0.0.1', port: 0 }, ...raw }, 'test', { env: {} });

test('a reload restarts only the upstreams whose settings changed, whatever order the limits are written in', async (t) => {
  const upstreams = {
    plain: { transport: 'embedded' },
    own: { transport: 'embedded', limits: { requestTimeoutMs: 1000 } },
  };
  const gw = await configGateway(t, { limits: { maxSessions: 500, sessionIdleMs: 60_000 }, upstreams });
  const swapped = await gw.reload(at({ limits: { sessionIdleMs: 60_000, maxSessions: 500 }, upstreams }));
  assert.deepEqual([swapped.changed, swapped.unchanged, swapped.needRestart], [[], ['plain', 'own'], []]);
  const added = await gw.reload(at({ limits: { requestTimeoutMs: 60_000, sessionIdleMs: 60_000, maxSessions: 500 }, upstreams }));
  assert.deepEqual([added.changed, added.unchanged], [['plain'], ['own']]);
  assert.equal(gw.config.upstreams.own.limits.requestTimeoutMs, 1000);
  assert.equal(gw.config.upstreams.plain.limits.requestTimeoutMs, 60_000);
});
