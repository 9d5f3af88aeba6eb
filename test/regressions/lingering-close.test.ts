// A 413 or 501 answered while the client is still sending its body reaches the client: the
// connection is half-closed and drained (a lingering close) instead of destroyed with the body's
// bytes unread, which made the kernel send a reset and the client lose the answer. Found by a
// review: a client that writes its whole 8 MB body before reading (as simple clients do) got
// EPIPE and no answer, 20 times out of 20. The drain is bounded in time, idle time and bytes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { DEFAULT_LIMITS, type Limits } from '../../src/core/limits.js';
import { gateway, type TestGateway } from '../helpers/gateway.js';
import { modernHeaders } from '../helpers/http.js';

const LIMITS: Limits = { ...DEFAULT_LIMITS, maxBodyBytes: 64 * 1024 };
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** What a client read off one connection, and how the connection ended for it. */
interface Got {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The socket error the client saw (EPIPE, ECONNRESET), if any. */
  error?: string;
  /** Bytes of the body the client wrote before it stopped or failed. */
  written: number;
}

/** The request head of a 2026-07-28 tools/call POST to `port`, with `fields` added. */
function head(port: number, fields: Record<string, string>): string {
  const lines = Object.entries({ host: `127.0.0.1:${port}`, ...modernHeaders('tools/call', 'echo'), ...fields }).map(([k, v]) => `${k}: ${v}\r\n`);
  return `POST /mcp HTTP/1.1\r\n${lines.join('')}\r\n`;
}

/**
 * Writes `text` and then `bodyBytes` bytes of body (in 64 KiB chunks, each wrapped by `frame`,
 * waiting `gapMs` between chunks when given, else only for drain) without reading, as a client
 * that reads its answer only once it has sent its request; then reads until the connection
 * closes. A socket error ends the writing.
 */
function uploadThenRead(
  port: number,
  text: string,
  bodyBytes: number,
  opts: { gapMs?: number; frame?: (b: Buffer) => Buffer | string; trailer?: string } = {},
): Promise<Got> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.pause();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let written = 0;
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    s.on('close', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const [statusLine = '', ...fields] = (split < 0 ? '' : all.slice(0, split)).split('\r\n');
      const headers: Record<string, string> = {};
      for (const f of fields) headers[f.slice(0, f.indexOf(':')).toLowerCase()] = f.slice(f.indexOf(':') + 1).trim();
      const body = split < 0 ? '' : all.slice(split + 4);
      resolve({
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        body: headers['transfer-encoding'] === 'chunked' ? dechunk(body) : body,
        error,
        written,
      });
    });
    const upload = async () => {
      s.write(text);
      while (written < bodyBytes && !s.destroyed) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, bodyBytes - written));
        const ok = s.write(opts.frame ? opts.frame(piece) : piece);
        written += piece.length;
        if (opts.gapMs !== undefined) await new Promise((r) => setTimeout(r, opts.gapMs));
        else if (!ok)
          await new Promise<void>((r) => {
            s.once('drain', r);
            s.once('close', r);
          });
      }
      if (opts.trailer !== undefined && !s.destroyed) s.write(opts.trailer);
      s.resume();
    };
    s.once('connect', () => void upload());
  });
}

/** The payload of a chunked body (RFC 9112 §7.1), sizes in hex, extensions and trailers not used here. */
function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const size = nl < 0 ? 0 : parseInt(rest.slice(0, nl), 16);
    if (!(size > 0)) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

/** Resolves once the listener has no open connection (the server closed its side too). */
async function noConnections(gw: TestGateway): Promise<void> {
  const server = gw.http.app.server;
  for (;;) {
    const n = await new Promise<number>((resolve, reject) => server.getConnections((err, c) => (err ? reject(err) : resolve(c))));
    if (n === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const TOO_LARGE = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Request body exceeds the limit' } };

test('a 413 sent while the client uploads 8 MB reaches a client that reads only after writing, every time', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  const port = gw.http.address().port;
  const size = 8 * 1024 * 1024;
  for (let i = 0; i < 5; i++) {
    const got = await uploadThenRead(port, head(port, { 'content-length': String(size) }), size);
    assert.equal(got.error, undefined, `run ${i}`);
    assert.equal(got.written, size);
    assert.equal(got.status, 413, `run ${i}`);
    assert.equal(got.headers.connection, 'close');
    assert.deepEqual(JSON.parse(got.body), TOO_LARGE);
  }
  await noConnections(gw);
});

test('a 413 reaches a client that sends its 3 MB slowly, and one whose chunked body passes the bound', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  const port = gw.http.address().port;
  const size = 3 * 1024 * 1024;
  for (let i = 0; i < 3; i++) {
    const slow = await uploadThenRead(port, head(port, { 'content-length': String(size) }), size, { gapMs: 2 });
    assert.equal(slow.error, undefined, `run ${i}`);
    assert.equal(slow.status, 413, `run ${i}`);
    assert.deepEqual(JSON.parse(slow.body), TOO_LARGE);
    // No Content-Length: the bound is found while reading, and the 413 goes out mid-body.
    const chunked = await uploadThenRead(port, head(port, { 'transfer-encoding': 'chunked' }), size, {
      frame: (b) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]),
      trailer: '0\r\n\r\n',
    });
    assert.equal(chunked.error, undefined, `run ${i}`);
    assert.equal(chunked.status, 413, `run ${i}`);
    assert.equal(chunked.headers.connection, 'close');
    assert.deepEqual(JSON.parse(chunked.body), TOO_LARGE);
  }
  await noConnections(gw);
});

test('a 501 for an unsupported Transfer-Encoding reaches a client that goes on sending 8 MB of body', async (t) => {
  const gw = await gateway(t, { limits: LIMITS });
  const port = gw.http.address().port;
  const size = 8 * 1024 * 1024;
  for (let i = 0; i < 5; i++) {
    const got = await uploadThenRead(port, head(port, { 'transfer-encoding': 'gzip, chunked' }), size, {
      frame: (b) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]),
      trailer: '0\r\n\r\n',
    });
    assert.equal(got.error, undefined, `run ${i}`);
    assert.equal(got.status, 501, `run ${i}`);
    assert.equal(got.headers.connection, 'close');
    assert.deepEqual(JSON.parse(got.body), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Not Implemented: unsupported Transfer-Encoding' } });
  }
  await noConnections(gw);
});

test('the drain is bounded: past lingerMaxBytes the connection is closed; a client that goes quiet, or trickles, is closed too', async (t) => {
  const gw = await gateway(t, { limits: { ...LIMITS, lingerMaxBytes: 1024 * 1024, lingerIdleMs: 200, lingerTimeMs: 600 } });
  const port = gw.http.address().port;
  // 64 MB never read: the server stops draining after 1 MiB, and the client's writes fail.
  const flood = await uploadThenRead(port, head(port, { 'content-length': String(64 * 1024 * 1024) }), 64 * 1024 * 1024);
  assert.ok(flood.error === 'EPIPE' || flood.error === 'ECONNRESET', String(flood.error));
  assert.ok(flood.written < 64 * 1024 * 1024, String(flood.written));

  // Sends part of the body, then nothing, and never closes: the server closes its side after
  // lingerIdleMs (the client, half-closed, hears nothing of that until it writes again).
  const quiet = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  t.after(() => quiet.destroy());
  quiet.on('error', () => {});
  await once(quiet, 'connect');
  let quietText = '';
  quiet.on('data', (d: Buffer) => (quietText += d.toString('latin1')));
  quiet.write(head(port, { 'content-length': String(1024 * 1024) }));
  quiet.write(CHUNK);
  await once(quiet, 'end');
  assert.match(quietText, /^HTTP\/1\.1 413 /);
  await noConnections(gw);

  // Sends a little of the body every 20 ms, forever: closed after lingerTimeMs, though never idle that long.
  const trickle = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  t.after(() => trickle.destroy());
  trickle.on('error', () => {});
  await once(trickle, 'connect');
  trickle.write(head(port, { 'content-length': String(1024 * 1024 * 1024) }));
  trickle.write(CHUNK);
  const drip = setInterval(() => trickle.write('x'.repeat(512)), 20);
  t.after(() => clearInterval(drip));
  // (events.once would reject on the EPIPE the next drop meets)
  await new Promise((r) => trickle.once('close', r));
  clearInterval(drip);
  await noConnections(gw);
  quiet.destroy();
});
