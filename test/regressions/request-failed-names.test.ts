// Found by an operator trial: a `request failed` line carried only `rpcId` (and `sessionId`), so a
// line such as `Upstream unavailable: child exited (4)` did not say which upstream's child it was,
// nor through which mount. It now carries `mount` and, once the request reached one, `upstream`
// (the access line's names: for the aggregate mount, the member), in both eras.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { recordingLogger, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/once-server.mjs');

test('request failed names the mount and the upstream whose child exited (2026-07-28, 2025, the aggregate member)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-names-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const once = (name: string) => ({ command: process.execPath, args: [FIXTURE, path.join(dir, name)] });
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      admin: false,
      // Restarts wait long: each child exits once, for the call that kills it.
      limits: { upstreamBackoffMinMs: 60_000, upstreamBackoffMaxMs: 60_000 },
      upstreams: { alpha: once('alpha'), beta: once('beta'), gamma: once('gamma') },
      aggregate: { upstreams: ['gamma'], path: '/all/mcp' },
    },
    'test',
    { expandEnv: false },
  );
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config, recordingLogger(records));
  t.after(() => gw.close());
  const url = (p: string) => gw.urls[0].replace(/\/[^/]+\/mcp$/, p);

  const die = (id: number, name = 'die') => modernBody(id, 'tools/call', { name, arguments: {} });
  const modern = await post(url('/alpha/mcp'), die(11), modernHeaders('tools/call', 'die'));
  assert.match(modern.text, /child exited \(4\)/);
  const h = await initSession(url('/beta/mcp'));
  const legacy = await post(url('/beta/mcp'), { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'die', arguments: {} } }, h);
  assert.match(legacy.text, /child exited \(4\)/);
  const aggregated = await post(url('/all/mcp'), die(13, 'gamma__die'), modernHeaders('tools/call', 'gamma__die'));
  assert.match(aggregated.text, /child exited \(4\)/);

  const failed = records.filter((r) => r.msg === 'request failed');
  const pick = (r: Record<string, unknown>) => ({ rpcId: r.rpcId, mount: r.mount, upstream: r.upstream, code: r.code, error: r.error });
  assert.deepEqual(failed.map(pick), [
    { rpcId: 11, mount: 'alpha', upstream: 'alpha', code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', error: 'Upstream unavailable: child exited (4)' },
    { rpcId: 12, mount: 'beta', upstream: 'beta', code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', error: 'Upstream unavailable: child exited (4)' },
    { rpcId: 13, mount: 'aggregate', upstream: 'gamma', code: 'SWY_ERR_UPSTREAM_UNAVAILABLE', error: 'Upstream unavailable: child exited (4)' },
  ]);
  assert.equal(typeof failed[1].sessionId, 'string');
});
