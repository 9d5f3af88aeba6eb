// A call cut by its request deadline told the upstream `client cancelled` in its
// notifications/cancelled (cancelReasonOf mapped every cause but a drain's and a reload's to it),
// which is not what happened: the gateway gave up on the upstream. Now the reason says so,
// `request timed out after <N> ms`, for the mount's own deadline and for an aggregate member's
// shorter one (whose signal carries SWY_ERR_REQ_CANCELLED, caused by the deadline).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cancelledReasons } from '../helpers/cancelled.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

const ELICITING = path.join(REPO_ROOT, 'test/fixtures/eliciting-server.mjs');
/** No input asked: with ANSWER_AFTER_MS the fixture answers after that long, a slow call. */
const SLOW = { count: 0, tag: 'slow' };

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond());
}

/** A gateway with the eliciting child as upstream `slow` (answers after 60 s, deadline 400 ms) behind the aggregate mount too. */
async function slowGateway(t: Parameters<typeof configGateway>[0] & { after(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-deadline-reason-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cancelled.jsonl');
  const env = { ANSWER_AFTER_MS: '60000', CANCELLED_FILE: file };
  const gw = await configGateway(t, {
    admin: false,
    aggregate: {},
    upstreams: { slow: { transport: 'stdio', command: process.execPath, args: [ELICITING], env, limits: { requestTimeoutMs: 400 } } },
  });
  return { gw, reasons: () => cancelledReasons(file) };
}

test("a call cut by its mount's requestTimeoutMs: the upstream is told 'request timed out after 400 ms'", async (t) => {
  const { gw, reasons } = await slowGateway(t);
  const url = gw.mounts.find((m) => m.name === 'slow')!.url;
  const r = await post(url, modernBody(1, 'tools/call', { name: 'ask-many', arguments: SLOW }), modernHeaders('tools/call', 'ask-many'));
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Request timed out: 400 ms' } });
  await until(() => reasons().length > 0);
  assert.deepEqual(reasons(), ['request timed out after 400 ms']);
});

test("through the aggregate, a call cut by the member's shorter deadline: the member is told 'request timed out after 400 ms'", async (t) => {
  const { gw, reasons } = await slowGateway(t);
  const url = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const name = 'slow__ask-many';
  const r = await post(url, modernBody(2, 'tools/call', { name, arguments: SLOW }), modernHeaders('tools/call', name));
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Request timed out: 400 ms' } });
  await until(() => reasons().length > 0);
  assert.deepEqual(reasons(), ['request timed out after 400 ms']);
});
