// A whole HTTP/1.1 answer written by hand on a socket node:http no longer serves: a parser error
// (`clientErrorHandler`) or a CONNECT (the server's 'connect' event). Every such answer closes
// the connection.

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** How long a socket answered by {@link writeRawAnswer} waits for the client to close its side, ms. */
export const RAW_LINGER_MS = 5_000;

/**
 * Writes one whole HTTP/1.1 answer, `status` with `fields` (plus `Content-Length` of `body` and
 * `Connection: close`) and `body` (UTF-8), then ends the socket. What the client sends meanwhile
 * is read and dropped, so that unread bytes do not turn the close into a reset that could cut the
 * answer; the socket is destroyed if the client has not closed its side within `RAW_LINGER_MS`.
 * A socket that can no longer be written is destroyed at once.
 * @param status an HTTP status code (its reason phrase comes from node:http's table)
 * @param fields header fields, by name as written (no `Content-Length` or `Connection`)
 * @see RFC 9112 §4 (status line), §9.6 (tear-down)
 */
export function writeRawAnswer(socket: Duplex, status: number, fields: Readonly<Record<string, string>>, body: string): void {
  if (!socket.writable || socket.destroyed) return void socket.destroy();
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
  for (const [k, v] of Object.entries({ ...fields, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' })) head += `${k}: ${v}\r\n`;
  socket.on('error', () => socket.destroy());
  socket.on('data', () => {});
  socket.end(`${head}\r\n${body}`);
  const linger = setTimeout(() => socket.destroy(), RAW_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}
