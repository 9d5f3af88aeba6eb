// Long-lived SSE streams taken off node:http once their head is out (src/transports/sse.ts
// `detach`): the bytes on the wire are checked as a strict HTTP/1.1 chunked body (RFC 9112 §7.1),
// and the ways such a stream ends (the client half-closes, sends bytes it must not, the gateway
// closes, the listener closes) are each driven on a real socket against a real gateway.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { gateway, type TestGateway } from '../helpers/gateway.js';
import { DETACHED_LINGER_MS, DetachedStreams, openSse } from '../../src/transports/sse.js';

const ALL = ['2026-07-28', '2025-03-26', '2024-11-05'] as const;

/**
 * A strict reader of one HTTP/1.1 response on a raw socket: the head, then the body as chunks,
 * each checked to be exactly `<hex size>CRLF<size bytes>CRLF`; anything else fails the test.
 */
class RawStream {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  status = 0;
  headers: Record<string, string> = {};
  /** The body's bytes so far, de-chunked. */
  body = Buffer.alloc(0);
  /** True once the last chunk (`0` CRLF CRLF) was read. */
  lastChunk = false;
  closed = false;
  private headDone = false;

  constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private parse(): void {
    if (!this.headDone) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
      this.status = Number(lines[0].split(' ')[1]);
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        this.headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      this.buf = this.buf.subarray(end + 4);
      this.headDone = true;
    }
    if (this.headers['transfer-encoding'] !== 'chunked') {
      this.body = Buffer.concat([this.body, this.buf]);
      this.buf = Buffer.alloc(0);
      return;
    }
    while (this.buf.length > 0) {
      assert.equal(this.lastChunk, false, 'bytes after the last chunk');
      const nl = this.buf.indexOf('\r\n');
      if (nl < 0) return;
      const sizeText = this.buf.subarray(0, nl).toString('latin1');
      assert.match(sizeText, /^[0-9a-f]+$/, `chunk size line ${JSON.stringify(sizeText)}`);
      const size = parseInt(sizeText, 16);
      if (this.buf.length < nl + 2 + size + 2) return;
      assert.equal(this.buf.subarray(nl + 2 + size, nl + 4 + size).toString('latin1'), '\r\n', 'a chunk ends in CRLF right after its size in bytes');
      if (size === 0) this.lastChunk = true;
      else this.body = Buffer.concat([this.body, this.buf.subarray(nl + 2, nl + 2 + size)]);
      this.buf = this.buf.subarray(nl + 4 + size);
    }
  }

  /** Waits until `cond` holds (5 s at most). */
  async until(cond: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (!cond()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; body so far: ${this.text().slice(0, 300)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }

  text(): string {
    return this.body.toString('utf8');
  }

  /** The `data:` of each `message` event so far, parsed. */
  messages(): unknown[] {
    const text = this.text();
    // Whole events only: the last one may still be arriving.
    return text
      .slice(0, text.lastIndexOf('\n\n') + 2)
      .split('\n\n')
      .filter((e) => e.startsWith('event: message\n'))
      .map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as unknown);
  }
}

/** Opens GET `path` on a raw socket (HTTP/`version`) and reads its head. */
async function rawGet(port: number, path: string, version = '1.1'): Promise<RawStream> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  const s = new RawStream(socket);
  socket.write(`GET ${path} HTTP/${version}\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  await s.until(() => s.status !== 0, 'the response head');
  return s;
}

/** Opens an HTTP+SSE session: the stream and its endpoint path (from the `endpoint` event). */
async function sseSession(gw: TestGateway, t: { after(fn: () => void): void }): Promise<{ s: RawStream; endpoint: string; port: number }> {
  const port = Number(new URL(gw.url).port);
  const s = await rawGet(port, '/sse');
  t.after(() => s.socket.destroy());
  await s.until(() => s.text().includes('\n\n'), 'the endpoint event');
  const m = /^event: endpoint\ndata: (.+)\n\n/.exec(s.text());
  assert.ok(m, `first event: ${s.text()}`);
  return { s, endpoint: new URL(m[1], `http://127.0.0.1:${port}/sse`).pathname + new URL(m[1], `http://127.0.0.1:${port}/sse`).search, port };
}

/** POSTs `body` to the session's endpoint; resolves with the status. */
async function postTo(port: number, path: string, body: unknown): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

const init = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'detached', version: '1' } },
};

test('an HTTP+SSE stream is a strict chunked body; multi-byte and large events are framed by their size in bytes', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { s, endpoint, port } = await sseSession(gw, t);
  assert.equal(s.status, 200);
  assert.equal(s.headers['transfer-encoding'], 'chunked');
  // Keep-alive as before: undici answers `Connection: close` on a stream its caller aborts with a
  // spare connection it never sends on (the fastify example's shutdown then waited 70 s).
  assert.equal(s.headers['connection'], 'keep-alive');
  assert.equal(s.headers['content-type'], 'text/event-stream');
  assert.equal(await postTo(port, endpoint, init), 202);
  assert.equal(await postTo(port, endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }), 202);
  // Two bytes, four bytes and a 40,000-character (about 100 KB) message: a size counted in
  // UTF-16 units instead of bytes would break the framing the reader checks.
  const small = 'é ☃ 🚀';
  const large = 'ü€🚀'.repeat(10_000);
  assert.equal(await postTo(port, endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: small } } }), 202);
  assert.equal(await postTo(port, endpoint, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: large } } }), 202);
  await s.until(() => s.messages().length === 3, 'three answers');
  const [, a2, a3] = s.messages() as Array<{ id: number; result: { content: Array<{ text: string }> } }>;
  assert.equal(a2.id, 2);
  assert.equal(a2.result.content[0].text, `Echo: ${small}`);
  assert.equal(a3.id, 3);
  assert.equal(a3.result.content[0].text, `Echo: ${large}`);
  assert.equal(s.lastChunk, false);
});

test('a client that half-closes its side gets the last chunk and the connection closes; its session is gone', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { s, endpoint, port } = await sseSession(gw, t);
  s.socket.end();
  await s.until(() => s.closed, 'the connection to close');
  assert.equal(s.lastChunk, true, 'the body ended with the last chunk, not a cut');
  assert.equal(await postTo(port, endpoint, init), 404);
});

test('bytes a client sends after its GET cut the stream (no request can follow an unending answer); its session is gone', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const { s, endpoint, port } = await sseSession(gw, t);
  s.socket.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  await s.until(() => s.closed, 'the connection to close');
  assert.equal(await postTo(port, endpoint, init), 404);
});

test('closing the gateway ends its detached streams with the last chunk, and the listener closes at once', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const streams = await Promise.all([1, 2, 3].map(() => sseSession(gw, t)));
  const started = Date.now();
  await gw.close();
  assert.ok(Date.now() - started < 5_000, `close took ${Date.now() - started} ms`);
  for (const { s } of streams) {
    await s.until(() => s.closed, 'the connection to close');
    assert.equal(s.lastChunk, true);
  }
});

test('an HTTP/1.0 GET is not chunked, so its stream stays on node:http and still works', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const port = Number(new URL(gw.url).port);
  const s = await rawGet(port, '/sse', '1.0');
  t.after(() => s.socket.destroy());
  assert.equal(s.status, 200);
  assert.equal(s.headers['transfer-encoding'], undefined);
  await s.until(() => s.text().startsWith('event: endpoint\ndata: '), 'the endpoint event');
});

/** Initializes a 2025 session at `version` over fetch; resolves with its id. */
async function session2025(port: number, version: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ ...init, params: { ...init.params, protocolVersion: version } }),
  });
  await res.text();
  const sid = res.headers.get('mcp-session-id');
  assert.ok(sid, `initialize answered ${res.status}`);
  return sid;
}

/** Opens a 2025 session's GET stream on a raw socket (`extra`: more header lines, each ending in CRLF); not waiting for the head. */
async function rawSessionGet(t: { after(fn: () => void): void }, port: number, sid: string, extra = ''): Promise<RawStream> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  t.after(() => socket.destroy());
  const s = new RawStream(socket);
  socket.write(
    `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n${extra}Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n`,
  );
  return s;
}

test('a 2025 session GET stream is detached too: chunked, and DELETE of the session ends it with the last chunk; the connection is kept', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const port = Number(new URL(gw.url).port);
  const sid = await session2025(port, '2025-06-18');
  const s = await rawSessionGet(t, port, sid);
  await s.until(() => s.status !== 0, 'the response head');
  assert.equal(s.status, 200);
  assert.equal(s.headers['transfer-encoding'], 'chunked');
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': sid,
    'mcp-protocol-version': '2025-06-18',
  };
  await (
    await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
  ).text();
  const del = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE', headers });
  await del.text();
  // Ending the session ends its GET stream with the last chunk; the connection stays open, as its
  // `Connection: keep-alive` head said, for the client's next request.
  await s.until(() => s.lastChunk, 'the last chunk');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(s.closed, false, 'the connection is kept after the last chunk');
});

/** Reads one whole HTTP/1.1 response with a Content-Length body from `socket`. */
async function readResponse(socket: net.Socket): Promise<{ status: number; headers: string; body: string }> {
  let buf = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = buf.subarray(0, end).toString('latin1');
      const len = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve({ status: Number(headers.split(' ')[1]), headers, body: buf.subarray(end + 4, end + 4 + len).toString('utf8') });
    };
    const onClose = () => reject(new Error(`connection closed before a whole response: ${JSON.stringify(buf.toString('latin1'))}`));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

test('a connection whose GET stream the gateway ended serves the next request, and a new GET stream on it is detached again', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const port = Number(new URL(gw.url).port);
  const sid = await session2025(port, '2025-06-18');
  const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const s = await rawSessionGet(t, port, sid);
  const socket = s.socket;
  await s.until(() => s.status === 200, 'the response head');
  await (await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE', headers })).text();
  await s.until(() => s.lastChunk, 'the last chunk');
  // A client that reuses connections (nginx's upstream keepalive, an undici pool) sends its next
  // request here as soon as it has read the last chunk. The connection used to close right after
  // it, failing that request (a 502 from nginx for a POST).
  socket.removeAllListeners('data');
  socket.removeAllListeners('close');
  // The next request on the same connection: node:http parses and answers it.
  const body = JSON.stringify({ ...init, params: { ...init.params, protocolVersion: '2025-06-18' } });
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const second = await readResponse(socket);
  assert.equal(second.status, 200, second.body);
  const sid2 = /\r\nmcp-session-id: *(\S+)/i.exec(second.headers)?.[1];
  assert.ok(sid2, second.headers);
  // A GET stream on the same connection again: detached (chunked), and a half-close ends it with the last chunk.
  const s2 = new RawStream(socket);
  socket.write(
    `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid2}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n`,
  );
  await s2.until(() => s2.status !== 0, 'the second stream head');
  assert.equal(s2.status, 200);
  assert.equal(s2.headers['transfer-encoding'], 'chunked');
  socket.end();
  await s2.until(() => s2.closed, 'the connection to close');
  assert.equal(s2.lastChunk, true);
});

test('a 2025 GET stream resumed with Last-Event-ID is detached too: a stray byte cuts it, as node:http never would', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const port = Number(new URL(gw.url).port);
  const sid = await session2025(port, '2025-11-25');
  const get = (extra: string) =>
    `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n${extra}\r\n`;
  const first = net.connect({ host: '127.0.0.1', port });
  await once(first, 'connect');
  t.after(() => first.destroy());
  const s = new RawStream(first);
  first.write(get(''));
  // 2025-11-25: the stream opens with a priming event (an id, empty data).
  await s.until(() => /^id: (\S+)\n/m.test(s.text()), 'the priming event');
  const lastId = /^id: (\S+)\n/m.exec(s.text())![1];
  first.destroy();
  await s.until(() => s.closed, 'the first connection to close');
  // The resumption may race the server's view of the first close: retry a conflict briefly.
  let r!: RawStream;
  for (let i = 0; i < 50; i++) {
    const socket = net.connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    t.after(() => socket.destroy());
    r = new RawStream(socket);
    socket.write(get(`Last-Event-ID: ${lastId}\r\n`));
    await r.until(() => r.status !== 0, 'the resumption head');
    if (r.status === 200) break;
    socket.destroy();
    await new Promise((w) => setTimeout(w, 20));
  }
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  // node:http would take this as the start of a pipelined request and keep the stream; a
  // detached stream cannot answer a request, so it is cut (no last chunk).
  r.socket.write('X');
  await r.until(() => r.closed, 'the resumed stream to be cut');
  assert.equal(r.lastChunk, false);
});

test('an undici pool of one connection keeps using it after each GET stream the gateway ends: 20 rounds, one connection', async (t) => {
  const { Pool } = await import('undici');
  const gw = await gateway(t, { dialects: [...ALL] });
  const port = Number(new URL(gw.url).port);
  const origin = `http://127.0.0.1:${port}`;
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  t.after(() => pool.destroy());
  let connects = 0;
  pool.on('connect', () => connects++);
  const body = JSON.stringify({ ...init, params: { ...init.params, protocolVersion: '2025-06-18' } });
  const post = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  for (let round = 0; round < 20; round++) {
    const r = await pool.request({ path: '/mcp', method: 'POST', headers: post, body });
    assert.equal(r.statusCode, 200, `round ${round}: initialize`);
    await r.body.text();
    const sid = String(r.headers['mcp-session-id']);
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const stream = await pool.request({ path: '/mcp', method: 'GET', headers: { ...h, accept: 'text/event-stream' } });
    assert.equal(stream.statusCode, 200, `round ${round}: GET stream`);
    const ended = stream.body.text();
    // Queued behind the stream: the pool sends it on the same connection as soon as it has read
    // the stream's last chunk.
    const next = pool.request({ path: '/mcp', method: 'POST', headers: post, body });
    // The DELETE goes on its own connection (the pool's one is held by the stream); it ends the stream.
    const del = await fetch(`${origin}/mcp`, { method: 'DELETE', headers: h });
    assert.equal(del.status, 200, `round ${round}: DELETE`);
    await del.text();
    await ended;
    const n = await next;
    assert.equal(n.statusCode, 200, `round ${round}: the request sent right after the last chunk`);
    await n.body.text();
  }
  // Every request went on the one connection: none was closed under the pool.
  assert.equal(connects, 1);
});

test('a GET stream whose request said Connection: close ends with the last chunk and then its connection', async (t) => {
  const gw = await gateway(t, { dialects: [...ALL] });
  const port = Number(new URL(gw.url).port);
  const sid = await session2025(port, '2025-06-18');
  const s = await rawSessionGet(t, port, sid, 'Connection: Keep-Alive, Close\r\n');
  await s.until(() => s.status === 200, 'the response head');
  await (await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } })).text();
  // RFC 9112 §9.6: no further request is served on a connection whose request said close.
  await s.until(() => s.closed, 'the connection to close');
  assert.equal(s.lastChunk, true);
});

test('openSse on a plain node:http server: the parser and response are released, and DetachedStreams.endAll lets server.close finish', async (t) => {
  const detached = new DetachedStreams();
  const seen: Array<{ path: string; parser: unknown; resSocket: unknown; dataListeners: number }> = [];
  const server = http.createServer((req, res) => {
    const open = () => {
      const stream = openSse(res, { keepaliveMs: 0, maxBufferBytes: 1 << 20, detached });
      const socket = req.socket as net.Socket & { parser?: unknown };
      seen.push({ path: req.url ?? '', parser: socket.parser, resSocket: res.socket, dataListeners: socket.listenerCount('data') });
      stream.send({ event: 'message', data: 'hello' });
    };
    // In the request event itself node:http is still parsing (the message is not complete):
    // that stream must stay on node:http. A later turn (as fastify's handlers run) is detached.
    if (req.url === '/sync') open();
    else setImmediate(open);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const sync = await rawGet(port, '/sync');
  t.after(() => sync.socket.destroy());
  await sync.until(() => sync.text() === 'event: message\ndata: hello\n\n', 'the event');
  const s = await rawGet(port, '/');
  await s.until(() => s.text() === 'event: message\ndata: hello\n\n', 'the event');
  assert.equal(seen.length, 2);
  assert.notEqual(seen[0].parser, null, 'the stream opened while node:http was parsing stays on it');
  // What node:http held per connection is gone: no parser, and the socket is no response's.
  assert.deepEqual(seen[1], { path: '/', parser: null, resSocket: null, dataListeners: 1 });
  assert.equal(detached.size, 1);
  sync.socket.destroy();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  detached.endAll();
  await closed;
  await s.until(() => s.closed, 'the connection to close');
  assert.equal(s.lastChunk, true);
  assert.equal(detached.size, 0);
});

test(`a detached stream's connection is cut ${DETACHED_LINGER_MS} ms after its last chunk when the client never closes its side`, async (t) => {
  const detached = new DetachedStreams();
  let close: (() => void) | undefined;
  const server = http.createServer((_req, res) => {
    setImmediate(() => {
      const stream = openSse(res, { keepaliveMs: 0, maxBufferBytes: 1 << 20, detached });
      close = () => stream.close();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  // A client that reads everything but never closes its side (allowHalfOpen: no FIN back).
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await once(socket, 'connect');
  t.after(() => socket.destroy());
  const s = new RawStream(socket);
  socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  await s.until(() => close !== undefined && s.status === 200, 'the stream');
  const ended = Date.now();
  close!();
  await s.until(() => s.lastChunk, 'the last chunk');
  assert.equal(detached.size, 1, 'the connection lingers while the client may still close it');
  const cut = await new Promise<number>((resolve) => {
    const check = setInterval(() => {
      if (detached.size === 0) {
        clearInterval(check);
        resolve(Date.now() - ended);
      }
    }, 50);
  });
  assert.ok(cut >= DETACHED_LINGER_MS - 100 && cut < DETACHED_LINGER_MS + 3_000, `cut after ${cut} ms`);
});
