// Regression from a user trial: the aggregate mount listed the same URI once per member, and a
// read went to whichever member listed it last. Every member's resources are now distinct
// (`switchyard://<member>/<uri>`), and a read goes to the member its URI names.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');

test('an aggregate over two upstreams that both list data://greeting lists both, and each read returns its own text', async (t) => {
  const config = validateConfig(
    {
      listen: { port: 0 },
      upstreams: {
        one: { command: process.execPath, args: [RAW, 'stdio', '--greeting', 'Hello from one'] },
        two: { command: process.execPath, args: [RAW, 'stdio', '--greeting', 'Hello from two'] },
      },
      aggregate: {},
    },
    'test',
  );
  const gw = await startGatewayFromConfig(config, pino({ level: 'silent' }));
  t.after(() => gw.close());
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;

  const list = await post(agg, modernBody(1, 'resources/list'), modernHeaders('resources/list'));
  assert.equal(list.status, 200, list.text);
  assert.deepEqual((list.json as { result: { resources: unknown } }).result.resources, [
    { uri: 'switchyard://one/data://greeting', name: 'greeting', mimeType: 'text/plain' },
    { uri: 'switchyard://two/data://greeting', name: 'greeting', mimeType: 'text/plain' },
  ]);
  for (const [member, text] of [
    ['one', 'Hello from one'],
    ['two', 'Hello from two'],
  ]) {
    const uri = `switchyard://${member}/data://greeting`;
    const r = await post(agg, modernBody(2, 'resources/read', { uri }), modernHeaders('resources/read', uri));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual((r.json as { result: { contents: unknown } }).result.contents, [{ uri, mimeType: 'text/plain', text }]);
  }
  const unknown = await post(
    agg,
    modernBody(3, 'resources/read', { uri: 'switchyard://three/data://greeting' }),
    modernHeaders('resources/read', 'switchyard://three/data://greeting'),
  );
  assert.deepEqual(unknown.json, {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32602, message: 'Resource not found: switchyard://three/data://greeting', data: { uri: 'switchyard://three/data://greeting' } },
  });
  // A member's own not-found names the URI the client asked for in `data.uri`, not the member's
  // (found by a trial, 2026-12-03: it said data://missing).
  const missing = 'switchyard://one/data://missing';
  const notThere = await post(agg, modernBody(4, 'resources/read', { uri: missing }), modernHeaders('resources/read', missing));
  assert.deepEqual(notThere.json, { jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Resource not found', data: { uri: missing } } });

  // The official v1 client (2025 era) takes the rewritten URIs as they are.
  const client = new Client({ name: 'trial', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(agg)));
  t.after(() => client.close());
  const { resources } = await client.listResources();
  assert.deepEqual(
    resources.map((r) => r.uri),
    ['switchyard://one/data://greeting', 'switchyard://two/data://greeting'],
  );
  const read = await client.readResource({ uri: 'switchyard://two/data://greeting' });
  assert.deepEqual(read.contents, [{ uri: 'switchyard://two/data://greeting', mimeType: 'text/plain', text: 'Hello from two' }]);
});
