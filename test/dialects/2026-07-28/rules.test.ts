// The 2026-07-28 (stateless) dialect, rule by rule, against a real gateway and the embedded
// demo upstream. Every test names the section of the spec digest it checks
// (shared/spec/stateless-2026-07-28.md) and asserts the HTTP status, the relevant
// headers and the whole JSON-RPC body.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway, type TestGateway } from '../../helpers/gateway.js';
import { modernBody, modernHeaders, modernMeta, openSse, parseSse, post, send, type RawResponse } from '../../helpers/http.js';
import { request } from 'undici';
import { DEFAULT_LIMITS } from '../../../src/core/limits.js';
import { VERSION } from '../../../src/version.js';

const V = '2026-07-28';
const SERVER_INFO = { name: 'switchyard-demo', version: VERSION };
const RESULT_META = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO };
const SUB_ID = 'io.modelcontextprotocol/subscriptionId';
const DEMO_CAPS = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
};

/** Modern headers for `method`, with entries set (string) or removed (undefined). */
function headers(method: string, name?: string, patch: Record<string, string | undefined> = {}): Record<string, string> {
  const h = modernHeaders(method, name);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete h[k];
    else h[k] = v;
  }
  return h;
}

/** `=?base64?…?=` of a UTF-8 string, built here (not with the gateway's encoder). */
function b64(s: string): string {
  return `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}

/** A tools/call with the headers a correct client sends (overridable). */
function callTool(
  gw: TestGateway,
  id: unknown,
  name: string,
  args: Record<string, unknown>,
  opts: {
    caps?: Record<string, unknown>;
    meta?: Record<string, unknown>;
    extra?: Record<string, unknown>;
    patch?: Record<string, string | undefined>;
  } = {},
): Promise<RawResponse> {
  const params: Record<string, unknown> = {
    name,
    arguments: args,
    ...opts.extra,
  };
  if (opts.meta) params._meta = opts.meta;
  return post(gw.url, modernBody(id, 'tools/call', params, opts.caps ?? {}), headers('tools/call', name, opts.patch));
}

function contentType(res: { headers: Record<string, string | string[] | undefined> }): string {
  return String(res.headers['content-type'] ?? '');
}

/** Asserts a JSON answer: status, content type and the whole body. */
function assertJson(res: RawResponse, status: number, body: unknown): void {
  assert.equal(res.status, status, `status; body ${res.text}`);
  assert.match(contentType(res), /^application\/json/);
  assert.deepEqual(res.json, body);
}

/** The JSON-RPC messages of a whole SSE body, in order. */
function sseMessages(res: RawResponse): unknown[] {
  return parseSse(res.text).map((e) => JSON.parse(e.data) as unknown);
}

/** Polls `cond` every 10 ms until true or `ms` pass (then fails). */
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const mismatch = (id: unknown, detail: string) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32020, message: `Header mismatch: ${detail}` },
});

// ---------------------------------------------------------------------------------------------
// §4 POST only; §4.2 step 1: non-POST ⇒ 405 / -32000 (legacy off).
// ---------------------------------------------------------------------------------------------

// §4 / §4.2.1: GET on the MCP path without a session, HTTP+SSE off ⇒ 405 with Allow.
test('§4.2.1 GET /mcp without a session (legacy off) is 405 with Allow', async (t) => {
  const gw = await gateway(t);
  const res = await send(gw.url, 'GET', undefined, {
    accept: 'text/event-stream',
  });
  assertJson(res, 405, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: 'Method not allowed: GET without Mcp-Session-Id (no stream is offered outside a session)' },
  });
  // The path's methods but the refused one (RFC 9110 §15.5.6).
  assert.equal(res.headers.allow, 'POST, DELETE');
});

// §4 / §4.2.1: DELETE without a session ⇒ 405.
test('§4.2.1 DELETE /mcp without a session is 405 with Allow', async (t) => {
  const gw = await gateway(t);
  const res = await send(gw.url, 'DELETE', undefined, {
    'mcp-protocol-version': V,
  });
  assertJson(res, 405, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: 'Method not allowed: DELETE without Mcp-Session-Id (there is no session to end)' },
  });
  assert.equal(res.headers.allow, 'GET, POST');
});

// §4: Origin present and invalid ⇒ 403 (id-less JSON-RPC error allowed).
test('§4 a foreign Origin is 403', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody(1, 'tools/list'), {
    ...headers('tools/list'),
    origin: 'http://evil.example',
  });
  assertJson(res, 403, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: 'Forbidden: Origin not allowed' },
  });
});

// §4.2.2: Content-Type not JSON ⇒ 415.
test('§4.2.2 a non-JSON Content-Type is 415', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody(1, 'tools/list'), headers('tools/list', undefined, { 'content-type': 'text/plain' }));
  assertJson(res, 415, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32000,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    },
  });
});

// §4.2.3: unparseable body ⇒ 400 / -32700.
test('§4.2.3 unparseable JSON is 400 / -32700', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, '{"jsonrpc":"2.0","id":1,', headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'Parse error: invalid JSON' },
  });
});

// §4.2.3: JSON that is not a JSON-RPC request/notification ⇒ 400 / -32600.
test('§4.2.3 a body that is not JSON-RPC is 400 / -32600', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, { hello: 'world' }, headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid Request: not a JSON-RPC 2.0 message',
    },
  });
});

// §1 error responses carry the request id (omit only if unreadable; conformance checks 400s):
// a message that is not a valid request but whose id is readable echoes that id.
test('§1 an invalid request with a readable id echoes the id', {}, async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, { jsonrpc: '2.0', id: 7, method: 42 }, headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 7,
    error: {
      code: -32600,
      message: 'Invalid Request: not a JSON-RPC 2.0 message',
    },
  });
});

// §4 (body = one request or notification, never a response) / §10: a posted response ⇒ 400 / -32600.
test('§4 a posted JSON-RPC response is 400 / -32600', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, { jsonrpc: '2.0', id: 3, result: {} }, headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 3,
    error: {
      code: -32600,
      message: 'Invalid Request: not a JSON-RPC 2.0 message: clients send no responses in 2026-07-28',
    },
  });
});

// §4 (one POST per message) / §10: a batch without a session on the dual-era server goes to the
// 2025 dialect, which refuses it with 400 (session required).
test('§4 a batch array without a session is 400 (dual-era server)', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, [modernBody(1, 'tools/list')], headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26',
    },
  });
});

// §10: modern-only server: batch ⇒ 400 / -32600.
test('§10 a batch array on a 2026-only server is 400 / -32600', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28'] });
  const res = await post(gw.url, [modernBody(1, 'tools/list')], headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26',
    },
  });
});

// §4.2.4: _meta with protocolVersion but without clientCapabilities ⇒ 400 / -32602.
test('§4.2.4 _meta without clientCapabilities is 400 / -32602', async (t) => {
  const gw = await gateway(t);
  const body = {
    jsonrpc: '2.0',
    id: 'm1',
    method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } },
  };
  const res = await post(gw.url, body, headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 'm1',
    error: {
      code: -32602,
      message: 'Invalid params: missing or malformed protocol _meta: _meta["io.modelcontextprotocol/clientCapabilities"] is required',
    },
  });
});

// §4.2.4: modern headers but no _meta ⇒ 400 / -32602.
test('§4.2.4 modern headers without _meta is 400 / -32602', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, { jsonrpc: '2.0', id: 'm2', method: 'tools/list', params: {} }, headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 'm2',
    error: {
      code: -32602,
      message: 'Invalid params: missing or malformed protocol _meta: _meta["io.modelcontextprotocol/protocolVersion"] is required',
    },
  });
});

// §6 Logging: an unknown logLevel SHOULD be -32602 (400 as a malformed _meta, §2).
test('§6 an unknown _meta logLevel is 400 / -32602', async (t) => {
  const gw = await gateway(t);
  const body = modernBody('m3', 'tools/list', {
    _meta: { 'io.modelcontextprotocol/logLevel': 'loud' },
  });
  const res = await post(gw.url, body, headers('tools/list'));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 'm3',
    error: {
      code: -32602,
      message: 'Invalid params: missing or malformed protocol _meta: unknown logLevel',
    },
  });
});

// §4.2.5: header version ≠ body version ⇒ -32020 (conformance: header 2026-07-28, body v999.0.0).
test('§4.2.5 MCP-Protocol-Version header differing from _meta is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const body = modernBody('v1', 'tools/list', {
    _meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' },
  });
  const res = await post(gw.url, body, headers('tools/list'));
  assertJson(res, 400, mismatch('v1', 'MCP-Protocol-Version differs from _meta protocolVersion'));
});

// §4.1 values are case-sensitive / §4.2.5: Mcp-Method ≠ method ⇒ -32020.
test('§4.2.5 Mcp-Method differing from the body (TOOLS/LIST) is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('v2', 'tools/list'), headers('tools/list', undefined, { 'mcp-method': 'TOOLS/LIST' }));
  assertJson(res, 400, mismatch('v2', 'Mcp-Method differs from method'));
});

// §3 / §4.2.6: header = body = unsupported version ⇒ 400 / -32022 with supported and requested.
test('§4.2.6 an unsupported version (v999.0.0 in header and body) is 400 / -32022', async (t) => {
  const gw = await gateway(t);
  const body = modernBody('v3', 'tools/list', {
    _meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' },
  });
  const res = await post(gw.url, body, headers('tools/list', undefined, { 'mcp-protocol-version': 'v999.0.0' }));
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 'v3',
    error: {
      code: -32022,
      message: 'Unsupported protocol version: v999.0.0',
      data: { supported: [V], requested: 'v999.0.0' },
    },
  });
});

// §3 / §8 / §10: -32022 data.requested is a REQUIRED string; a legacy initialize on a 2026-only
// server names the version it asked for.
test('§10 legacy initialize on a 2026-only server is 400 / -32022 naming the requested version', {}, async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28'] });
  const body = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'old', version: '1' },
    },
  };
  const res = await post(gw.url, body, {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  });
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 0,
    error: {
      code: -32022,
      message: 'Unsupported protocol version: 2025-06-18',
      data: { supported: [V], requested: '2025-06-18' },
    },
  });
});

// §4.1 / §4.2.7: MCP-Protocol-Version missing (valid _meta) ⇒ -32020.
test('§4.2.7 a missing MCP-Protocol-Version header is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('h1', 'tools/list'), headers('tools/list', undefined, { 'mcp-protocol-version': undefined }));
  assertJson(res, 400, mismatch('h1', 'MCP-Protocol-Version header is required'));
});

// §4.1 / §4.2.7: Mcp-Method missing ⇒ -32020.
test('§4.2.7 a missing Mcp-Method header is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('h2', 'tools/list'), headers('tools/list', undefined, { 'mcp-method': undefined }));
  assertJson(res, 400, mismatch('h2', 'Mcp-Method header is required'));
});

// §4.1 / §4.2.7: tools/call without Mcp-Name ⇒ -32020.
test('§4.2.7 tools/call without Mcp-Name is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'h3', 'echo', { message: 'x' }, { patch: { 'mcp-name': undefined } });
  assertJson(res, 400, mismatch('h3', 'Mcp-Name header is required'));
});

// §4.1 / §4.2.7: Mcp-Name ≠ params.name ⇒ -32020.
test('§4.2.7 Mcp-Name differing from params.name is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'h4', 'echo', { message: 'x' }, { patch: { 'mcp-name': 'add' } });
  assertJson(res, 400, mismatch('h4', 'Mcp-Name differs from params.name'));
});

// §4.1: resources/read mirrors params.uri in Mcp-Name; a mismatch ⇒ -32020.
test('§4.2.7 resources/read with Mcp-Name differing from params.uri is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('h5', 'resources/read', { uri: 'demo://readme' }), headers('resources/read', 'demo://items/alpha'));
  assertJson(res, 400, mismatch('h5', 'Mcp-Name differs from params.uri'));
});

// §4.1: servers strip optional whitespace around values (conformance: `Mcp-Name: ␠␠name␠␠`).
test('§4.1 Mcp-Name with surrounding spaces is accepted', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'h6', 'echo', { message: 'hi' }, { patch: { 'mcp-name': '  echo  ' } });
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'h6',
    result: {
      content: [{ type: 'text', text: 'Echo: hi' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §4.1 value encoding: `=?base64?…?=` is decoded before comparing.
test('§4.1 Mcp-Name as =?base64?…?= decoding to the name is accepted', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'h7', 'echo', { message: 'b64' }, { patch: { 'mcp-name': b64('echo') } });
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'h7',
    result: {
      content: [{ type: 'text', text: 'Echo: b64' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §4.1 value encoding: invalid Base64 (bad padding / non-alphabet) ⇒ reject with -32020.
test('§4.1 Mcp-Name with invalid Base64 is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'h8', 'echo', { message: 'x' }, { patch: { 'mcp-name': '=?base64?ZWNob?=' } });
  assertJson(res, 400, mismatch('h8', 'Mcp-Name has invalid Base64'));
  const res2 = await callTool(gw, 'h9', 'echo', { message: 'x' }, { patch: { 'mcp-name': '=?base64?ZW*obw==?=' } });
  assertJson(res2, 400, mismatch('h9', 'Mcp-Name has invalid Base64'));
});

// §4.1 value encoding + server validation: a value with a control character (tab) MUST travel
// as =?base64?…?=; a raw tab is an invalid character ⇒ 400 / -32020.
test('§4.1 Mcp-Name with a raw tab is 400 / -32020', {}, async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'h10', 'ec\tho', {});
  assert.equal(res.status, 400, res.text);
  const body = res.json as {
    jsonrpc: string;
    id: unknown;
    error: { code: number };
  };
  assert.deepEqual({ jsonrpc: body.jsonrpc, id: body.id, code: body.error.code }, { jsonrpc: '2.0', id: 'h10', code: -32020 });
});

// §4.1: prompts/get mirrors params.name in Mcp-Name; missing ⇒ -32020.
test('§4.2.7 prompts/get without Mcp-Name is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await post(
    gw.url,
    modernBody('g1', 'prompts/get', {
      name: 'greeting',
      arguments: { name: 'Ada' },
    }),
    headers('prompts/get'),
  );
  assertJson(res, 400, mismatch('g1', 'Mcp-Name header is required'));
});

// §4.1 / §1: prompts/get with its Mcp-Name is served, resultType complete.
test('§4.1 prompts/get with Mcp-Name is 200', async (t) => {
  const gw = await gateway(t);
  const res = await post(
    gw.url,
    modernBody('g2', 'prompts/get', {
      name: 'greeting',
      arguments: { name: 'Ada' },
    }),
    headers('prompts/get', 'greeting'),
  );
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'g2',
    result: {
      description: 'A greeting',
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: 'Hi, Ada! Please greet me back.' },
        },
      ],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §2: clientInfo is SHOULD; servers must serve requests without it (conformance).
test('§2 a request without clientInfo is served', async (t) => {
  const gw = await gateway(t);
  const body = {
    jsonrpc: '2.0',
    id: 'ci',
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const res = await post(gw.url, body, headers('server/discover'));
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'ci',
    result: {
      supportedVersions: [V],
      capabilities: DEMO_CAPS,
      instructions: 'A demo server embedded in Switchyard. Try the echo tool.',
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: RESULT_META,
    },
  });
});

// §4 / §4.2.10: unknown method (and methods removed in 2026-07-28, sent with valid _meta and
// headers) ⇒ 404 / -32601.
const REMOVED: Array<[string, Record<string, unknown>]> = [
  ['foo/bar', {}],
  [
    'initialize',
    {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    },
  ],
  ['ping', {}],
  ['logging/setLevel', { level: 'info' }],
  ['resources/subscribe', { uri: 'demo://readme' }],
  ['resources/unsubscribe', { uri: 'demo://readme' }],
];
for (const [method, params] of REMOVED) {
  test(`§4.2.10 ${method} with valid _meta and headers is 404 / -32601`, async (t) => {
    const gw = await gateway(t);
    const res = await post(gw.url, modernBody(`u-${method}`, method, params), headers(method));
    assertJson(res, 404, {
      jsonrpc: '2.0',
      id: `u-${method}`,
      error: { code: -32601, message: `Method not found: ${method}` },
    });
  });
}

// §4.1 Mcp-Param / §4.2.9: an x-mcp-header argument in the body without its header ⇒ -32020.
test('§4.2.9 lookup without Mcp-Param-Region is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'p1', 'lookup', { region: 'eu', key: 'k' });
  assertJson(res, 400, mismatch('p1', 'Mcp-Param-Region header is required'));
});

// §4.1 Mcp-Param / §4.2.9: header value differing from the argument ⇒ -32020.
test('§4.2.9 lookup with a mismatching Mcp-Param-Region is 400 / -32020', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'p2', 'lookup', { region: 'eu', key: 'k' }, { patch: { 'mcp-param-region': 'us' } });
  assertJson(res, 400, mismatch('p2', 'Mcp-Param-Region differs from arguments.region'));
});

// §4.1 Mcp-Param: a plain ASCII value matching the argument is accepted.
test('§4.1 lookup with a matching Mcp-Param-Region is 200', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'p3', 'lookup', { region: 'eu', key: 'k' }, { patch: { 'mcp-param-region': ' eu ' } });
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'p3',
    result: {
      content: [{ type: 'text', text: 'eu/k: found' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §4.1 value encoding: a non-ASCII value sent as =?base64?…?= matches after decoding.
test('§4.1 lookup with a Base64 non-ASCII Mcp-Param-Region matching is 200', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'p4', 'lookup', { region: 'Zürich', key: 'k' }, { patch: { 'mcp-param-region': b64('Zürich') } });
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'p4',
    result: {
      content: [{ type: 'text', text: 'Zürich/k: found' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// ---------------------------------------------------------------------------------------------
// §1 resultType, §2 serverInfo, §3 server/discover, §7 caching, §8 resource not found.
// ---------------------------------------------------------------------------------------------

// §1 / §2 / §7: tools/list is complete, cacheable and carries serverInfo.
test('§7 tools/list has resultType, ttlMs, cacheScope and serverInfo', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody(10, 'tools/list'), headers('tools/list'));
  assert.equal(res.status, 200);
  assert.match(contentType(res), /^application\/json/);
  const body = res.json as { result: { tools: Array<{ name: string }> } };
  assert.deepEqual(
    {
      ...body,
      result: { ...body.result, tools: body.result.tools.map((x) => x.name) },
    },
    {
      jsonrpc: '2.0',
      id: 10,
      result: {
        tools: ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'],
        resultType: 'complete',
        ttlMs: 60_000,
        cacheScope: 'public',
        _meta: RESULT_META,
      },
    },
  );
});

// §3 / §7: server/discover lists the versions (same as -32022's supported), capabilities, caching.
test('§3 server/discover has supportedVersions, capabilities, ttlMs and cacheScope', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('d1', 'server/discover'), headers('server/discover'));
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'd1',
    result: {
      supportedVersions: [V],
      capabilities: DEMO_CAPS,
      instructions: 'A demo server embedded in Switchyard. Try the echo tool.',
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: RESULT_META,
    },
  });
});

// §7: resources/read results carry the caching fields.
test('§7 resources/read of a known URI is complete with caching fields', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('r0', 'resources/read', { uri: 'demo://items/beta' }), headers('resources/read', 'demo://items/beta'));
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'r0',
    result: {
      contents: [
        {
          uri: 'demo://items/beta',
          mimeType: 'application/json',
          text: '{"id":"beta","length":4}',
        },
      ],
      ttlMs: 0,
      cacheScope: 'public',
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §8 / §4.2.11: resource not found is -32602 with data.uri, in-band with HTTP 200.
test('§8 resources/read of an unknown URI is in-band -32602 with data.uri (HTTP 200)', async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('r1', 'resources/read', { uri: 'demo://nope' }), headers('resources/read', 'demo://nope'));
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'r1',
    error: {
      code: -32602,
      message: 'Resource not found: demo://nope',
      data: { uri: 'demo://nope' },
    },
  });
});

// §4.2.11: handler param errors are in-band, HTTP 200.
test('§4.2.11 an unknown tool is in-band -32602 (HTTP 200)', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'r2', 'nosuch', {});
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'r2',
    error: { code: -32602, message: 'Invalid params: unknown tool: nosuch' },
  });
});

// ---------------------------------------------------------------------------------------------
// §4 JSON or SSE; §6 progress and logging.
// ---------------------------------------------------------------------------------------------

// §4: a request with nothing to send before its response is answered as application/json.
test('§4 echo is answered as application/json', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'j1', 'echo', { message: 'plain' });
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'j1',
    result: {
      content: [{ type: 'text', text: 'Echo: plain' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §4 / §6 Progress / §11.7: progressToken ⇒ SSE with progress on the request's stream, then the
// final response; X-Accel-Buffering: no. No log messages without logLevel.
test('§6 slow with a progressToken streams progress then the response', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 's1', 'slow', { steps: 3, stepMs: 5 }, { meta: { progressToken: 'tok' } });
  assert.equal(res.status, 200);
  assert.match(contentType(res), /^text\/event-stream/);
  assert.equal(res.headers['x-accel-buffering'], 'no');
  const progress = (i: number) => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: {
      progress: i,
      total: 3,
      message: `step ${i} of 3`,
      progressToken: 'tok',
    },
  });
  assert.deepEqual(sseMessages(res), [
    progress(1),
    progress(2),
    progress(3),
    {
      jsonrpc: '2.0',
      id: 's1',
      result: {
        content: [{ type: 'text', text: 'Finished 3 steps.' }],
        resultType: 'complete',
        _meta: RESULT_META,
      },
    },
  ]);
});

// §4 (final response ends the stream) / §4.2.11: an error after progress is the terminal event.
test('§4 slow with failAtStep ends the SSE stream with the JSON-RPC error', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 's2', 'slow', { steps: 5, stepMs: 5, failAtStep: 2 }, { meta: { progressToken: 7 } });
  assert.equal(res.status, 200);
  assert.match(contentType(res), /^text\/event-stream/);
  const progress = (i: number) => ({
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: {
      progress: i,
      total: 5,
      message: `step ${i} of 5`,
      progressToken: 7,
    },
  });
  assert.deepEqual(sseMessages(res), [
    progress(1),
    progress(2),
    {
      jsonrpc: '2.0',
      id: 's2',
      error: {
        code: -32602,
        message: 'Invalid params: failed at step 2 as asked',
      },
    },
  ]);
});

// §6 Logging: notifications/message only when the request set logLevel, on its own stream.
test('§6 log messages are sent only when _meta logLevel is set', async (t) => {
  const gw = await gateway(t);
  // No logLevel, no progressToken: nothing to send early, so plain JSON.
  const quiet = await callTool(gw, 'l0', 'slow', { steps: 2, stepMs: 1 });
  assertJson(quiet, 200, {
    jsonrpc: '2.0',
    id: 'l0',
    result: {
      content: [{ type: 'text', text: 'Finished 2 steps.' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
  // logLevel above the messages' level: still nothing.
  const above = await callTool(gw, 'l1', 'slow', { steps: 2, stepMs: 1 }, { meta: { 'io.modelcontextprotocol/logLevel': 'warning' } });
  assertJson(above, 200, {
    jsonrpc: '2.0',
    id: 'l1',
    result: {
      content: [{ type: 'text', text: 'Finished 2 steps.' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
  // logLevel info: messages on an SSE stream, then the response.
  const loud = await callTool(gw, 'l2', 'slow', { steps: 2, stepMs: 1 }, { meta: { 'io.modelcontextprotocol/logLevel': 'info' } });
  assert.equal(loud.status, 200);
  assert.match(contentType(loud), /^text\/event-stream/);
  const msg = (i: number) => ({
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'info', logger: 'demo.slow', data: `step ${i} done` },
  });
  assert.deepEqual(sseMessages(loud), [
    msg(1),
    msg(2),
    {
      jsonrpc: '2.0',
      id: 'l2',
      result: {
        content: [{ type: 'text', text: 'Finished 2 steps.' }],
        resultType: 'complete',
        _meta: RESULT_META,
      },
    },
  ]);
});

// ---------------------------------------------------------------------------------------------
// §6 subscriptions/listen.
// ---------------------------------------------------------------------------------------------

function listenBody(id: unknown, notifications: Record<string, unknown>): Record<string, unknown> {
  return modernBody(id, 'subscriptions/listen', { notifications });
}

// §6: the first message is notifications/subscriptions/acknowledged with the honoured subset
// and _meta.subscriptionId = the listen request's id.
test('§6 subscriptions/listen opens SSE with the acknowledgement first', async (t) => {
  const gw = await gateway(t);
  const sse = await openSse(
    gw.url,
    'POST',
    headers('subscriptions/listen'),
    JSON.stringify(
      listenBody('L1', {
        toolsListChanged: true,
        resourceSubscriptions: ['demo://readme'],
      }),
    ),
  );
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  assert.match(contentType(sse), /^text\/event-stream/);
  assert.equal(sse.headers['x-accel-buffering'], 'no');
  const ack = await sse.next();
  assert.deepEqual(JSON.parse(ack.data), {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: {
      _meta: { [SUB_ID]: 'L1' },
      notifications: {
        toolsListChanged: true,
        resourceSubscriptions: ['demo://readme'],
      },
    },
  });
});

// §6: resources/updated for a subscribed URI arrives tagged with the subscriptionId; an
// unsubscribed URI is never sent (MUST NOT send unrequested types).
test('§6 touch on a subscribed URI delivers resources/updated with subscriptionId', async (t) => {
  const gw = await gateway(t);
  const sse = await openSse(gw.url, 'POST', headers('subscriptions/listen'), JSON.stringify(listenBody(42, { resourceSubscriptions: ['demo://readme'] })));
  t.after(() => sse.close());
  const ack = await sse.next();
  assert.deepEqual(JSON.parse(ack.data), {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: {
      _meta: { [SUB_ID]: 42 },
      notifications: { resourceSubscriptions: ['demo://readme'] },
    },
  });
  const other = await callTool(gw, 't1', 'touch', {
    uri: 'demo://items/alpha',
  });
  assertJson(other, 200, {
    jsonrpc: '2.0',
    id: 't1',
    result: {
      content: [{ type: 'text', text: 'Touched demo://items/alpha' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
  const mine = await callTool(gw, 't2', 'touch', { uri: 'demo://readme' });
  assert.equal(mine.status, 200);
  // The unsubscribed URI was emitted first; the next event must be the subscribed one.
  const ev = await sse.next();
  assert.deepEqual(JSON.parse(ev.data), {
    jsonrpc: '2.0',
    method: 'notifications/resources/updated',
    params: { uri: 'demo://readme', _meta: { [SUB_ID]: 42 } },
  });
});

// §4.2.11: param errors are answered in-band with HTTP 200; a listen without its
// `notifications` filter is a param error.
test('§4.2.11 subscriptions/listen without a notifications filter is in-band -32602 (HTTP 200)', {}, async (t) => {
  const gw = await gateway(t);
  const res = await post(gw.url, modernBody('L0', 'subscriptions/listen', {}), headers('subscriptions/listen'));
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'L0',
    error: {
      code: -32602,
      message: 'Invalid params: notifications filter is required',
    },
  });
});

// §4 keep-alive comments on SSE streams.
test('§4 a listen stream carries keepalive comments', async (t) => {
  const gw = await gateway(t, {
    limits: { ...DEFAULT_LIMITS, keepaliveMs: 50 },
  });
  const sse = await openSse(gw.url, 'POST', headers('subscriptions/listen'), JSON.stringify(listenBody('L3', { toolsListChanged: true })));
  t.after(() => sse.close());
  await sse.next();
  await until(() => /^: keepalive$/m.test(sse.raw()), 'a keepalive comment');
});

// §6 / limits: listen streams are bounded; one more ⇒ 503 / -32000.
test('§6 a listen over maxSubscriptions is 503 / -32000 Too many subscriptions', async (t) => {
  const gw = await gateway(t, {
    limits: { ...DEFAULT_LIMITS, maxSubscriptions: 1 },
  });
  const first = await openSse(gw.url, 'POST', headers('subscriptions/listen'), JSON.stringify(listenBody('L4', { toolsListChanged: true })));
  t.after(() => first.close());
  await first.next();
  const second = await post(gw.url, listenBody('L5', { toolsListChanged: true }), headers('subscriptions/listen'));
  assertJson(second, 503, {
    jsonrpc: '2.0',
    id: 'L5',
    error: { code: -32000, message: 'Too many subscriptions' },
  });
});

// §6: the client ends a listen by closing the stream; its slot is released.
test('§6 closing a listen stream releases it', async (t) => {
  const gw = await gateway(t, {
    limits: { ...DEFAULT_LIMITS, maxSubscriptions: 1 },
  });
  const first = await openSse(gw.url, 'POST', headers('subscriptions/listen'), JSON.stringify(listenBody('L6', { toolsListChanged: true })));
  await first.next();
  first.close();
  let again: Awaited<ReturnType<typeof openSse>> | undefined;
  t.after(() => again?.close());
  await until(async () => {
    const s = await openSse(gw.url, 'POST', headers('subscriptions/listen'), JSON.stringify(listenBody('L7', { toolsListChanged: true })));
    if (s.status === 200) {
      again = s;
      return true;
    }
    s.close();
    return false;
  }, 'a new listen after closing the first');
  const ack = await again!.next();
  assert.deepEqual(JSON.parse(ack.data), {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: {
      _meta: { [SUB_ID]: 'L7' },
      notifications: { toolsListChanged: true },
    },
  });
});

// §6: a server ending a listen gracefully sends the listen's result, then closes.
test('§6 gateway shutdown ends a listen with its complete result', async (t) => {
  const gw = await gateway(t);
  const sse = await openSse(gw.url, 'POST', headers('subscriptions/listen'), JSON.stringify(listenBody('L8', { toolsListChanged: true })));
  t.after(() => sse.close());
  await sse.next();
  const closing = gw.close();
  const last = await sse.next();
  await closing;
  assert.deepEqual(JSON.parse(last.data), {
    jsonrpc: '2.0',
    id: 'L8',
    result: { resultType: 'complete', _meta: { [SUB_ID]: 'L8' } },
  });
});

// ---------------------------------------------------------------------------------------------
// §4 / §6 cancellation: closing the response stream cancels the request.
// ---------------------------------------------------------------------------------------------

test('§6 closing the response stream of slow cancels it (inFlight reaches 0)', async (t) => {
  const gw = await gateway(t);
  const body = modernBody('c1', 'tools/call', {
    name: 'slow',
    arguments: { steps: 200, stepMs: 20 },
    _meta: { progressToken: 'c' },
  });
  const sse = await openSse(gw.url, 'POST', headers('tools/call', 'slow'), JSON.stringify(body));
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  const first = await sse.next();
  assert.deepEqual(JSON.parse(first.data), {
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: {
      progress: 1,
      total: 200,
      message: 'step 1 of 200',
      progressToken: 'c',
    },
  });
  assert.equal(gw.executor.inFlight, 1);
  sse.close();
  await until(() => gw.executor.inFlight === 0, 'inFlight 0 after the client closed');
});

// §4 cancellation: the same for a request answered as JSON (no progress): aborting the POST
// stops the work.
test('§6 aborting a JSON-answered slow call cancels it (inFlight reaches 0)', async (t) => {
  const gw = await gateway(t);
  const body = modernBody('c2', 'tools/call', {
    name: 'slow',
    arguments: { steps: 200, stepMs: 20 },
  });
  const ac = new AbortController();
  // No progressToken and no logLevel: the answer would be one JSON body, so nothing arrives
  // before the abort; the request is left pending and aborted.
  const pending = request(gw.url, {
    method: 'POST',
    headers: headers('tools/call', 'slow'),
    body: JSON.stringify(body),
    signal: ac.signal,
  });
  const outcome = pending.then(
    () => 'answered',
    (err: Error) => err.name,
  );
  await until(() => gw.executor.inFlight === 1, 'the call running');
  ac.abort();
  assert.equal(await outcome, 'AbortError');
  await until(() => gw.executor.inFlight === 0, 'inFlight 0 after the client aborted');
});

// ---------------------------------------------------------------------------------------------
// §2 / §5 MRTR.
// ---------------------------------------------------------------------------------------------

// §2: a needed capability not declared ⇒ 400 / -32021 with data.requiredCapabilities.
test('§2 ask without the elicitation capability is 400 / -32021', async (t) => {
  const gw = await gateway(t);
  const res = await callTool(gw, 'a0', 'ask', {});
  assertJson(res, 400, {
    jsonrpc: '2.0',
    id: 'a0',
    error: {
      code: -32021,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { elicitation: {} } },
    },
  });
});

const ELICIT = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'What is your name?',
    requestedSchema: {
      type: 'object',
      properties: { name: { type: 'string', title: 'Name' } },
      required: ['name'],
    },
  },
};

type InputRequired = {
  jsonrpc: string;
  id: unknown;
  result: { requestState: string };
};

/** First round of `ask`: asserts the input_required result and returns its requestState. */
async function askFirst(gw: TestGateway, id: string): Promise<string> {
  const res = await callTool(gw, id, 'ask', {}, { caps: { elicitation: {} } });
  assert.equal(res.status, 200);
  const body = res.json as InputRequired;
  assert.equal(typeof body.result.requestState, 'string');
  assert.ok(body.result.requestState.length > 0);
  assert.deepEqual(body, {
    jsonrpc: '2.0',
    id,
    result: {
      resultType: 'input_required',
      inputRequests: { name: ELICIT },
      requestState: body.result.requestState,
      _meta: RESULT_META,
    },
  });
  return body.result.requestState;
}

// §5: with elicitation declared, ask answers input_required with inputRequests and requestState.
test('§5 ask with elicitation declared is input_required', async (t) => {
  const gw = await gateway(t);
  await askFirst(gw, 'a1');
});

// §5: the retry (new id, inputResponses, requestState echoed) completes.
test('§5 the retry with inputResponses and requestState completes', async (t) => {
  const gw = await gateway(t);
  const state = await askFirst(gw, 'a2');
  const res = await callTool(
    gw,
    'a3',
    'ask',
    {},
    {
      caps: { elicitation: {} },
      extra: {
        inputResponses: {
          name: { action: 'accept', content: { name: 'Ada' } },
        },
        requestState: state,
      },
    },
  );
  assertJson(res, 200, {
    jsonrpc: '2.0',
    id: 'a3',
    result: {
      content: [{ type: 'text', text: 'Hello, Ada!' }],
      resultType: 'complete',
      _meta: RESULT_META,
    },
  });
});

// §5: requestState is attacker-controlled; a tampered one is not trusted (new input_required).
test('§5 a retry with a tampered requestState is input_required again', async (t) => {
  const gw = await gateway(t);
  const state = await askFirst(gw, 'a4');
  const last = state.slice(-1);
  const tampered = state.slice(0, -1) + (last === 'A' ? 'B' : 'A');
  const res = await callTool(
    gw,
    'a5',
    'ask',
    {},
    {
      caps: { elicitation: {} },
      extra: {
        inputResponses: {
          name: { action: 'accept', content: { name: 'Mallory' } },
        },
        requestState: tampered,
      },
    },
  );
  assert.equal(res.status, 200);
  const body = res.json as InputRequired;
  assert.deepEqual(body, {
    jsonrpc: '2.0',
    id: 'a5',
    result: {
      resultType: 'input_required',
      inputRequests: { name: ELICIT },
      requestState: body.result.requestState,
      _meta: RESULT_META,
    },
  });
});

// §5: requestState is bound to the original params; a retry with other arguments asks again.
test('§5 a retry with other arguments is input_required again', async (t) => {
  const gw = await gateway(t);
  const state = await askFirst(gw, 'a6');
  const res = await callTool(
    gw,
    'a7',
    'ask',
    { question: 'Who?' },
    {
      caps: { elicitation: {} },
      extra: {
        inputResponses: {
          name: { action: 'accept', content: { name: 'Ada' } },
        },
        requestState: state,
      },
    },
  );
  assert.equal(res.status, 200);
  const body = res.json as InputRequired;
  assert.deepEqual(body, {
    jsonrpc: '2.0',
    id: 'a7',
    result: {
      resultType: 'input_required',
      inputRequests: {
        name: { ...ELICIT, params: { ...ELICIT.params, message: 'Who?' } },
      },
      requestState: body.result.requestState,
      _meta: RESULT_META,
    },
  });
});

// ---------------------------------------------------------------------------------------------
// §4 notifications.
// ---------------------------------------------------------------------------------------------

// §4: an accepted notification POST is 202 with no body.
test('§4 a notification POST is 202 with an empty body', async (t) => {
  const gw = await gateway(t);
  const body = {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 'x', _meta: modernMeta() },
  };
  const res = await post(gw.url, body, headers('notifications/cancelled'));
  assert.equal(res.status, 202);
  assert.equal(res.text, '');
  assert.equal(res.headers['mcp-session-id'], undefined);
});
