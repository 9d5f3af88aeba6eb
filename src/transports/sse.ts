// SSE framing on a raw node:http response, with keepalive comments and a bound on buffered bytes.

import type { ServerResponse } from 'node:http';
import type { SseEvent, SseStream } from '../core/exchange.js';
import { trackDelivery } from './end-batch.js';

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

/**
 * How an SSE stream ends, whoever ends it: once, running each close callback once (a throwing one
 * does not stop the others). A class that streams extend, not closures: an idle HTTP+SSE session
 * holds its stream for as long as its client stays connected, and tens of thousands may be open.
 */
export class StreamEnd {
  #closed = false;
  /** The close callbacks: most streams have one, so no array until a second. */
  #closers: (() => void) | Array<() => void> | undefined = undefined;

  /** @param onEnd runs first when the stream ends (stop timers). */
  constructor(private readonly onEnd?: () => void) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Marks the stream closed and runs the callbacks; later calls do nothing. */
  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.ending();
    const closers = this.#closers;
    this.#closers = undefined;
    if (typeof closers === 'function') runCloser(closers);
    else if (closers) for (const cb of closers) runCloser(cb);
  }

  /** Runs `cb` when the stream closes, or now if it has. */
  onClose(cb: () => void): void {
    if (this.#closed) cb();
    else if (this.#closers === undefined) this.#closers = cb;
    else if (typeof this.#closers === 'function') this.#closers = [this.#closers, cb];
    else this.#closers.push(cb);
  }

  /** What runs first at the end: the constructor's `onEnd`, or a subclass's own. */
  protected ending(): void {
    this.onEnd?.();
  }
}

function runCloser(cb: () => void): void {
  try {
    cb();
  } catch {
    // a close callback must not break the others
  }
}

/** Data at least this long (UTF-16 units) is written without building one frame string. */
const LARGE_DATA = 16 * 1024;

/** The keepalive comment. */
const KEEPALIVE = ': keepalive\n\n';

/** Something a keepalive wheel pings: linked into one of its slots while it is on the wheel. */
interface Pinged {
  ping(): void;
  prevPinged: Pinged | undefined;
  nextPinged: Pinged | undefined;
  slot: number;
}

/**
 * Keepalive comments for every stream of one interval, from one timer: streams sit in
 * `slots` lists, and every `ms / slots` the next list is pinged, so each stream is pinged
 * every `ms` (its first comment `ms` after it opened, less at most one tick) without a timer
 * of its own, and the streams' comments spread over the interval instead of one burst. The
 * timer runs (unref'd) only while a stream is on the wheel.
 */
class KeepaliveWheel {
  private readonly heads: Array<Pinged | undefined>;
  private readonly tickMs: number;
  private next = 0;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly ms: number) {
    // Short intervals (tests) keep one slot: the interval itself, not rounded to ticks.
    const slots = ms >= 1_000 ? 10 : 1;
    this.heads = new Array<Pinged | undefined>(slots).fill(undefined);
    this.tickMs = Math.max(1, Math.round(ms / slots));
  }

  add(s: Pinged): void {
    // The slot pinged last in the coming round: a full interval from now, less at most one tick.
    const slot = (this.next + this.heads.length - 1) % this.heads.length;
    s.slot = slot;
    s.prevPinged = undefined;
    s.nextPinged = this.heads[slot];
    if (s.nextPinged) s.nextPinged.prevPinged = s;
    this.heads[slot] = s;
    if (this.count++ === 0) {
      this.timer = setInterval(() => this.tick(), this.tickMs);
      this.timer.unref();
    }
  }

  remove(s: Pinged): void {
    if (s.prevPinged) s.prevPinged.nextPinged = s.nextPinged;
    else if (this.heads[s.slot] === s) this.heads[s.slot] = s.nextPinged;
    else return; // not on the wheel
    if (s.nextPinged) s.nextPinged.prevPinged = s.prevPinged;
    s.prevPinged = s.nextPinged = undefined;
    if (--this.count === 0) {
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      // No stream left: the wheel goes too, so the map holds only intervals in use.
      wheels.delete(this.ms);
    }
  }

  private tick(): void {
    const slot = this.next;
    this.next = (slot + 1) % this.heads.length;
    // A ping may end its stream (cut at the bound), which takes it off the list: read `next` first.
    for (let s = this.heads[slot]; s;) {
      const n = s.nextPinged;
      s.ping();
      s = n;
    }
  }
}

/** One wheel per keepalive interval (in practice one: the listener's `keepaliveMs`). */
const wheels = new Map<number, KeepaliveWheel>();
function wheelOf(ms: number): KeepaliveWheel {
  let w = wheels.get(ms);
  if (!w) wheels.set(ms, (w = new KeepaliveWheel(ms)));
  return w;
}

/**
 * One SSE response. A class, not closures: an idle HTTP+SSE session holds one for as long as its
 * client stays connected, and tens of thousands may be open (each closure and its context is
 * some 100 bytes; the stream is now one object and one close listener).
 */
class NodeSseStream extends StreamEnd implements SseStream, Pinged {
  prevPinged: Pinged | undefined = undefined;
  nextPinged: Pinged | undefined = undefined;
  slot = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBufferBytes: number,
    private readonly wheel: KeepaliveWheel | undefined,
  ) {
    super();
  }

  protected override ending(): void {
    this.wheel?.remove(this);
  }

  /**
   * A slow client is cut at the bound, never buffered without limit. Checked before each write
   * of an event, so an event is never cut in half and one larger than the bound still reaches a
   * client that keeps up (a 9 MB answer used to end the stream of a fast reader on loopback);
   * what is queued is at most the bound plus one event.
   */
  private cutIfOver(): boolean {
    if (this.res.writableLength <= this.maxBufferBytes) return false;
    this.res.destroy();
    this.end();
    return true;
  }

  private write(chunk: string): boolean {
    if (this.closed || this.res.destroyed || this.cutIfOver()) return false;
    this.res.write(chunk);
    return true;
  }

  ping(): void {
    this.write(KEEPALIVE);
  }

  send(ev: SseEvent): boolean {
    const head = eventHead(ev);
    const data = ev.data;
    if (typeof data === 'string' && data.length < LARGE_DATA) return this.write(`${head}data: ${data}\n\n`);
    // A large payload goes out as it is (a string, or a large message's pieces), not copied
    // into one more string: corked writes, one writev. The bound is checked before the event.
    const res = this.res;
    if (this.closed || res.destroyed || this.cutIfOver()) return false;
    res.cork();
    res.write(`${head}data: `);
    if (typeof data === 'string') res.write(data);
    else for (const piece of data) res.write(piece);
    res.write('\n\n');
    res.uncork();
    return true;
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  close(): void {
    if (this.closed) return;
    this.res.end();
    // Events a slow reader has not taken yet go out before shutdown closes the connection.
    if (this.res.writableLength > 0) trackDelivery(this.res);
    this.end();
  }
}

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
  const wheel = opts.keepaliveMs > 0 ? wheelOf(opts.keepaliveMs) : undefined;
  const stream = new NodeSseStream(res, opts.maxBufferBytes, wheel);
  res.on('close', () => stream.end());
  wheel?.add(stream);
  return stream;
}
