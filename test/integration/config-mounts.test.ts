// A config file with several upstreams: each on its own mount, plus the aggregate mount.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { connect } from '../helpers/clients.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernHttp } from '../helpers/servers.js';
import pino from 'pino';

const require = createRequire(import.meta.url);

test('an mcpServers file with a stdio and an HTTP upstream: both at their paths, and the aggregate lists both with prefixes', async (t) => {
  const modern = await modernHttp(t);
  const config = validateConfig(
    {
      listen: { port: 0 },
      mcpServers: {
        everything: { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] },
        modern: { type: 'http', url: modern.url },
      },
      aggregate: {},
    },
    'test',
  );
  const gw = await startGatewayFromConfig(config, pino({ level: 'silent' }));
  t.after(() => gw.close());
  assert.deepEqual(
    gw.mounts.map((m) => [m.name, new URL(m.url).pathname]),
    [
      ['everything', '/everything/mcp'],
      ['modern', '/modern/mcp'],
      ['aggregate', '/mcp'],
    ],
  );

  const a = await connect('v2-default', gw.mounts[0].url);
  t.after(() => a.close());
  assert.deepEqual((await a.callTool({ name: 'echo', arguments: { message: 'one' } })).content, [{ type: 'text', text: 'Echo: one' }]);

  const b = await connect('v2-2026', gw.mounts[1].url);
  t.after(() => b.close());
  assert.deepEqual(
    (await b.listTools()).tools.map((x) => x.name),
    ['echo', 'slow', 'confirm'],
  );

  for (const kind of ['v2-2026', 'v1-streamable'] as const) {
    const agg = await connect(kind, gw.mounts[2].url);
    const names = (await agg.listTools()).tools.map((x) => x.name);
    assert.ok(names.includes('everything__echo') && names.includes('everything__get-sum'), names.join());
    assert.ok(names.includes('modern__echo') && names.includes('modern__confirm'), names.join());
    assert.deepEqual((await agg.callTool({ name: 'modern__echo', arguments: { message: kind } })).content, [{ type: 'text', text: `Echo: ${kind}` }]);
    assert.deepEqual((await agg.callTool({ name: 'everything__echo', arguments: { message: kind } })).content, [{ type: 'text', text: `Echo: ${kind}` }]);
    const asked = await agg.callTool({ name: 'modern__confirm', arguments: {} });
    assert.deepEqual(asked.content, [{ type: 'text', text: 'Hello, Ada!' }]);
    await agg.close();
  }
});

test('switchyard validate lists every failing path and exits 1; a valid file exits 0', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-config-'));
  try {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ listen: { port: 'x' }, upstreams: { 'bad name!': { url: 'nope' } } }));
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist/src/cli/main.js'), 'validate', bad], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    // The report is the command's output: stdout, like a linter's (README, docs/config.md).
    assert.match(r.stdout, /\/listen\/port/);
    assert.match(r.stdout, /\/upstreams/);
    assert.equal(r.stderr, '');
    const good = path.join(dir, 'good.yaml');
    writeFileSync(good, 'mcpServers:\n  demo:\n    command: node\n    args: [server.js]\n');
    const ok = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist/src/cli/main.js'), 'validate', good], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^ok: 1 upstream/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
