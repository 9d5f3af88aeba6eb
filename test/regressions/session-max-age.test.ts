// Found by h-mutants: with `cluster` on, a 2025 session id carries its creation time and is
// refused once `cluster.sessionMaxAgeMs` has passed (docs/scaling.md), even while the session is
// still held and in use on the replica; loosening that check left every test green. The clock
// (Date) is the one fake: the session is used at 59 s and refused at 61 s of a 60 s maximum.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { post } from '../helpers/http.js';
import { openSession, sessionHeaders } from '../helpers/identity.js';
import { CLUSTER_KEY, startReplica } from '../helpers/replicas.js';

test('a sealed 2025 session is 404 once cluster.sessionMaxAgeMs has passed since it opened, though in use', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const r = await startReplica(t, {
    id: 'a',
    config: { cluster: { key: CLUSTER_KEY, replicaId: 'a', sessionMaxAgeMs: 60_000 }, upstreams: { demo: { transport: 'embedded' } } },
  });
  const sid = await openSession(r.url);
  const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
  t.mock.timers.tick(59_000);
  const used = await post(r.url, ping(1), sessionHeaders(sid));
  assert.deepEqual([used.status, used.json], [200, { jsonrpc: '2.0', id: 1, result: {} }]);
  t.mock.timers.tick(2_000);
  const late = await post(r.url, ping(2), sessionHeaders(sid));
  assert.deepEqual([late.status, late.json], [404, { jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'Session not found' } }]);
});
