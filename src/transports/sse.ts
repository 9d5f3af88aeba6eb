// SSE framing on a raw node:http response, with keepalive comments and a bound on buffered bytes.

import type { ServerResponse } from 'node:http';
import type { SseEvent, SseStream } from '../core/exchange.js';

/** Options for an SSE stream. */
export interface SseOptions {
  /** Interval between `: keepalive` comments, ms (0 disables). */
  keepaliveMs: number;
  /** Bytes queued for a client that does not read before it is cut. */
  maxBufferBytes: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/**
 * The field lines of an event before its `data:` line (`event:`, `id:`, `retry:`), each ending
 * in a newline; '' when it has none.
 * @see WHATWG HTML §9.2.5 (event stream format)
 */
export function eventHead(ev: SseEvent): string {
  let head = '';
  if (ev.event !== undefined) head += `event: ${ev.event}\n`;
  if (ev.id !== undefined) head += `id: ${ev.id}\n`;
  if (ev.retryMs !== undefined) head += `retry: ${ev.retryMs}\n`;
  return head;
}

/** The SSE response headers (2026-07-28 basic/transports/streamable-http SHOULD: no caching, no proxy buffering). */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
});

/** How an SSE stream ends, whoever ends it: once, running each close callback once. */
export interface StreamEnd {
  readonly closed: boolean;
  /** Marks the stream closed and runs the callbacks (a throwing one does not stop the others); later calls do nothing. */
  end(): void;
  /** Runs `cb` when the stream closes, or now if it has. */
  onClose(cb: () => void): void;
}

/** The close bookkeeping of one SSE stream; `onEnd` runs first (stop timers). */
export function streamEnd(onEnd: () => void): StreamEnd {
  let closed = false;
  const closers: Array<() => void> = [];
  return {
    get closed() {
      return closed;
    },
    end() {
      if (closed) return;
      closed = true;
      onEnd();
      for (const cb of closers.splice(0)) {
        try {
          cb();
        } catch {
          // a close callback must not break the others
        }
      }
    },
    onClose(cb) {
      if (closed) cb();
      else closers.push(cb);
    },
  };
}

/** Data at least this long (UTF-16 units) is written without building one frame string. */
const LARGE_DATA = 16 * 1024;

/**
 * Opens an SSE response on `res`: 200, `Content-Type: text/event-stream`,
 * `Cache-Control: no-cache, no-transform`, `X-Accel-Buffering: no` (2026-07-28
 * basic/transports/streamable-http SHOULD), keepalive comments every `keepaliveMs`.
 * A client that left more than `maxBufferBytes` unread when the next event is written is
 * disconnected (an event is never cut in half; one larger than the bound still goes out).
 * @see WHATWG HTML §9.2.6 (event stream interpretation)
 */
export function openSse(res: ServerResponse, opts: SseOptions): SseStream {
  res.writeHead(200, { ...SSE_HEADERS, connection: 'keep-alive', ...opts.headers });
  res.flushHeaders();
  const ended = streamEnd(() => {
    if (timer) clearInterval(timer);
  });
  const finish = () => ended.end();
  res.on('close', finish);
  /**
   * A slow client is cut at the bound, never buffered without limit. Checked before each write
   * of an event, so an event is never cut in half and one larger than the bound still reaches a
   * client that keeps up (a 9 MB answer used to end the stream of a fast reader on loopback);
   * what is queued is at most the bound plus one event.
   */
  const cutIfOver = (): boolean => {
    if (res.writableLength <= opts.maxBufferBytes) return false;
    res.destroy();
    finish();
    return true;
  };
  const write = (chunk: string): boolean => {
    if (ended.closed || res.destroyed || cutIfOver()) return false;
    res.write(chunk);
    return true;
  };
  const timer = opts.keepaliveMs > 0 ? setInterval(() => write(': keepalive\n\n'), opts.keepaliveMs) : undefined;
  timer?.unref();
  return {
    send(ev: SseEvent): boolean {
      const head = eventHead(ev);
      const data = ev.data;
      if (typeof data === 'string' && data.length < LARGE_DATA) return write(`${head}data: ${data}\n\n`);
      // A large payload goes out as it is (a string, or a large message's pieces), not copied
      // into one more string: corked writes, one writev. The bound is checked before the event.
      if (ended.closed || res.destroyed || cutIfOver()) return false;
      res.cork();
      res.write(`${head}data: `);
      if (typeof data === 'string') res.write(data);
      else for (const piece of data) res.write(piece);
      res.write('\n\n');
      res.uncork();
      return true;
    },
    comment(text: string): void {
      write(`: ${text}\n\n`);
    },
    close(): void {
      if (ended.closed) return;
      res.end();
      finish();
    },
    get closed() {
      return ended.closed;
    },
    onClose: (cb: () => void) => ended.onClose(cb),
  };
}
