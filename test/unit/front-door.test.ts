// The front door's neutral checks: Accept on GET streams, and POST bodies with and without
// content-coding support (the fastify routes decode; a front door that cannot, refuses).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { SwitchyardError } from '../../src/core/errors.js';
import { headerBag } from '../../src/core/exchange.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { mcpAllowOf } from '../../dialects/index.js';
import { checkHead, decodePost, parsePost, PostChunks } from '../../src/transports/front-door.js';

/** The Allow of a mount with every dialect. */
const ALL_METHODS = mcpAllowOf(['2024-11-05', '2025-03-26', '2026-07-28']);

const JSON_CT = { 'content-type': 'application/json' };
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

function code(fn: () => unknown): { code: string; headers: unknown } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return { code: (err as SwitchyardError).code, headers: (err as SwitchyardError).headers };
  }
}

test('checkHead: a GET on the MCP path must list text/event-stream itself; /sse and POSTs match by RFC 9110', () => {
  const get = (accept: string | undefined, route: 'mcp' | 'sse' = 'mcp') =>
    code(() => checkHead(route, 'GET', headerBag(accept === undefined ? {} : { accept }), ALL_METHODS));
  const notAcceptable = { code: 'SWY_ERR_HTTP_NOT_ACCEPTABLE', headers: undefined };
  for (const a of [undefined, '*/*', 'text/*', 'text/event-stream;q=0, */*', 'application/json']) assert.deepEqual(get(a), notAcceptable, String(a));
  for (const a of ['text/event-stream', 'TEXT/Event-Stream', 'application/json;q=0.9, text/event-stream;q=0.1']) assert.equal(get(a), undefined, a);
  for (const a of [undefined, '*/*', 'text/*', 'text/event-stream']) assert.equal(get(a, 'sse'), undefined, String(a));
  assert.deepEqual(get('text/event-stream;q=0', 'sse'), notAcceptable);
  const post = (accept: string) => code(() => checkHead('mcp', 'POST', headerBag({ accept, ...JSON_CT }), ALL_METHODS));
  assert.equal(post('*/*'), undefined);
  assert.deepEqual(post('application/json, text/event-stream;q=0'), notAcceptable);
});

test('parsePost (no decoding) refuses any coding but identity with 415 and Accept-Encoding: identity', () => {
  const bytes = Buffer.from(PING);
  assert.deepEqual(parsePost(headerBag({ ...JSON_CT, 'content-encoding': 'identity' }), bytes, DEFAULT_LIMITS), { jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.deepEqual(
    code(() => parsePost(headerBag({ ...JSON_CT, 'content-encoding': 'gzip' }), zlib.gzipSync(bytes), DEFAULT_LIMITS)),
    {
      code: 'SWY_ERR_HTTP_CONTENT_ENCODING',
      headers: { 'Accept-Encoding': 'identity' },
    },
  );
  assert.deepEqual(
    code(() => parsePost(headerBag({ 'content-type': 'a b' }), bytes, DEFAULT_LIMITS)),
    { code: 'SWY_ERR_HTTP_CONTENT_TYPE', headers: undefined },
  );
});

test('decodePost decodes within maxBodyBytes of decoded size', async () => {
  const bytes = Buffer.from(PING);
  const h = (coding: string) => headerBag({ ...JSON_CT, 'content-encoding': coding });
  assert.deepEqual(await decodePost(h('br'), zlib.brotliCompressSync(bytes), DEFAULT_LIMITS), { jsonrpc: '2.0', id: 1, method: 'ping' });
  await assert.rejects(decodePost(h('gzip'), zlib.gzipSync(bytes), { ...DEFAULT_LIMITS, maxBodyBytes: bytes.length - 1 }), {
    code: 'SWY_ERR_HTTP_BODY_TOO_LARGE',
  });
  assert.deepEqual(await decodePost(h('gzip'), zlib.gzipSync(bytes), { ...DEFAULT_LIMITS, maxBodyBytes: bytes.length }), {
    jsonrpc: '2.0',
    id: 1,
    method: 'ping',
  });
});

test('decodePost parses a long body from the chunks it arrived in (PostChunks), as it parses the bytes joined', async () => {
  const message = 'long "text" é 😀 '.repeat(20_000);
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message } } }));
  const chunks = [body.subarray(0, 1), body.subarray(1, 65_536), body.subarray(65_536, 65_537), body.subarray(65_537)];
  const want = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message } } };
  assert.deepEqual(await decodePost(headerBag(JSON_CT), new PostChunks(chunks, body.length), DEFAULT_LIMITS), want);
  // Not JSON (its closing brace cut off): the same refusal as for any body.
  await assert.rejects(decodePost(headerBag(JSON_CT), new PostChunks([body.subarray(0, 70_000), body.subarray(70_000, -1)], body.length - 1), DEFAULT_LIMITS), {
    code: 'SWY_ERR_REQ_PARSE',
  });
});
