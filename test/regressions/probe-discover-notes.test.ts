// `switchyard probe`: a server that answers server/discover in the stateless protocol's terms,
// but names only other revisions (a DiscoverResult whose supportedVersions lacks 2026-07-28, or
// a -32022 whose data.supported does), is said to have done so. Found by a trial: the notes read
// "not a DiscoverResult" and "HTTP 400 without a modern error body", as if the server had not
// understood the probe at all. The verdict (initialize next) is unchanged.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** A 2025-11-25 server whose answer to server/discover is `discover(id)`, with its status. */
function server(t: { after(fn: () => Promise<void>): void }, status: number, discover: (id: unknown) => unknown) {
  return stubHttp(t, (req, res, m) => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (m?.method === 'server/discover') return json(res, status, discover(m.id));
    json(
      res,
      200,
      { jsonrpc: '2.0', id: m?.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } } },
      { 'mcp-session-id': 'x' },
    );
  });
}

test('a DiscoverResult listing only 2025-11-25 is named as such; initialize then finds the era', async (t) => {
  const s = await server(t, 200, (id) => ({ jsonrpc: '2.0', id, result: { supportedVersions: ['2025-11-25'], capabilities: {} } }));
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000 });
  assert.equal(v.steps[0].note, 'a DiscoverResult not listing 2026-07-28 (supportedVersions ["2025-11-25"]): try initialize');
  assert.deepEqual([v.ok, v.era, v.transport], [true, '2025-11-25', 'streamable-http']);
});

test('a -32022 naming only 2025-06-18 is named as such; initialize then finds the era', async (t) => {
  const s = await server(t, 400, (id) => ({
    jsonrpc: '2.0',
    id,
    error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2025-06-18'], requested: '2026-07-28' } },
  }));
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000 });
  assert.equal(v.steps[0].note, 'HTTP 400: -32022 not naming 2026-07-28 among supported versions (["2025-06-18"]): try initialize');
  assert.deepEqual([v.ok, v.era], [true, '2025-11-25']);
});

test('other answers keep their notes: a JSON-RPC error in a 200, a 404 with a plain error', async (t) => {
  const mnf = await server(t, 200, (id) => ({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
  assert.equal((await probeUrl(mnf.url, eras, { timeoutMs: 2000 })).steps[0].note, 'not a DiscoverResult: try initialize');
  const missing = await server(t, 404, (id) => ({ jsonrpc: '2.0', id, error: { code: -32000, message: 'Not Found' } }));
  assert.equal((await probeUrl(missing.url, eras, { timeoutMs: 2000 })).steps[0].note, 'HTTP 404 without a modern error body: try initialize');
});
