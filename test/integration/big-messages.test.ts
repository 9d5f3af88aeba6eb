// Large messages through the front doors: a result holding a long string is written in pieces
// (chunked, no Content-Length) and arrives exactly; a body is decoded from UTF-8 as it arrives,
// characters split across TCP segments kept whole, bad UTF-8 and the body bound refused as before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants } from 'node:buffer';
import net from 'node:net';
import { once } from 'node:events';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { LONG_STRING_BYTES } from '../../src/core/json-bytes.js';
import { LARGE_STRING_UNITS } from '../../src/core/json-pieces.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, openHttpSseSession, post, send } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const LIMITS = { ...DEFAULT_LIMITS, maxBodyBytes: 8 * 1024 * 1024 };
/** Longer than LARGE_STRING_UNITS, with characters JSON escapes and ones of 2, 3 and 4 UTF-8 bytes. */
const MESSAGE = 'ascii "quoted" back\\slash\nnewline é € 😀 \u0001 '.repeat(Math.ceil((LARGE_STRING_UNITS * 1.5) / 40));

test('a 2026-07-28 result holding a long string arrives exactly, chunked, without Content-Length; a short one keeps its Content-Length', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: MESSAGE } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.equal(r.headers['content-length'], undefined);
  const answer = r.json as { id: number; result: { content: unknown } };
  assert.equal(answer.id, 1);
  assert.deepEqual(answer.result.content, [{ type: 'text', text: `Echo: ${MESSAGE}` }]);
  const small = await post(gw.url, modernBody(2, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(small.headers['content-length'], String(Buffer.byteLength(small.text)));
  assert.deepEqual((small.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);
});

test('a 2025 session answer holding a long string arrives exactly as JSON, with its session id', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  const h = await initSession(gw.url, '2025-11-25');
  const r = await post(gw.url, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { message: MESSAGE } } }, { ...H2025, ...h });
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.equal(r.headers['mcp-session-id'], h['mcp-session-id']);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: `Echo: ${MESSAGE}` }] } });
});

test('over HTTP+SSE (2024-11-05) the long answer is one message event that reads back exactly, and the stream goes on, even when it is larger than maxStreamBufferBytes', async (t) => {
  // The bound is checked before each event: one event larger than it still reaches a reader
  // that keeps up (a new user's trial saw a 9 MB answer end the stream of a fast reader).
  const gw = await gateway(t, { limits: { ...LIMITS, maxStreamBufferBytes: 64 * 1024 }, dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const origin = new URL(gw.url).origin;
  const { sse, to } = await openHttpSseSession(t, origin, {}, 'big');
  const h = { 'content-type': 'application/json' };
  const call = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: MESSAGE } } };
  assert.equal((await send(to, 'POST', JSON.stringify(call), h)).status, 202);
  const ev = await sse.next(20_000);
  assert.equal(ev.event, 'message');
  assert.deepEqual(JSON.parse(ev.data), { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: `Echo: ${MESSAGE}` }] } });
  assert.equal((await send(to, 'POST', JSON.stringify({ ...call, id: 6, params: { name: 'echo', arguments: { message: 'after' } } }), h)).status, 202);
  assert.deepEqual(JSON.parse((await sse.next()).data), { jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: 'Echo: after' }] } });
});

test('through a stdio upstream (server-everything) the long request goes to the child in pieces and the answer comes back exactly', async (t) => {
  const gw = await gateway(t, { limits: LIMITS, stdio: everythingStdioCommand() });
  const r = await post(gw.url, modernBody(8, 'tools/call', { name: 'echo', arguments: { message: MESSAGE } }), modernHeaders('tools/call', 'echo'));
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Echo: ${MESSAGE}` }]);
});

test('the fetch handler streams a long answer as a body of pieces that reads back exactly', async (t) => {
  const sy = switchyard(t, { limits: { maxBodyBytes: LIMITS.maxBodyBytes } });
  const res = await sy.fetch(modernRequest('tools/call', { name: 'echo', arguments: { message: MESSAGE } }, { name: 'echo' }));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), null);
  assert.deepEqual(((await res.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Echo: ${MESSAGE}` }]);
});

/** Writes a POST whose body goes out in `piece`-byte segments, one per turn of the event loop; the answer's status and body. */
async function trickle(port: number, headers: Record<string, string>, body: Buffer, piece: number, chunked = false): Promise<{ status: number; text: string }> {
  const s = net.connect({ host: '127.0.0.1', port });
  s.setNoDelay(true);
  await once(s, 'connect');
  const chunks: Buffer[] = [];
  s.on('data', (d: Buffer) => chunks.push(d));
  s.on('error', () => {});
  // Watched from the start: the server may answer and close before the body is all written.
  const closed = once(s, 'close');
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  lines.push(chunked ? 'transfer-encoding: chunked' : `content-length: ${body.length}`, 'connection: close');
  s.write(`POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${lines.join('\r\n')}\r\n\r\n`);
  for (let i = 0; i < body.length && !s.destroyed; i += piece) {
    const part = body.subarray(i, i + piece);
    s.write(chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  if (chunked && !s.destroyed) s.write('0\r\n\r\n');
  await closed;
  // The body is de-chunked as bytes: chunk sizes count bytes, not characters.
  const raw = Buffer.concat(chunks);
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, split + 2).toString('latin1');
  let rest = raw.subarray(split + 4);
  const status = Number(head.slice(9, 12));
  if (!/\r\ntransfer-encoding: chunked\r\n/i.test(head)) return { status, text: rest.toString('utf8') };
  const out: Buffer[] = [];
  for (let size = parseInt(rest.toString('latin1', 0, 16), 16); size > 0; size = parseInt(rest.toString('latin1', 0, 16), 16)) {
    const nl = rest.indexOf('\r\n');
    out.push(rest.subarray(nl + 2, nl + 2 + size));
    rest = rest.subarray(nl + 2 + size + 2);
  }
  return { status, text: Buffer.concat(out).toString('utf8') };
}

test('a body arriving in 5-byte segments, multi-byte characters cut across them, is decoded whole; bad UTF-8 there is -32700; past the bound 413', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, maxBodyBytes: 4096 } });
  const port = Number(new URL(gw.url).port);
  const message = 'é€😀 ünïcödé '.repeat(8);
  const body = Buffer.from(JSON.stringify(modernBody(3, 'tools/call', { name: 'echo', arguments: { message } })));
  for (const chunked of [false, true]) {
    const ok = await trickle(port, modernHeaders('tools/call', 'echo'), body, 5, chunked);
    assert.equal(ok.status, 200, ok.text);
    const json = JSON.parse(ok.text) as { result: { content: Array<{ text: string }> } };
    assert.equal(json.result.content[0].text, `Echo: ${message}`);
  }
  // A lone continuation byte in the middle of the body.
  const bad = Buffer.concat([body.subarray(0, 200), Buffer.from([0x80]), body.subarray(200)]);
  const r = await trickle(port, modernHeaders('tools/call', 'echo'), bad, 7);
  assert.equal(r.status, 400);
  assert.deepEqual(JSON.parse(r.text), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON: body is not valid UTF-8' } });
  // A chunked body (no Content-Length) is cut at the bound while it arrives.
  const big = Buffer.from(JSON.stringify(modernBody(4, 'tools/call', { name: 'echo', arguments: { message: 'x'.repeat(5000) } })));
  const over = await trickle(port, modernHeaders('tools/call', 'echo'), big, 1024, true);
  assert.equal(over.status, 413);
  assert.match(over.text, /Request body exceeds the limit/);
});

test('a body of 256 KiB and more is parsed from its bytes: a long string without escapes keeps its leading BOM, bad UTF-8 inside it is -32700, a raw control character in it is -32700', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  const port = Number(new URL(gw.url).port);
  const message = `\ufeff${'plain é € 😀 text '.repeat(Math.ceil(LONG_STRING_BYTES / 16))}`;
  const body = Buffer.from(JSON.stringify(modernBody(5, 'tools/call', { name: 'echo', arguments: { message } })));
  assert.ok(body.length > LONG_STRING_BYTES);
  const ok = await trickle(port, modernHeaders('tools/call', 'echo'), body, 64 * 1024);
  assert.equal(ok.status, 200, ok.text.slice(0, 200));
  assert.equal((JSON.parse(ok.text) as { result: { content: Array<{ text: string }> } }).result.content[0].text, `Echo: ${message}`);
  const at = body.indexOf('plain') + 1000;
  const bad = Buffer.concat([body.subarray(0, at), Buffer.from([0xc3]), body.subarray(at)]);
  const r = await trickle(port, modernHeaders('tools/call', 'echo'), bad, 64 * 1024);
  assert.equal(r.status, 400);
  assert.deepEqual(JSON.parse(r.text), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON: body is not valid UTF-8' } });
  const control = Buffer.from(body);
  control[at] = 0x01;
  const c = await trickle(port, modernHeaders('tools/call', 'echo'), control, 64 * 1024);
  assert.equal(c.status, 400);
  assert.equal((JSON.parse(c.text) as { error: { code: number } }).error.code, -32700);
});

test('a Content-Length past what one Buffer holds is 413 at once, even under a larger body bound (it was a 500: the body buffer was made from the header)', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, maxBodyBytes: 100_000_000_000 } });
  const port = Number(new URL(gw.url).port);
  const s = net.connect({ host: '127.0.0.1', port });
  t.after(() => s.destroy());
  await once(s, 'connect');
  const chunks: Buffer[] = [];
  s.on('data', (d: Buffer) => chunks.push(d));
  const headers = Object.entries(modernHeaders('tools/call', 'echo')).map(([k, v]) => `${k}: ${v}\r\n`);
  s.write(`POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${headers.join('')}content-length: ${constants.MAX_LENGTH + 1}\r\n\r\n{"a":1}`);
  const deadline = Date.now() + 5000;
  while (!Buffer.concat(chunks).includes('\r\n\r\n') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  const head = Buffer.concat(chunks).toString('latin1');
  assert.match(head, /^HTTP\/1\.1 413 /);
  assert.match(head, /Request body exceeds the limit/);
});
