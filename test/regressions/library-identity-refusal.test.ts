// Found by a trial as an embedding developer: a host whose `identity(request)` refused a request
// the way fastify code refuses (throwing an error with `statusCode: 401`) got 500 -32603
// "Internal error" on the MCP path, logged as Switchyard's own fault, and no challenge. Now a 401
// or 403 thrown there is answered as configured authentication's refusals are: that status, a
// `WWW-Authenticate` (the error's own, else `Bearer`), a JSON-RPC error with id null and -32000,
// the same in every era and on every route; the official client sees the 401.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { Client, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { hostIdentity } from '../../src/index.js';
import { H2025, modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

/** What the host's identity() throws, by the test header `x-deny` (its own authentication's errors). */
const THROWN: Record<string, () => Error> = {
  // fastify's and @fastify/error's shape
  '401': () => Object.assign(new Error('no credentials'), { statusCode: 401 }),
  // http-errors' shape: `status` and `headers`, with the host's own challenge
  basic: () => Object.assign(new Error('no credentials'), { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="host"' } }),
  '403': () => Object.assign(new Error('not yours'), { statusCode: 403 }),
};

const UNAUTHENTICATED = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Unauthorized: the host application did not authenticate the request' } };
const FORBIDDEN = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Forbidden: the host application refused the request' } };

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

/** Every route and era a refusal must look the same on. */
const REQUESTS: Record<string, { method: 'GET' | 'POST' | 'DELETE'; headers: Record<string, string>; body?: string }> = {
  '2026-07-28 POST': { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(1, 'tools/list')) },
  '2025 initialize': { method: 'POST', headers: H2025, body: JSON.stringify(INITIALIZE) },
  '2025 GET stream': { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': 'any' } },
  '2025 DELETE': { method: 'DELETE', headers: { 'mcp-session-id': 'any' } },
};

test('a 401 or 403 the host’s identity() throws is answered as a refusal (status, challenge, JSON-RPC -32000), in every era', async (t) => {
  const sy = switchyard(t);
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin, {
    identity: (req) => {
      const deny = req.headers['x-deny'];
      if (typeof deny === 'string') throw THROWN[deny]();
      return hostIdentity('alice');
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;

  for (const [name, r] of Object.entries(REQUESTS))
    for (const [deny, want] of [
      ['401', { status: 401, challenge: 'Bearer', body: UNAUTHENTICATED }],
      ['basic', { status: 401, challenge: 'Basic realm="host"', body: UNAUTHENTICATED }],
      ['403', { status: 403, challenge: undefined, body: FORBIDDEN }],
    ] as const) {
      const res = await request(url, { method: r.method, headers: { ...r.headers, 'x-deny': deny }, body: r.body });
      const got = { status: res.statusCode, challenge: res.headers['www-authenticate'], body: JSON.parse(await res.body.text()) as unknown };
      assert.deepEqual(got, want, `${deny} on ${name}`);
    }
  assert.deepEqual(
    sy.records.filter((r) => (r.level as number) >= 40),
    [],
    'a refusal the host asked for is not a fault',
  );

  // The official client gets the 401 as what it is.
  const client = new Client({ name: 'refused', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await assert.rejects(
    client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-deny': '401' } } })),
    (err: unknown) => err instanceof SdkHttpError && err.status === 401,
  );
  // And is served when the host lets it in.
  const served = new Client({ name: 'served', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await served.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => served.close());
  assert.equal((await served.listTools()).tools.length > 0, true);
});
