// Golden tests of the 2026-07-28 server-side codec, with no sockets: client messages decoded into
// core requests, core results and errors encoded in the era's shape, the HTTP status policy; each
// wire message also checked against the revision's official schema.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  CACHEABLE,
  decodeHeaderValue,
  decodeRequest,
  encodeError,
  encodeHeaderValue,
  encodeResult,
  METHODS,
  REVISIONS,
  statusFor,
  stripMeta,
} from '../../../dialects/2026-07-28/codec.js';
import { PeerRpcError, SwitchyardError } from '../../../src/core/errors.js';
import { headerBag } from '../../../src/core/exchange.js';
import { errorResponse, resultResponse, type RpcRequest } from '../../../src/core/message.js';
import { schemaOf } from '../../helpers/schemas.js';
import { SCHEMAS_DIR } from '../../../src/strict/validator.js';

const check = schemaOf('2026-07-28');
const V = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const INFO = 'io.modelcontextprotocol/clientInfo';
const LEVEL = 'io.modelcontextprotocol/logLevel';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const GW = { name: 'switchyard-demo', version: '9.9.9' };

/** The tools/call a 2026-07-28 client sends (2026-07-28 basic#meta example, with a trace key the gateway keeps). */
const CALL: RpcRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'get_weather',
    arguments: { location: 'New York' },
    _meta: {
      [V]: '2026-07-28',
      [CAPS]: { elicitation: {} },
      [INFO]: { name: 'ExampleClient', version: '1.0.0' },
      [LEVEL]: 'info',
      progressToken: 'p-1',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    },
  },
};
/** The headers its HTTP POST mirrors (2026-07-28 basic/transports/streamable-http §Request headers). */
const CALL_HEADERS = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_weather' };

const codeOf = (fn: () => unknown): { code: string; rpc: unknown } => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError, String(err));
    return { code: err.code, rpc: encodeError(err) };
  }
  throw new Error('expected a refusal');
};

test('the method registry is the schema’s ClientRequest union (2026-07-28 schema, ClientRequest)', () => {
  const schema = JSON.parse(readFileSync(new URL('2026-07-28.schema.json', SCHEMAS_DIR), 'utf8')) as {
    $defs: Record<string, { anyOf?: Array<{ $ref: string }>; properties?: { method?: { const?: string } } }>;
  };
  const methods = schema.$defs.ClientRequest.anyOf!.map((r) => schema.$defs[r.$ref.split('/').pop()!].properties!.method!.const);
  assert.deepEqual([...METHODS].sort(), methods.sort());
  assert.deepEqual(REVISIONS, ['2026-07-28']);
  for (const m of CACHEABLE) assert.ok(METHODS.has(m), m);
});

test('decode: a tools/call over HTTP becomes a core request; protocol _meta keys go, others stay (basic#meta)', () => {
  check('CallToolRequest', CALL);
  assert.deepEqual(decodeRequest(CALL, REVISIONS, headerBag(CALL_HEADERS)), {
    protocolVersion: '2026-07-28',
    clientCapabilities: { elicitation: {} },
    clientInfo: { name: 'ExampleClient', version: '1.0.0' },
    logLevel: 'info',
    params: {
      name: 'get_weather',
      arguments: { location: 'New York' },
      _meta: { progressToken: 'p-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    },
  });
  // Over stdio there are no headers: only the _meta rules apply; a _meta left empty goes.
  const list: RpcRequest = { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { cursor: 'c', _meta: { [V]: '2026-07-28', [CAPS]: {} } } };
  check('ListToolsRequest', list);
  assert.deepEqual(decodeRequest(list, REVISIONS), {
    protocolVersion: '2026-07-28',
    clientCapabilities: {},
    clientInfo: undefined,
    logLevel: undefined,
    params: { cursor: 'c' },
  });
  assert.deepEqual(stripMeta({ _meta: { [V]: 'x', [CAPS]: {}, [INFO]: {}, [LEVEL]: 'debug' } }), {});
});

test('decode refuses in the rejection order of basic/transports/streamable-http §Server validation', () => {
  const meta = (m: Record<string, unknown>): RpcRequest => ({ ...CALL, params: { ...CALL.params, _meta: m } });
  const h = (o: Record<string, string | undefined>) => headerBag({ ...CALL_HEADERS, ...o });
  // 1. malformed _meta: -32602 (basic#meta).
  assert.deepEqual(
    codeOf(() => decodeRequest(meta({ [V]: 2026 }), REVISIONS, h({}))),
    {
      code: 'SWY_ERR_MODERN_META',
      rpc: { code: -32602, message: 'Invalid params: missing or malformed protocol _meta: protocolVersion must be a string' },
    },
  );
  assert.equal(codeOf(() => decodeRequest(meta({ [V]: '2026-07-28' }), REVISIONS, h({}))).code, 'SWY_ERR_MODERN_META');
  assert.equal(codeOf(() => decodeRequest(meta({ [V]: '2026-07-28', [CAPS]: {}, [LEVEL]: 'loud' }), REVISIONS)).code, 'SWY_ERR_MODERN_META');
  // 2. a header that disagrees with the body outranks an unsupported version: -32020.
  assert.deepEqual(
    codeOf(() => decodeRequest(meta({ [V]: 'v999.0.0', [CAPS]: {} }), REVISIONS, h({}))),
    {
      code: 'SWY_ERR_MODERN_HEADER_MISMATCH',
      rpc: { code: -32020, message: 'Header mismatch: MCP-Protocol-Version differs from _meta protocolVersion' },
    },
  );
  // 3. header and body agree on a version not served: -32022 with supported and requested.
  const v999 = codeOf(() => decodeRequest(meta({ [V]: 'v999.0.0', [CAPS]: {} }), REVISIONS, h({ 'mcp-protocol-version': 'v999.0.0' })));
  assert.deepEqual(v999, {
    code: 'SWY_ERR_MODERN_VERSION',
    rpc: { code: -32022, message: 'Unsupported protocol version: v999.0.0', data: { supported: ['2026-07-28'], requested: 'v999.0.0' } },
  });
  check('UnsupportedProtocolVersionError', errorResponse(1, v999.rpc));
  // 4. missing standard headers, a repeated or wrong Mcp-Name: -32020.
  for (const [headers, detail] of [
    [h({ 'mcp-protocol-version': undefined }), 'MCP-Protocol-Version header is required'],
    [h({ 'mcp-method': undefined }), 'Mcp-Method header is required'],
    [h({ 'mcp-name': undefined }), 'Mcp-Name header is required'],
    [headerBag({ ...CALL_HEADERS, 'mcp-name': ['get_weather', 'get_weather'] }), 'Mcp-Name header is repeated'],
    [h({ 'mcp-name': 'other' }), 'Mcp-Name differs from params.name'],
    [h({ 'mcp-name': '=?base64?Z2V0X3dlYXRoZXI?=' }), 'Mcp-Name has invalid Base64'],
  ] as const) {
    const r = codeOf(() => decodeRequest(CALL, REVISIONS, headers));
    assert.deepEqual(r, { code: 'SWY_ERR_MODERN_HEADER_MISMATCH', rpc: { code: -32020, message: `Header mismatch: ${detail}` } }, detail);
    check('HeaderMismatchError', errorResponse(1, r.rpc));
  }
  // Whitespace around a value is optional (the conformance suite sends `Mcp-Name:   name  `).
  assert.equal(decodeRequest(CALL, REVISIONS, h({ 'mcp-name': '  get_weather  ' })).protocolVersion, '2026-07-28');
});

test('header values: Base64 for what is not plain visible ASCII, canonical only; decode(encode(v)) is v (basic/transports/streamable-http, value encoding)', () => {
  assert.equal(encodeHeaderValue('get_weather'), 'get_weather');
  assert.equal(encodeHeaderValue('Zürich'), '=?base64?WsO8cmljaA==?=');
  assert.equal(encodeHeaderValue(' padded'), '=?base64?IHBhZGRlZA==?=');
  assert.equal(encodeHeaderValue(42), '42');
  assert.equal(encodeHeaderValue(true), 'true');
  assert.equal(decodeHeaderValue('=?base64?WsO8cmljaA==?='), 'Zürich');
  assert.equal(decodeHeaderValue('=?base64?WsO8cmljaB==?='), null, 'non-zero unused bits');
  assert.equal(decodeHeaderValue('Zürich'), null, 'raw non-ASCII');
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => decodeHeaderValue(encodeHeaderValue(s)) === s));
});

test('encode: results get resultType, caching fields on cacheable methods, and the serverInfo _meta (server/utilities/caching, basic#resulttype)', () => {
  const tools = { tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }] };
  const listed = encodeResult('tools/list', tools, GW);
  assert.deepEqual(listed, { tools: tools.tools, resultType: 'complete', ttlMs: 0, cacheScope: 'private', _meta: { [SERVER_INFO]: GW } });
  check('ListToolsResult', listed);
  check('JSONRPCResultResponse', resultResponse(2, listed));
  // The upstream's own caching fields win; the configured defaults fill in only what is missing.
  assert.deepEqual(encodeResult('resources/read', { contents: [], ttlMs: 60_000 }, GW, { ttlMs: 5_000, cacheScope: 'public' }), {
    contents: [],
    ttlMs: 60_000,
    cacheScope: 'public',
    resultType: 'complete',
    _meta: { [SERVER_INFO]: GW },
  });
  const called = encodeResult('tools/call', { content: [{ type: 'text', text: 'Sunny' }], _meta: { 'com.example/k': 1 } }, GW);
  assert.deepEqual(called, { content: [{ type: 'text', text: 'Sunny' }], resultType: 'complete', _meta: { 'com.example/k': 1, [SERVER_INFO]: GW } });
  check('CallToolResult', called);
  // The mount's serverInfo, whatever an upstream of this era put there: through an aggregate
  // mount, a 2026-07-28 member's own name was passed on (found by a client-author trial, h-t1).
  const member = encodeResult('tools/call', { content: [], _meta: { [SERVER_INFO]: { name: 'member', version: '9' }, 'com.example/k': 1 } }, GW);
  assert.deepEqual(member._meta, { [SERVER_INFO]: GW, 'com.example/k': 1 });
  // input_required passes as it is: no caching fields (basic/patterns/mrtr).
  const input = {
    resultType: 'input_required',
    inputRequests: { e1: { method: 'elicitation/create', params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } } } },
    requestState: 'opaque',
  };
  const asked = encodeResult('tools/call', input, GW);
  assert.deepEqual(asked, { ...input, _meta: { [SERVER_INFO]: GW } });
  check('InputRequiredResult', asked);
});

test('encode: errors in this era’s codes; -32002 from an older upstream becomes -32602 (basic#error-codes)', () => {
  const notFound = encodeError(new PeerRpcError({ code: -32002, message: 'Resource not found', data: { uri: 'file:///x' } }));
  assert.deepEqual(notFound, { code: -32602, message: 'Resource not found', data: { uri: 'file:///x' } });
  check('JSONRPCErrorResponse', errorResponse(3, notFound));
  const cap = encodeError(new SwitchyardError('SWY_ERR_MODERN_CAPABILITY', { data: { requiredCapabilities: { elicitation: {} } } }));
  assert.deepEqual(cap, { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { elicitation: {} } } });
  check('MissingRequiredClientCapabilityError', errorResponse(3, cap));
  assert.deepEqual(encodeError(new Error('boom')), { code: -32603, message: 'Internal error' });
});

test('status policy: HTTP-level refusals keep their status, in-band errors answer 200, an upstream -32021 is 400 (basic/transports/streamable-http)', () => {
  const cases: Array<[unknown, number]> = [
    [new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND'), 404],
    [new SwitchyardError('SWY_ERR_MODERN_HEADER_MISMATCH'), 400],
    [new SwitchyardError('SWY_ERR_MODERN_CAPABILITY'), 400],
    [new SwitchyardError('SWY_ERR_ADMISSION_BUSY'), 503],
    [new SwitchyardError('SWY_ERR_RATE_LIMITED'), 429],
    // Found by a trial: Redis down under rate limits answered 200 with a Retry-After.
    [new SwitchyardError('SWY_ERR_CLUSTER_UNAVAILABLE'), 503],
    // Found by helper h-pool: an upstream that could not open one more session answered 200 with a Retry-After.
    [new SwitchyardError('SWY_ERR_SESSION_LIMIT'), 503],
    [new SwitchyardError('SWY_ERR_REQ_PARAMS'), 200],
    [new SwitchyardError('SWY_ERR_REQ_DEADLINE'), 200],
    [new PeerRpcError({ code: -32021, message: 'needs elicitation' }), 400],
    [new PeerRpcError({ code: -32602, message: 'bad' }), 200],
    [new Error('boom'), 200],
  ];
  assert.deepEqual(
    cases.map(([e]) => statusFor(e)),
    cases.map(([, s]) => s),
  );
});
