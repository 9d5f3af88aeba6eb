// A whole HTTP/1.1 answer written by hand on a socket node:http no longer serves: a parser error
// (`clientErrorHandler`) or a CONNECT (the server's 'connect' event). Every such answer closes
// the connection.

import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DEFAULT_LINGER, lingerClose, type LingerBounds } from './linger.js';

/**
 * Writes one whole HTTP/1.1 answer, `status` with `fields` (plus `Content-Length` of `body` and
 * `Connection: close`) and `body` (UTF-8), then closes the socket with a lingering close within
 * `bounds` ({@link lingerClose}): what the client sends meanwhile is read and dropped, so that
 * unread bytes do not turn the close into a reset that could cut the answer. A socket that can no
 * longer be written is destroyed at once.
 * @param status an HTTP status code (its reason phrase comes from node:http's table)
 * @param fields header fields, by name as written (no `Content-Length` or `Connection`)
 * @param bounds the lingering close's bounds (default `DEFAULT_LINGER`: 30 s, 5 s idle, 64 MiB)
 * @see RFC 9112 §4 (status line), §9.6 (tear-down)
 */
export function writeRawAnswer(
  socket: Duplex,
  status: number,
  fields: Readonly<Record<string, string>>,
  body: string,
  bounds: LingerBounds = DEFAULT_LINGER,
): void {
  if (!socket.writable || socket.destroyed) return void socket.destroy();
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
  for (const [k, v] of Object.entries({ ...fields, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' })) head += `${k}: ${v}\r\n`;
  socket.write(`${head}\r\n${body}`);
  lingerClose(socket, bounds);
}

/**
 * Calls `then` once node:http has no response left to write on `socket`: the one it is writing
 * now (`socket._httpMessage`, node:http's own field) and those of requests pipelined behind it,
 * which it gives the socket one after another as each finishes. `then` runs at once when there
 * is none, when the socket is gone, or when the response is that of a request still arriving
 * (a body that timed out: the refusal is its answer). A refusal written by hand after a parser error then
 * follows the answers to the requests read before the bad one, in order (RFC 9112 §9.3), where
 * writing it at once cut them, and wrote into the middle of one being sent (found by a trial: a
 * pipelined call ran, and its answer never came). How long this waits is the earlier requests'
 * own bound (`requestTimeoutMs`, or the client going away).
 * @see RFC 9112 §9.3 (pipelining), §9.6 (tear-down)
 */
export function afterResponses(socket: Duplex, then: () => void): void {
  const current = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A response whose request has not arrived whole (its body timed out) is not waited for: the refusal is its answer.
  if (!current || socket.destroyed || !current.req.complete) return then();
  // node:http hands the socket to the next response in its own 'finish' listener; look again after it.
  const again = () => {
    current.off('finish', again);
    current.off('close', again);
    setImmediate(() => afterResponses(socket, then));
  };
  if (current.writableFinished || current.destroyed) return void setImmediate(() => afterResponses(socket, then));
  current.once('finish', again);
  current.once('close', again);
}
