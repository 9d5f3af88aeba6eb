// A failed aggregate fan-out names the member it failed with. Found in review: the `request
// failed` line of an aggregate call names its member (request-failed-names.test.ts), but a list
// the aggregate gathers from several members, which fails only when every member's list failed
// (a member whose list fails is otherwise left out, and the request succeeds), named no upstream:
// the line said `Upstream protocol error: …` without saying whose. It now names the member whose
// error the request failed with (the last one asked; the others were each logged at warn,
// `aggregate: member left out of the list`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { recordingLogger, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';

const MALFORMED = path.join(REPO_ROOT, 'test/fixtures/malformed-server.mjs');
const BARRIER = path.join(REPO_ROOT, 'test/fixtures/barrier-server.mjs');
/** A member whose tools/list answer has a null entry: SWY_ERR_UPSTREAM_PROTOCOL, the upstream's fault. */
const broken = { command: process.execPath, args: [MALFORMED, 'null-entry'] };

async function start(t: { after(fn: () => Promise<void>): void }, upstreams: Record<string, unknown>, members: string[], limits: Record<string, unknown> = {}) {
  const config = validateConfig(
    { listen: { host: '127.0.0.1', port: 0 }, admin: false, limits, upstreams, aggregate: { upstreams: members, path: '/all/mcp' } },
    'test',
    {
      expandEnv: false,
    },
  );
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config, recordingLogger(records));
  t.after(() => gw.close());
  return { url: gw.mounts.find((m) => m.name === 'aggregate')!.url, records };
}

test('an aggregate tools/list that fails in every member names the member it failed with; one that a member answers does not fail', async (t) => {
  // The embedded demo answers: the broken member is left out, the list is served, nothing failed.
  const partial = await start(t, { demo: { type: 'embedded' }, bad: broken }, ['demo', 'bad']);
  const listed = await post(partial.url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(listed.status, 200, listed.text);
  assert.ok(
    (listed.json as { result: { tools: Array<{ name: string }> } }).result.tools.some((x) => x.name === 'demo__echo'),
    listed.text,
  );
  assert.deepEqual(
    partial.records.filter((r) => r.msg === 'request failed'),
    [],
  );

  // Every member's list fails: the request fails with the last member's error, and names it.
  const all = await start(t, { first: broken, second: broken }, ['first', 'second']);
  const modern = await post(all.url, modernBody(2, 'tools/list'), modernHeaders('tools/list'));
  assert.equal((modern.json as { error: { code: number } }).error.code, -32603, modern.text);
  const h = await initSession(all.url, '2025-11-25');
  const legacy = await post(all.url, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, h);
  assert.equal((legacy.json as { error: { code: number } }).error.code, -32603, legacy.text);

  const failed = all.records.filter((r) => r.msg === 'request failed');
  const pick = (r: Record<string, unknown>) => ({ rpcId: r.rpcId, mount: r.mount, upstream: r.upstream, code: r.code });
  assert.deepEqual(failed.map(pick), [
    { rpcId: 2, mount: 'aggregate', upstream: 'second', code: 'SWY_ERR_UPSTREAM_PROTOCOL' },
    { rpcId: 3, mount: 'aggregate', upstream: 'second', code: 'SWY_ERR_UPSTREAM_PROTOCOL' },
  ]);
  const leftOut = all.records.filter((r) => r.msg === 'aggregate: member left out of the list').map((r) => r.upstream);
  assert.deepEqual(leftOut, ['first', 'second', 'first', 'second']);
});

test('an aggregate tools/list past its deadline names the member still being asked, not none', async (t) => {
  // `slow` answers its list only after 5 s (it waits for a member that is never asked); the
  // request's deadline (1 s) comes first. The executor answers with its own deadline error at
  // once, so the member's name is noted when the deadline fires (before: no upstream on the line).
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-barrier-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const slow = { command: process.execPath, args: [BARRIER, dir, 'slow', 'never'] };
  const gw = await start(t, { demo: { type: 'embedded' }, slow }, ['demo', 'slow'], { requestTimeoutMs: 1000 });
  const r = await post(gw.url, modernBody(4, 'tools/list'), modernHeaders('tools/list'));
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 4, error: { code: -32000, message: 'Request timed out: 1000 ms' } });
  const failed = gw.records.filter((x) => x.msg === 'request failed');
  assert.deepEqual(
    failed.map((x) => ({ rpcId: x.rpcId, mount: x.mount, upstream: x.upstream, code: x.code })),
    [{ rpcId: 4, mount: 'aggregate', upstream: 'slow', code: 'SWY_ERR_REQ_DEADLINE' }],
  );
});
