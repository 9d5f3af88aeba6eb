// Large SSE events (src/transports/sse.ts): written piece by piece as the connection takes them,
// with what is sent meanwhile after them in order, on node:http and on a detached stream; the
// stream's bound counts what waits; a stream closed meanwhile ends after the last of it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { serializeBody } from '../../src/core/json-pieces.js';
import type { SseStream } from '../../src/core/exchange.js';
import { DetachedStreams, openSse, type SseCut } from '../../src/transports/sse.js';

/** A message holding a long string (written in pieces by serializeBody), with characters of 1 to 4 UTF-8 bytes. */
function bigMessage(id: number, units: number): { msg: unknown; text: string } {
  const text = `${id}: é € 😀 "q" `.repeat(Math.ceil(units / 16)).slice(0, units);
  return { msg: { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } }, text };
}

/** A node:http server whose every GET opens an SSE stream (taken off node:http when `detached`), handed to `onStream`. */
async function sseServer(
  t: { after(fn: () => void): void },
  detached: boolean,
  maxBufferBytes: number,
  onStream: (s: SseStream) => void,
  onCut?: (c: SseCut) => void,
): Promise<number> {
  const registry = new DetachedStreams();
  const server = http.createServer((_req, res) => {
    // A later turn than the request's own, as fastify's handlers run: the stream can be detached.
    setImmediate(() => onStream(openSse(res, { keepaliveMs: 0, maxBufferBytes, detached: detached ? registry : undefined, onCut })));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    registry.endAll();
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as net.AddressInfo).port;
}

/** Reads the whole response of GET / as text (de-chunked by undici's parser via fetch), starting after `delayMs`. */
async function readAll(port: number, delayMs: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  await new Promise((r) => setTimeout(r, delayMs));
  return await res.text();
}

for (const detached of [false, true]) {
  test(`${detached ? 'detached' : 'on node:http'}: large events go out whole and in order with what was sent while they were written, and close() ends after them`, async (t) => {
    const a = bigMessage(1, 3 * 1024 * 1024);
    const b = bigMessage(2, 300 * 1024);
    const port = await sseServer(t, detached, 1 << 30, (s) => {
      assert.equal(s.send({ event: 'message', data: serializeBody(a.msg) }), true);
      assert.equal(s.send({ event: 'message', id: 'small-1', data: '{"n":1}' }), true);
      s.comment('between');
      // A large string (not pieces) is written in slices too.
      assert.equal(s.send({ event: 'message', data: JSON.stringify(b.msg) }), true);
      assert.equal(s.send({ event: 'message', data: '{"n":2}' }), true);
      s.close();
      assert.equal(s.closed, true);
      assert.equal(s.cut, false, 'closed by the gateway, not cut');
      assert.equal(s.send({ event: 'message', data: '{"n":3}' }), false, 'nothing is taken once closed');
    });
    // The reader starts late, so the writes above wait for the connection to drain.
    const text = await readAll(port, 300);
    assert.equal(
      text,
      `event: message\ndata: ${JSON.stringify(a.msg)}\n\n` +
        'event: message\nid: small-1\ndata: {"n":1}\n\n' +
        ': between\n\n' +
        `event: message\ndata: ${JSON.stringify(b.msg)}\n\n` +
        'event: message\ndata: {"n":2}\n\n',
    );
  });

  test(`${detached ? 'detached' : 'on node:http'}: what waits behind a large event counts against maxBufferBytes; past it the stream is cut`, async (t) => {
    const big = bigMessage(1, 8 * 1024 * 1024);
    let stream: SseStream | undefined;
    const cuts: SseCut[] = [];
    const port = await sseServer(
      t,
      detached,
      512 * 1024,
      (s) => {
        stream = s;
        s.send({ event: 'message', data: serializeBody(big.msg) });
      },
      (c) => cuts.push(c),
    );
    // A client that reads nothing: the large event stalls once the socket buffers are full.
    const socket = net.connect({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    t.after(() => socket.destroy());
    socket.on('error', () => {});
    socket.pause();
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
    while (stream === undefined) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 200));
    const small = `{"pad":"${'x'.repeat(1000)}"}`;
    let taken = 0;
    while (stream.send({ event: 'message', data: small }) && taken < 2000) taken++;
    assert.equal(stream.closed, true, 'cut at the bound');
    // The waiting events stayed within the bound (512 KiB, with the piece the connection holds, of about 1 KiB each).
    assert.ok(taken > 100 && taken <= 512, `${taken} events waited`);
    // The cut says so, once: on the stream (a session's `slow-reader`) and to the listener's hook (its warn line).
    assert.equal(stream.cut, true);
    assert.equal(cuts.length, 1);
    assert.equal(cuts[0].maxBufferBytes, 512 * 1024);
    assert.ok(cuts[0].queuedBytes > 512 * 1024, `${cuts[0].queuedBytes} bytes queued`);
    assert.equal(cuts[0].remoteAddress, '127.0.0.1');
  });
}
