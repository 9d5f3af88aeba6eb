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

/** Data at least this long (UTF-16 units) is written without building one frame string. */
const LARGE_DATA = 16 * 1024;

/**
 * Opens an SSE response on `res`: 200, `Content-Type: text/event-stream`,
 * `Cache-Control: no-cache, no-transform`, `X-Accel-Buffering: no` (2026-07-28
 * basic/transports/streamable-http SHOULD), keepalive comments every `keepaliveMs`.
 * A client whose unread bytes exceed `maxBufferBytes` is disconnected.
 * @see WHATWG HTML §9.2.6 (event stream interpretation)
 */
export function openSse(res: ServerResponse, opts: SseOptions): SseStream {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...opts.headers,
  });
  res.flushHeaders();
  let closed = false;
  const closers: Array<() => void> = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    if (timer) clearInterval(timer);
    for (const cb of closers.splice(0)) {
      try {
        cb();
      } catch {
        // a close callback must not break the others
      }
    }
  };
  res.on('close', finish);
  const write = (chunk: string): boolean => {
    if (closed || res.destroyed) return false;
    res.write(chunk);
    if (res.writableLength > opts.maxBufferBytes) {
      // A slow client is cut at the bound, never buffered without limit.
      res.destroy();
      finish();
      return false;
    }
    return true;
  };
  const timer = opts.keepaliveMs > 0 ? setInterval(() => write(': keepalive\n\n'), opts.keepaliveMs) : undefined;
  timer?.unref();
  return {
    send(ev: SseEvent): boolean {
      const head = eventHead(ev);
      if (ev.data.length < LARGE_DATA) return write(`${head}data: ${ev.data}\n\n`);
      // A large payload goes out as it is, not copied into one more string: three writes, one
      // writev (corked).
      if (closed || res.destroyed) return false;
      res.cork();
      res.write(`${head}data: `);
      res.write(ev.data);
      const ok = write('\n\n');
      res.uncork();
      return ok;
    },
    comment(text: string): void {
      write(`: ${text}\n\n`);
    },
    close(): void {
      if (closed) return;
      res.end();
      finish();
    },
    get closed() {
      return closed;
    },
    onClose(cb: () => void): void {
      if (closed) cb();
      else closers.push(cb);
    },
  };
}
