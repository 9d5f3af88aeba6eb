// Regression (found by an operator's trial of hot reload): removing an HTTP+SSE upstream by a reload
// took 30 s (`upstreamRequestTimeoutMs`) instead of at most one `upstreamStopTimeoutMs` step after
// its drain, when a client session had subscribed to one of its resources: the upstream session's
// last POST was still waiting for its answer's headers, and the cut meant to end that wait did
// nothing (undici's Agent forgets its per-origin pools as soon as `close()` starts, so the Agent's
// own `destroy()` after it reached no socket). Until the reload finished, every later SIGHUP
// waited behind it, and so did a SIGTERM's shutdown.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, RAW_SERVER } from '../helpers/ops.js';
import { everythingHttp } from '../helpers/servers.js';

test('a reload that removes an HTTP+SSE upstream with a subscribed session ends within the stop bound', async (t) => {
  const sse = await everythingHttp(t, 'sse');
  const stay = { command: process.execPath, args: [RAW_SERVER, 'stdio'] };
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    admin: false,
    limits: { upstreamStopTimeoutMs: 300, shutdownGraceMs: 500 },
    upstreams: { stay, old: { type: 'sse', url: sse.url } },
  };
  const file = configFile(t, config);
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);

  const client = new Client({ name: 'subscriber', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(cli.urls.old)));
  const { resources } = await client.listResources();
  await client.subscribeResource({ uri: resources[0].uri });
  await client.close();

  const from = cli.records.length;
  writeFileSync(file, JSON.stringify({ ...config, upstreams: { stay } }));
  const started = Date.now();
  cli.child.kill('SIGHUP');
  const done = await cli.waitFor((r) => r.msg === 'config reloaded' || r.msg === 'config reload failed; the running config stays', from);
  const took = Date.now() - started;
  assert.equal(done.msg, 'config reloaded');
  assert.deepEqual(done.removed, ['old']);
  // The drain (no call in flight) plus one stop step of 300 ms, with room for a slow machine;
  // without the fix it is the 30 s of upstreamRequestTimeoutMs.
  assert.ok(took < 5000, `the reload took ${took} ms`);
  assert.equal(await cli.stop(), 0);
});
