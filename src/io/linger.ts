// Lingering close: a socket answered before the client finished sending is half-closed and
// drained for a bounded time and byte count, so that the unread bytes do not turn the close into
// a TCP reset that discards the answer before the client reads it.

import type { Duplex } from 'node:stream';
import { DEFAULT_LIMITS } from '../core/limits.js';

/**
 * How long and how much a lingering close reads and drops before it destroys the socket
 * (nginx's `lingering_time` and `lingering_timeout`, plus a byte bound nginx does not have).
 */
export interface LingerBounds {
  /** The whole drain, from the half-close, ms (nginx `lingering_time`, 30 s there). */
  lingerTimeMs: number;
  /** The longest wait for the client's next bytes, ms (nginx `lingering_timeout`, 5 s there). */
  lingerIdleMs: number;
  /** Bytes read and dropped at most; one more and the socket is destroyed. */
  lingerMaxBytes: number;
}

/** The default bounds (`lingerTimeMs`, `lingerIdleMs`, `lingerMaxBytes` of `DEFAULT_LIMITS`). */
export const DEFAULT_LINGER: Readonly<LingerBounds> = Object.freeze({
  lingerTimeMs: DEFAULT_LIMITS.lingerTimeMs,
  lingerIdleMs: DEFAULT_LIMITS.lingerIdleMs,
  lingerMaxBytes: DEFAULT_LIMITS.lingerMaxBytes,
});

/**
 * Half-closes `socket` (ends it: its queued bytes, then FIN) and reads and drops what the client
 * still sends, then destroys it: when the client closes its side, when it has sent nothing for
 * `lingerIdleMs`, when `lingerTimeMs` has passed since the half-close, or when it has sent more
 * than `lingerMaxBytes`. A socket that can no longer be read is ended and left to close.
 *
 * Why: closing a TCP socket whose receive buffer holds unread bytes makes the kernel send a reset
 * (RST) instead of FIN, and a client still uploading the body that was refused (413, 501) then
 * loses the answer it had not yet read, seeing only a broken pipe. Draining until the client
 * closes (it does once it reads the answer, which says `Connection: close`) lets the answer through;
 * the bounds keep a client that never stops from holding the socket, which stays counted against
 * the connection bounds meanwhile. A client that sends past a bound may still get the reset.
 *
 * On a socket node:http still serves, whatever reads it (the HTTP parser's `data` listener) is
 * removed first: the parser must not read the rest of the refused body, nor a request after it.
 * @see RFC 9112 §9.6 (tear-down: a server closes in stages, half-closing first, to avoid the reset)
 */
export function lingerClose(socket: Duplex, bounds: LingerBounds): void {
  if (socket.destroyed) return;
  socket.on('error', () => socket.destroy());
  if (!socket.readable) {
    socket.end();
    return;
  }
  let bytes = 0;
  let idle: NodeJS.Timeout | undefined;
  const total = setTimeout(() => socket.destroy(), bounds.lingerTimeMs);
  total.unref();
  const stop = () => {
    clearTimeout(total);
    clearTimeout(idle);
  };
  const wait = () => {
    clearTimeout(idle);
    idle = setTimeout(() => socket.destroy(), bounds.lingerIdleMs);
    idle.unref();
  };
  socket.removeAllListeners('data');
  // node:http's listener wrapper takes the socket back from its parser (which reads the handle
  // itself) when a 'data' listener is added, so the bytes come here and nowhere else.
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > bounds.lingerMaxBytes) {
      stop();
      socket.destroy();
      return;
    }
    wait();
  });
  // The client has closed its side: nothing more can arrive, so closing sends no reset once the
  // answer is out (destroy would drop what is still queued; the timers still bound that wait).
  socket.once('end', () => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  });
  socket.once('close', stop);
  wait();
  socket.end();
  socket.resume();
  // While node:http's parser read the handle, the stream's own read stayed pending, so resume()
  // alone reads nothing: the handle is started the way node:http restarts it (onSocketResume).
  const handle = (socket as Duplex & { _handle?: { reading?: boolean; readStart?: () => number } | null })._handle;
  if (handle && handle.reading === false && typeof handle.readStart === 'function') {
    handle.reading = true;
    handle.readStart();
  }
}
