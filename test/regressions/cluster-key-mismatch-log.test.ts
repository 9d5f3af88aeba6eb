// Found by a trial (2026-12, three replicas behind nginx, one started with another
// SWITCHYARD_CLUSTER_KEY): that replica answered 404 to every session the others had opened, and
// they 404 to its own, so clients re-initialized over and over, while nothing in its logs,
// /status.json or /metrics told that from an ordinary unknown session. A replica now names its
// key id in its `cluster replica` line, and warns (at most once a minute) when a well-formed
// sealed id names a key it does not hold, with that key id and its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCli } from '../helpers/cli.js';
import { H2025, initSession, post } from '../helpers/http.js';

const UNKNOWN_KEY = 'cluster token sealed with a key this replica does not hold';

test('a replica with another cluster key names its key id at start and warns once about ids sealed with a key it lacks', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-key-mismatch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'cluster:\n  key: ${SWITCHYARD_CLUSTER_KEY}\n');
  const start = (id: string, fill: number) =>
    startCli(t, ['--no-admin', '--config', file], {
      ...process.env,
      SWITCHYARD_REPLICA_ID: id,
      SWITCHYARD_CLUSTER_KEY: Buffer.alloc(32, fill).toString('base64'),
    });
  const [a, b] = await Promise.all([start('a', 1), start('b', 2)]);
  const keyIdOf = (r: typeof a) => r.records().find((x) => x.msg === 'cluster replica')?.keyId;
  const kidA = keyIdOf(a);
  const kidB = keyIdOf(b);
  assert.match(String(kidA), /^[A-Za-z0-9_-]{8}$/);
  assert.match(String(kidB), /^[A-Za-z0-9_-]{8}$/);
  assert.notEqual(kidA, kidB);

  const h = await initSession(a.url);
  assert.equal(h['mcp-session-id'].split('.')[1], kidA);
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  for (let i = 0; i < 3; i++) {
    const r = await post(b.url, { ...list, id: i + 1 }, { ...h, 'mcp-protocol-version': '2025-06-18' });
    assert.equal(r.status, 404);
  }
  // A token of no sealed shape is an ordinary unknown session: no warning for it.
  assert.equal((await post(b.url, list, { ...H2025, 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-06-18' })).status, 404);
  const warned = b.records().filter((x) => x.msg === UNKNOWN_KEY);
  assert.deepEqual(
    warned.map(({ level, keyId, currentKeyId }) => ({ level, keyId, currentKeyId })),
    [{ level: 40, keyId: kidA, currentKeyId: kidB }],
  );
  assert.equal(a.records().filter((x) => x.msg === UNKNOWN_KEY).length, 0);
});
