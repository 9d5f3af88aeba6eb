// The library's ready(), waiting on a stdio child that never answers its handshake, settled with
// the start that close() ended: it resolved once close() had stopped the child (about 3 s later,
// the stop's SIGTERM step), as a failed start without requireUpstreams does, though the gateway
// was gone. docs/embedding.md says ready() rejects after close(): a pending ready() now rejects
// with SWY_ERR_ADMISSION_SHUTTING_DOWN as soon as close() begins, and never resolves.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { switchyard } from '../helpers/library.js';

const STUBBORN = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');

/** Waits until the child wrote its `pid N` line (it runs, and its handshake is waiting). */
async function childRunning(records: Array<Record<string, unknown>>): Promise<void> {
  const end = Date.now() + 30_000;
  const seen = () => records.some((r) => r.msg === 'upstream stderr' && typeof r.line === 'string' && r.line.startsWith('pid '));
  while (!seen() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(seen(), 'the child started');
}

for (const requireUpstreams of [false, true]) {
  test(`requireUpstreams ${requireUpstreams}: ready() pending on a child that never answers rejects SWY_ERR_ADMISSION_SHUTTING_DOWN once close() begins, before close() ends`, async (t) => {
    const sy = switchyard(t, { requireUpstreams, upstreams: { s: { command: process.execPath, args: [STUBBORN, 'hang-start'] } } });
    const order: string[] = [];
    const pending = sy.ready().then(
      () => {
        order.push('ready resolved');
      },
      (err: unknown) => {
        order.push(`ready rejected ${(err as { code?: string }).code}`);
        throw err;
      },
    );
    await childRunning(sy.records);
    const closing = sy.close().then(() => order.push('closed'));
    // Called while close() runs: refused too.
    await assert.rejects(sy.ready(), { code: 'SWY_ERR_ADMISSION_SHUTTING_DOWN', message: 'Server is shutting down' });
    await assert.rejects(pending, { code: 'SWY_ERR_ADMISSION_SHUTTING_DOWN' });
    await closing;
    assert.deepEqual(order, ['ready rejected SWY_ERR_ADMISSION_SHUTTING_DOWN', 'closed']);
  });
}
