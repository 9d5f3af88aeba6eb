// The client's Authorization header reaches an upstream only when its mount says so
// (forwardAuthorization); by default there is no token passthrough.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('Authorization is forwarded to the mount that allows it, and to no other', async (t) => {
  const seen: Array<{ mount: string; method: string; authorization: string | undefined }> = [];
  // A minimal 2026-07-28 upstream that records what it was sent.
  const stub = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const m = JSON.parse(body) as { id: unknown; method: string };
      seen.push({ mount: req.url?.includes('closed') ? 'closed' : 'open', method: m.method, authorization: req.headers.authorization });
      const result =
        m.method === 'server/discover'
          ? { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete', ttlMs: 0, cacheScope: 'private' }
          : m.method === 'tools/list'
            ? { tools: [{ name: 'echo', inputSchema: { type: 'object' } }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' }
            : { content: [{ type: 'text', text: 'ok' }], resultType: 'complete' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => stub.close(() => r())));
  const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/mcp`;
  const gw = await startGatewayFromConfig(
    validateConfig(
      {
        listen: { port: 0 },
        upstreams: { open: { url, era: '2026-07-28', forwardAuthorization: true }, closed: { url: `${url}?m=closed`, era: '2026-07-28' } },
      },
      'test',
    ),
    pino({ level: 'silent' }),
  );
  t.after(() => gw.close());
  const call = (mountUrl: string) =>
    post(mountUrl, modernBody(1, 'tools/call', { name: 'echo', arguments: {} }), {
      ...modernHeaders('tools/call', 'echo'),
      authorization: 'Bearer client-token',
    });
  assert.equal((await call(gw.mounts[0].url)).status, 200);
  assert.equal((await call(gw.mounts[1].url)).status, 200);
  const calls = seen.filter((s) => s.method === 'tools/call');
  assert.deepEqual(calls, [
    { mount: 'open', method: 'tools/call', authorization: 'Bearer client-token' },
    { mount: 'closed', method: 'tools/call', authorization: undefined },
  ]);
  // Nothing sent to the closed mount carries the token; the gateway's own probe requests never do.
  assert.ok(seen.filter((s) => s.mount === 'closed').every((s) => s.authorization === undefined));
  assert.ok(seen.filter((s) => s.method === 'server/discover').every((s) => s.authorization === undefined));
});
