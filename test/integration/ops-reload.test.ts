// Hot reload: added upstreams start and their mounts appear, removed ones drain their calls and
// stop, changed ones restart, unchanged ones keep their sessions; the aggregate follows its
// members; keys that need a restart are reported and left alone; `--watch` reloads on a change.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { statusSourceOf } from '../../src/ops.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { modernBody, modernHeaders, openSse, post } from '../helpers/http.js';
import { configFile, configGateway, RAW_SERVER, openSession } from '../helpers/ops.js';

const fixture = (...args: string[]) => ({ command: process.execPath, args: [RAW_SERVER, 'stdio', ...args] });

const echo = (url: string, h: Record<string, string>, id: number, name = 'echo') =>
  post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: `m${id}` } } }, h);

test('a reload adds, drains and removes, restarts what changed, and leaves the rest (sessions included) alone', async (t) => {
  const before = {
    upstreams: { keep: { transport: 'embedded' }, gone: { transport: 'embedded' }, swap: fixture() },
    aggregate: { upstreams: ['keep', 'gone'] },
  };
  const gw = await configGateway(t, before);
  const url = (name: string) => new URL(`/${name}/mcp`, gw.url).href;
  const keep = await openSession(url('keep'));
  const swap = await openSession(url('swap'));
  assert.equal(swap.serverName, 'raw-fixture');
  const aggUrl = new URL('/mcp', gw.url).href;
  const agg = await openSession(aggUrl);
  const stream = await openSse(aggUrl, 'GET', {
    accept: 'text/event-stream',
    'mcp-session-id': agg.headers['mcp-session-id'],
    'mcp-protocol-version': '2025-06-18',
  });
  t.after(() => stream.close());
  const slow = post(url('gone'), modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 4, stepMs: 500 } }), modernHeaders('tools/call', 'slow'));
  const goneMount = gw.mounts.find((m) => m.name === 'gone')!;
  while (goneMount.executor.inFlight === 0) await new Promise((r) => setImmediate(r));

  const raw = {
    listen: { host: '127.0.0.1', port: 0 },
    upstreams: { keep: { transport: 'embedded' }, swap: fixture('--name', 'swapped'), fresh: fixture() },
    aggregate: { upstreams: ['keep', 'fresh'] },
  };
  const report = await gw.reload(validateConfig(raw, 'test', { env: {} }));
  assert.deepEqual(report, { added: ['fresh'], removed: ['gone'], changed: ['swap'], unchanged: ['keep', 'aggregate'], policy: [], needRestart: [], kept: [] });
  // The removed upstream drained: its call finished before the reload did.
  assert.equal((await slow).status, 200);
  assert.deepEqual(
    gw.mounts.map((m) => m.name),
    ['keep', 'swap', 'fresh', 'aggregate'],
  );
  const gone = await post(url('gone'), modernBody(2, 'tools/list'), modernHeaders('tools/list'));
  assert.deepEqual([gone.status, gone.json], [404, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not found' } }]);

  assert.deepEqual((await echo(url('keep'), keep.headers, 3)).json, { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Echo: m3' }] } });
  const stale = await echo(url('swap'), swap.headers, 4);
  assert.equal(stale.status, 404);
  assert.equal((await openSession(url('swap'))).serverName, 'swapped');
  assert.deepEqual((await echo(url('fresh'), (await openSession(url('fresh'))).headers, 5)).json, {
    jsonrpc: '2.0',
    id: 5,
    result: { content: [{ type: 'text', text: 'Echo: m5' }] },
  });

  // The aggregate session lives on and hears that its lists changed.
  assert.deepEqual(JSON.parse((await stream.next()).data), { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: {} });
  const list = await post(aggUrl, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, agg.headers);
  const prefixes = new Set((list.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name.split('__')[0]));
  assert.deepEqual([...prefixes].sort(), ['fresh', 'keep']);
  assert.equal(gw.supervised.has('gone'), false);

  // What needs a restart is said and left as it was.
  const moved = validateConfig({ ...raw, listen: { host: '127.0.0.1', port: 1 }, allowedOrigins: ['example.com'] }, 'test', { env: {} });
  const second = await gw.reload(moved);
  assert.deepEqual(second.needRestart, ['listen', 'allowedOrigins']);
  assert.deepEqual([second.added, second.removed, second.changed], [[], [], []]);
  assert.equal(gw.config.listen.port, 0);
  assert.deepEqual(gw.config.allowedOrigins, ['localhost', '127.0.0.1', '[::1]']);
});

test("an edit of an upstream's description alone restarts nothing: its sessions live on (found by a trial)", async (t) => {
  const gw = await configGateway(t, { upstreams: { keep: { transport: 'embedded', description: 'first words' } } });
  const url = new URL('/keep/mcp', gw.url).href;
  const session = await openSession(url);
  const raw = { listen: { host: '127.0.0.1', port: 0 }, upstreams: { keep: { transport: 'embedded', description: 'second words' } } };
  const report = await gw.reload(validateConfig(raw, 'test', { env: {} }));
  assert.deepEqual(report, { added: [], removed: [], changed: [], unchanged: ['keep'], policy: [], needRestart: [], kept: [] });
  assert.equal(gw.config.upstreams.keep.description, 'second words');
  assert.deepEqual((await echo(url, session.headers, 1)).json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: m1' }] } });
});

test('an edit of `optional` alone restarts nothing: readiness follows it at once, and the sessions of the upstream live on (left open by an earlier note)', async (t) => {
  const raw = (optional: boolean) => ({
    listen: { host: '127.0.0.1', port: 0 },
    upstreams: { keep: { transport: 'embedded', optional }, dead: { url: 'http://127.0.0.1:9/mcp', optional } },
  });
  const gw = await configGateway(t, { upstreams: raw(false).upstreams });
  const status = statusSourceOf(gw);
  const url = new URL('/keep/mcp', gw.url).href;
  const session = await openSession(url);
  assert.equal(status.ready().ready, false);
  assert.match(status.ready().reasons.join('\n'), /^upstream dead is (down|starting)/);

  const report = await gw.reload(validateConfig(raw(true), 'test', { env: {} }));
  assert.deepEqual(report, { added: [], removed: [], changed: [], unchanged: ['keep', 'dead'], policy: [], needRestart: [], kept: [] });
  assert.deepEqual(status.ready(), { ready: true, reasons: [], degraded: [] });
  assert.deepEqual((await echo(url, session.headers, 1)).json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: m1' }] } });

  await gw.reload(validateConfig(raw(false), 'test', { env: {} }));
  assert.equal(status.ready().ready, false);
  assert.deepEqual((await echo(url, session.headers, 2)).json, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'Echo: m2' }] } });
});

test('--watch follows a Kubernetes ConfigMap update: the ..data symlink swapped, no event naming the file (found by a trial)', async (t) => {
  // The layout the kubelet writes: config.yaml -> ..data/config.yaml, ..data -> ..<version>;
  // an update writes a new version directory, links ..data_tmp to it and renames that over ..data.
  const dir = mkdtempSync(path.join(tmpdir(), 'configmap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = { listen: { port: 0 }, admin: false, upstreams: { demo: { transport: 'embedded' } } };
  mkdirSync(path.join(dir, '..v1'));
  writeFileSync(path.join(dir, '..v1', 'config.json'), JSON.stringify(config));
  symlinkSync('..v1', path.join(dir, '..data'));
  symlinkSync(path.join('..data', 'config.json'), path.join(dir, 'config.json'));
  const cli = await startOpsCli(t, ['--config', path.join(dir, 'config.json'), '--watch', '--no-admin']);
  const from = cli.records.length;
  mkdirSync(path.join(dir, '..v2'));
  writeFileSync(path.join(dir, '..v2', 'config.json'), JSON.stringify({ ...config, upstreams: { ...config.upstreams, more: { transport: 'embedded' } } }));
  symlinkSync('..v2', path.join(dir, '..data_tmp'));
  renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([done.added, done.removed, done.changed], [['more'], [], []]);
  const r = await post(new URL('/more/mcp', cli.url).href, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(r.status, 200);
  // Another file written in the directory changes nothing: no reload.
  const after = cli.records.length;
  writeFileSync(path.join(dir, 'unrelated.txt'), 'x');
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(
    cli.records.slice(after).some((r) => r.msg === 'config reloaded'),
    false,
  );
});

test('--watch reloads the file when it changes', async (t) => {
  const config = { listen: { port: 0 }, admin: false, upstreams: { demo: { transport: 'embedded' } } };
  const file = configFile(t, config);
  const cli = await startOpsCli(t, ['--config', file, '--watch', '--no-admin']);
  const from = cli.records.length;
  writeFileSync(file, JSON.stringify({ ...config, upstreams: { ...config.upstreams, more: { transport: 'embedded' } } }));
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([done.added, done.removed, done.changed], [['more'], [], []]);
  const r = await post(new URL('/more/mcp', cli.url).href, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(r.status, 200);
});
