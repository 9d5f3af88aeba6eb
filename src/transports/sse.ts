// SSE framing on a raw node:http response, with keepalive comments and a bound on buffered bytes.

import type { ServerResponse } from 'node:http';
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { SseEvent, SseStream } from '../core/exchange.js';
import { trackDelivery } from './end-batch.js';
import { writeAsDrained } from '../io/line-writer.js';
import { pairSafeSlices } from '../core/json-pieces.js';

/** Options for an SSE stream. */
export interface SseOptions {
  /** Interval between `: keepalive` comments, ms (0 disables). */
  keepaliveMs: number;
  /** Bytes queued for a client that does not read before it is cut. */
  maxBufferBytes: number;
  /**
   * Told when a stream is cut at `maxBufferBytes` (the listener's `slow client cut` line):
   * `queuedBytes` unread when the next event came, the client's address when known. One function
   * for every stream of a listener, not one per stream.
   */
  onCut?: (cut: SseCut) => void;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /**
   * Where the listener keeps the streams it takes off node:http (see `openSse`), so that closing
   * it ends them; without it, every stream stays on its node:http response.
   */
  detached?: DetachedStreams;
}

/** A stream cut because its client fell behind (`SseOptions.onCut`). */
export interface SseCut {
  /** Bytes written and not yet taken by the client, plus those waiting behind a large event. */
  queuedBytes: number;
  /** The bound it went past, bytes. */
  maxBufferBytes: number;
  /** The client's address, when its socket still says. */
  remoteAddress: string | undefined;
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

/**
 * The SSE response headers (2026-07-28 basic/transports/streamable-http SHOULD: no caching, no
 * proxy buffering). `no-store`, not `no-cache`: Chromium writes a `no-cache` GET stream into its
 * HTTP cache, and a DELETE of the same URL sent while that entry is still being written (a page
 * that aborts its 2025 GET stream and ends the session) was restarted by the cache and sent twice,
 * so the page read the second one's 404 for a session the first had ended.
 * @see RFC 9111 §5.2.2.5 (no-store)
 */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-store, no-transform',
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

/** Large string data is written in slices of at most this many UTF-16 units. */
const SLICE_UNITS = 64 * 1024;

/**
 * The pieces of large event data: a large message's own pieces, or a long string in slices that
 * never end between a high and a low surrogate (each slice is encoded to UTF-8 on its own).
 */
function* dataPieces(data: SseEvent['data']): Generator<string, void, undefined> {
  if (typeof data !== 'string') yield* data;
  else yield* pairSafeSlices(data, SLICE_UNITS);
}

/**
 * What an event waiting behind a large one counts against the stream's bound, bytes: its data's
 * length, or for a large message the least its pieces hold (`JsonPieces.units`: its long
 * strings; its exact size is known only once written). Counting a large message as 16 KiB let a
 * client that stopped reading hold hundreds of them (some 85 MB of 1.5 MB answers against the
 * 8 MiB bound; test/regressions/sse-waiting-large-events-bound.test.ts).
 */
function waitingSize(item: SseEvent | string): number {
  if (typeof item === 'string') return item.length;
  return typeof item.data === 'string' ? item.data.length : Math.max(LARGE_DATA, item.data.units);
}

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
  /**
   * While a large event is being written (`pump`): what was sent after it, in order (events, and
   * comments as their frame text), and their size for the bound. Undefined when none is.
   */
  private waiting: Array<SseEvent | string> | undefined = undefined;
  private waitingBytes = 0;
  /** `finish` listeners of `trackDelivery`, for a stream closed while a large event was still being written. */
  private finished: Array<() => void> | undefined = undefined;
  /** True once `cutIfOver` cut the stream (SseStream.cut). */
  cut = false;

  constructor(
    private readonly res: SseOut,
    private readonly maxBufferBytes: number,
    private readonly wheel: KeepaliveWheel | undefined,
    private readonly onCut: ((cut: SseCut) => void) | undefined,
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
   * what is queued is at most the bound plus one event. Events waiting behind a large one being
   * written count too.
   */
  private cutIfOver(): boolean {
    const queuedBytes = this.res.writableLength + this.waitingBytes;
    if (queuedBytes <= this.maxBufferBytes) return false;
    const remoteAddress = this.res.socket?.remoteAddress;
    this.cut = true;
    // Said before the close callbacks run, so the cut's line comes before the session's own.
    this.onCut?.({ queuedBytes, maxBufferBytes: this.maxBufferBytes, remoteAddress });
    this.res.destroy();
    this.end();
    return true;
  }

  /** Writes one whole frame (a small event or a comment), or queues it behind a large event being written. */
  private write(frame: string): boolean {
    if (this.closed || this.res.destroyed || this.cutIfOver()) return false;
    if (this.waiting) this.wait(frame);
    else this.res.write(frame);
    return true;
  }

  private wait(item: SseEvent | string): void {
    this.waiting!.push(item);
    this.waitingBytes += waitingSize(item);
  }

  ping(): void {
    // A large event being written keeps the connection busy; a comment would only wait behind it.
    if (this.waiting) return;
    this.write(KEEPALIVE);
  }

  send(ev: SseEvent): boolean {
    const data = ev.data;
    if (typeof data === 'string' && data.length < LARGE_DATA) return this.write(`${eventHead(ev)}data: ${data}\n\n`);
    if (this.closed || this.res.destroyed || this.cutIfOver()) return false;
    if (this.waiting) this.wait(ev);
    else this.pump(ev, []);
    return true;
  }

  /**
   * Writes a large event piece by piece as the connection takes them (on `write` returning
   * false, waits for `drain`), then `after` and what was sent meanwhile, in order. Corked into
   * one writev, the pieces (strings) were all encoded into one more buffer of the whole event,
   * three bytes per UTF-16 unit reserved: a 5 MB answer cost 5 MB more RSS and 15 MB of allocation.
   */
  private pump(ev: SseEvent, after: Array<SseEvent | string>): void {
    const res = this.res;
    this.waiting = [];
    this.waitingBytes = 0;
    for (const item of after) this.wait(item);
    const ready = res.write(`${eventHead(ev)}data: `);
    writeAsDrained(res, dataPieces(ev.data), ready, () => res.destroyed, '\n\n', {
      done: () => this.afterPump(),
      // A piece that cannot be serialized (it throws): the event cannot be finished.
      failed: () => {
        res.destroy();
        this.end();
      },
    });
  }

  /** Writes what waited behind a large event, up to the next large one; ends the response if the stream was closed meanwhile. */
  private afterPump(): void {
    const queue = this.waiting!;
    this.waiting = undefined;
    this.waitingBytes = 0;
    const res = this.res;
    for (let i = 0; i < queue.length; i++) {
      const item = queue[i];
      if (typeof item === 'string') res.write(item);
      else if (typeof item.data === 'string' && item.data.length < LARGE_DATA) res.write(`${eventHead(item)}data: ${item.data}\n\n`);
      else {
        // The rest waits behind it (it may finish at once, and then writes them itself).
        this.pump(item, queue.slice(i + 1));
        return;
      }
    }
    if (this.closed) this.finish();
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  close(): void {
    if (this.closed) return;
    // A large event still being written (and what waits behind it) goes out first; the stream
    // takes nothing more from now on. Shutdown waits for it (`once`) before it cuts connections.
    if (this.waiting) trackDelivery(this);
    else this.finish();
    this.end();
  }

  /**
   * For `trackDelivery`: `finish` once the response of a stream closed while a large event was
   * being written has been ended (its own delivery is then tracked), `close` when its connection closes.
   */
  once(event: 'finish' | 'close', listener: () => void): void {
    if (event === 'close') this.res.once('close', listener);
    else (this.finished ??= []).push(listener);
  }

  /** Ends the response once nothing is left to write. */
  private finish(): void {
    this.res.end();
    // Events a slow reader has not taken yet go out before shutdown closes the connection.
    if (this.res.writableLength > 0) trackDelivery(this.res);
    const waiting = this.finished;
    this.finished = undefined;
    if (waiting) for (const cb of waiting) runCloser(cb);
  }
}

/**
 * Where an SSE stream's bytes go: its node:http response, or, once a long-lived stream has been
 * taken off node:http (`detach`), its socket with each write framed as one HTTP/1.1 chunk.
 */
interface SseOut {
  /** Bytes written and not yet handed to the OS. */
  readonly writableLength: number;
  /** The connection (for the client's address in a cut's line); null once node:http let it go. */
  readonly socket?: { readonly remoteAddress?: string } | null;
  readonly destroyed: boolean;
  /** Writes a chunk; false when the caller should wait for `drain` before the next. */
  write(chunk: string | Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  destroy(): void;
  /** Ends the body (the last chunk for a detached stream; its connection is kept for the next request). */
  end(): void;
  once(event: 'finish' | 'close' | 'drain', listener: () => void): unknown;
}

/** The last chunk of a chunked body, with no trailer fields (RFC 9112 §7.1). */
const LAST_CHUNK = '0\r\n\r\n';

/** A detached stream's body is open (`ChunkedSocket.state`); its connection may be kept after it. */
const OPEN = 0;
/** A detached stream's body is open; its request said `Connection: close`, so the connection ends with it. */
const OPEN_CLOSE = 1;
/** The gateway wrote a detached stream's last chunk and kept its connection for the next request. */
const KEPT = 2;

/** A detached socket's writer, for its listeners (shared functions, not closures). */
const kChunked = Symbol('switchyard.chunked');
// `server`: the listener that accepted the connection (net sets it), for `handBack`.
type DetachedSocket = Socket & { [kChunked]?: ChunkedSocket; server?: unknown };

/**
 * A detached stream's socket, written as a chunked body (RFC 9112 §7.1): each write is one
 * chunk, `<size in hex>CRLF<bytes>CRLF`; an empty write sends nothing (a zero-size chunk would
 * end the body).
 */
class ChunkedSocket implements SseOut {
  /** The stream written here, ended when the socket closes. */
  stream: StreamEnd | undefined = undefined;
  /**
   * `OPEN`, `OPEN_CLOSE` (the request said `Connection: close`: the connection ends with the body),
   * or `KEPT` once the gateway wrote the last chunk and kept the connection for the client's next
   * request (`endChunked`): a byte from the client is then that request, not a fault.
   */
  state: number = OPEN;
  /**
   * `finish` listeners (`trackDelivery`) of a body ended on a kept connection, run once its last
   * chunk is out; null once it is.
   */
  #flushed: Array<() => void> | null | undefined = undefined;

  constructor(
    readonly socket: DetachedSocket,
    readonly registry: DetachedStreams,
  ) {}

  get writableLength(): number {
    return this.socket.writableLength;
  }

  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  write(chunk: string | Uint8Array): boolean {
    const socket = this.socket;
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (size === 0) return socket.writableLength < socket.writableHighWaterMark;
    // A short string goes out as one string; a large one or bytes are not copied into one.
    if (typeof chunk === 'string' && chunk.length < LARGE_DATA) return socket.write(`${size.toString(16)}\r\n${chunk}\r\n`);
    socket.cork();
    socket.write(`${size.toString(16)}\r\n`);
    socket.write(chunk);
    const ready = socket.write('\r\n');
    socket.uncork();
    return ready;
  }

  cork(): void {
    this.socket.cork();
  }

  uncork(): void {
    this.socket.uncork();
  }

  destroy(): void {
    this.socket.destroy();
  }

  end(): void {
    endChunked(this.socket, true);
  }

  once(event: 'finish' | 'close' | 'drain', listener: () => void): void {
    // A body ended on a kept connection has no socket `finish`: its last chunk's write says it.
    if (event === 'finish' && this.state === KEPT) {
      if (this.#flushed === null) listener();
      else (this.#flushed ??= []).push(listener);
      return;
    }
    this.socket.once(event, listener);
  }

  /** The last chunk of a body ended on a kept connection has been handed to the OS (or failed). */
  flushed(): void {
    const waiting = this.#flushed;
    this.#flushed = null;
    if (waiting) for (const cb of waiting) runCloser(cb);
  }
}

/**
 * How long a detached stream's connection waits after its last chunk for the client's next request
 * or for it to close its side, ms (with no byte moving either way); then it is cut. node:http keeps
 * an ended response's connection as long (the listener's keepAliveTimeout).
 */
export const DETACHED_LINGER_MS = 5_000;

/**
 * Ends a detached stream's body, once. When the gateway ends it (`keep`), the connection stays
 * open as its `Connection: keep-alive` head promised: the client's next request on it is handed
 * back to node:http (`handBack`), and a connection left idle is cut after `DETACHED_LINGER_MS`,
 * as node:http cuts an idle kept-alive one. Closing it right after the last chunk made every
 * client that reuses connections (nginx's upstream keepalive, an undici pool) race the close:
 * a request sent on it got no answer, a POST a 502 from nginx. Otherwise (the client half-closed,
 * the listener closes, or this Node cannot hand a connection back) the connection ends with the
 * last chunk, and is cut if the client never closes its side.
 * @see RFC 9112 §9.3 (persistence), §9.6 (tear-down)
 */
function endChunked(socket: DetachedSocket, keep = false): void {
  if (socket.writableEnded || socket.destroyed) return;
  const chunked = socket[kChunked];
  if (chunked?.state === KEPT) {
    // Idle after its last chunk: nothing more to write.
    socket.end();
  } else if (keep && chunked?.state === OPEN && connectionListener !== undefined && socket.server) {
    chunked.state = KEPT;
    socket.write(LAST_CHUNK, () => chunked.flushed());
  } else {
    socket.end(LAST_CHUNK);
  }
  socket.setTimeout(DETACHED_LINGER_MS, onDetachedLinger);
}

function onDetachedLinger(this: Socket): void {
  this.destroy();
}

/**
 * The streams one listener has taken off node:http (`openSse`): node:http no longer tracks their
 * connections, so `closeAllConnections` would leave them open and `server.close` would wait on
 * them; the listener ends them itself (`endAll`). Holds each until its socket closes, so it is
 * bounded by the listener's open connections.
 */
export class DetachedStreams {
  readonly #sockets = new Set<Socket>();

  /** Streams open now. */
  get size(): number {
    return this.#sockets.size;
  }

  /** @internal */
  add(socket: Socket): void {
    this.#sockets.add(socket);
  }

  /** @internal */
  delete(socket: Socket): void {
    this.#sockets.delete(socket);
  }

  /**
   * Ends every stream: its last chunk if the socket takes it now, then the connection is cut,
   * as `closeAllConnections` cuts. For a listener about to close, after the answers still going
   * out have had their time (`settleAnswers`).
   */
  endAll(): void {
    for (const socket of this.#sockets) {
      endChunked(socket);
      socket.destroy();
    }
    this.#sockets.clear();
  }
}

function onDetachedClose(this: DetachedSocket): void {
  const chunked = this[kChunked];
  if (!chunked) return;
  chunked.registry.delete(this);
  chunked.stream?.end();
}

/**
 * A detached socket's errors (a reset, a write to a gone client): net has destroyed it already,
 * and its close ends the stream. node:http's own handler would pass them to the listener's
 * clientError handler, which answers an HTTP error on a socket still writable: inside a body.
 */
function onDetachedError(): void {}

/**
 * A client sends nothing after the GET of an open stream: bytes there are a fault, and cut it.
 * After the last chunk of a body the gateway ended, they are the client's next request.
 */
function onDetachedData(this: DetachedSocket, chunk: Buffer): void {
  const chunked = this[kChunked];
  if (chunked?.state === KEPT && !this.writableEnded && connectionListener !== undefined) handBack(this, chunked, chunk);
  else this.destroy();
}

/** A client that half-closed its side: the body ends, as node:http ends it (RFC 9112 §9.6). */
function onDetachedEnd(this: DetachedSocket): void {
  endChunked(this);
}

/**
 * Gives a kept connection back to node:http with the first bytes of the client's next request:
 * node:http sets it up as it sets up a new connection (a parser from its pool, its listeners,
 * its connection tracking, so that `closeAllConnections` and its timeouts cover it again), and
 * parses those bytes first. The listener's own connection listeners (the connection guard) do not
 * run again: it is the same connection.
 */
function handBack(socket: DetachedSocket, chunked: ChunkedSocket, chunk: Buffer): void {
  chunked.registry.delete(socket);
  socket[kChunked] = undefined;
  socket.setTimeout(0, onDetachedLinger);
  socket.removeListener('data', onDetachedData);
  socket.removeListener('end', onDetachedEnd);
  socket.removeListener('error', onDetachedError);
  socket.removeListener('close', onDetachedClose);
  socket.pause();
  socket.unshift(chunk);
  connectionListener!.call(socket.server, socket);
  socket.resume();
}

/** node:http's own release of a connection's parser, the one its upgrade path uses; undefined if this Node lacks it. */
const freeParser = ((): ((parser: unknown, req: unknown, socket: unknown) => void) | undefined => {
  try {
    const f: unknown = (createRequire(import.meta.url)('_http_common') as { freeParser?: unknown }).freeParser;
    return typeof f === 'function' ? (f as (parser: unknown, req: unknown, socket: unknown) => void) : undefined;
  } catch {
    return undefined;
  }
})();

/** True when a Connection header value names the `close` option (RFC 9110 §7.6.1: a comma-separated list, case-insensitive). */
function closeRequested(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  for (const v of Array.isArray(value) ? value : [value]) for (const o of v.split(',')) if (o.trim().toLowerCase() === 'close') return true;
  return false;
}

/** node:http's setup of a new connection (`_http_server._connectionListener`), to hand a kept connection back; undefined if this Node lacks it. */
const connectionListener = ((): ((this: unknown, socket: Socket) => void) | undefined => {
  try {
    const f: unknown = (createRequire(import.meta.url)('_http_server') as { _connectionListener?: unknown })._connectionListener;
    return typeof f === 'function' ? (f as (this: unknown, socket: Socket) => void) : undefined;
  } catch {
    return undefined;
  }
})();

/** The node:http state of a response's socket that `detach` reads. */
type HttpSocket = Socket & { parser?: unknown; _httpMessage?: unknown };

/**
 * True when `res` answers an HTTP/1.1 GET that node:http has read whole, on a real socket it is
 * the current response of: its stream can be taken off node:http once the head is out.
 */
function detachable(res: ServerResponse): boolean {
  const req = res.req;
  const socket: HttpSocket | null = res.socket;
  return (
    freeParser !== undefined &&
    req.method === 'GET' &&
    req.httpVersion === '1.1' &&
    req.complete &&
    socket !== null &&
    socket.parser != null &&
    socket._httpMessage === res &&
    typeof res.detachSocket === 'function'
  );
}

/** The events whose listeners on a connection are node:http's: they feed its parser and track its responses. */
const HTTP_EVENTS = new Set<string | symbol>(['data', 'end', 'error', 'drain', 'timeout', 'resume', 'pause']);

/**
 * Takes a long-lived SSE response off node:http once its head has gone out, as node:http does
 * for an upgraded connection: its parser is released (back to node:http's pool) and the request
 * and response objects are dropped, and the events are written to the socket as chunks. An idle
 * HTTP+SSE session then holds a socket and its own state, not a parser, an IncomingMessage and a
 * ServerResponse (some 4 KiB, measured in bench/). Returns undefined (and changes nothing) when
 * the head is not all on the socket or the body is not chunked; the stream then stays on `res`.
 * When the gateway ends the stream, the last chunk goes out and the connection is kept for the
 * client's next request, which goes back to node:http (`endChunked`, `handBack`).
 * @see RFC 9112 §7.1 (chunked transfer coding), §9.6 (tear-down)
 */
function detach(res: ServerResponse, registry: DetachedStreams): ChunkedSocket | undefined {
  const socket = res.socket as DetachedSocket & HttpSocket;
  if (!res.chunkedEncoding || res.writableLength !== socket.writableLength) return undefined;
  res.detachSocket(socket);
  freeParser!(socket.parser, res.req, socket);
  // node:http's listeners go (they would feed a released parser); everyone else's stay. The
  // listener table is built afresh rather than deleted from, which would leave it a dictionary.
  const keep: Array<[string | symbol, (...args: unknown[]) => void]> = [];
  for (const ev of socket.eventNames()) {
    if (HTTP_EVENTS.has(ev)) continue;
    for (const fn of socket.rawListeners(ev) as Array<(...args: unknown[]) => void>)
      if (!(ev === 'close' && fn.name === 'bound socketOnClose')) keep.push([ev, fn]);
  }
  socket.removeAllListeners();
  const emitter = socket as EventEmitter;
  for (const [ev, fn] of keep) emitter.on(ev, fn);
  socket.on('data', onDetachedData);
  socket.on('end', onDetachedEnd);
  socket.on('error', onDetachedError);
  socket.on('close', onDetachedClose);
  socket.resume();
  const chunked = (socket[kChunked] = new ChunkedSocket(socket, registry));
  // RFC 9112 §9.6: a request with `close` gets no further answer on its connection.
  if (closeRequested(res.req.headers.connection)) chunked.state = OPEN_CLOSE;
  registry.add(socket);
  return chunked;
}

/**
 * Opens an SSE response on `res`: 200, `Content-Type: text/event-stream`,
 * `Cache-Control: no-store, no-transform`, `X-Accel-Buffering: no` (2026-07-28
 * basic/transports/streamable-http SHOULD), keepalive comments every `keepaliveMs`.
 * A client that left more than `maxBufferBytes` unread when the next event is written is
 * disconnected (an event is never cut in half; one larger than the bound still goes out),
 * `opts.onCut` told, and the stream's `cut` set.
 * With `opts.detached` (a long-lived GET stream: an HTTP+SSE session's, a 2025 session's GET
 * stream or its resumption), the stream is taken off node:http once its head is out (`detach`);
 * when the gateway ends it, its connection is kept for the client's next request, which node:http
 * serves again (`endChunked`, `handBack`).
 * @see WHATWG HTML §9.2.6 (event stream interpretation)
 */
export function openSse(res: ServerResponse, opts: SseOptions): SseStream {
  // Keep-alive even for a stream that will be detached (and its connection closed at its end, which
  // RFC 9112 §9.6 allows after any response): undici answers `Connection: close` on a stream its
  // caller then aborts by opening a spare connection it never sends on, which holds a host's
  // server.close until node:http's headersTimeout (the fastify example waited 70 s).
  // HTTP/2 has no connection-specific fields (RFC 9113 §8.2.2): Node would drop it with a warning.
  res.writeHead(200, res.req.httpVersionMajor === 2 ? { ...SSE_HEADERS, ...opts.headers } : { ...SSE_HEADERS, connection: 'keep-alive', ...opts.headers });
  res.flushHeaders();
  const wheel = opts.keepaliveMs > 0 ? wheelOf(opts.keepaliveMs) : undefined;
  const chunked = opts.detached && detachable(res) ? detach(res, opts.detached) : undefined;
  const stream = new NodeSseStream(chunked ?? res, opts.maxBufferBytes, wheel, opts.onCut);
  if (chunked) chunked.stream = stream;
  else res.on('close', () => stream.end());
  wheel?.add(stream);
  return stream;
}
