// The answer channel of one HTTP request: a JSON reply until something must be sent before the
// response (progress, a log message, a server request), then a request-scoped SSE stream.

import type { ReplyOptions, Sink, SseEvent, SseStream } from '../core/exchange.js';
import type { CancelSignal } from '../core/cancel.js';
import type { RpcMessage } from '../core/message.js';
import { serializeBody, type JsonBody } from '../core/json-pieces.js';
import { trackDelivery } from './end-batch.js';

/** The primitives of an exchange the sink answers through. */
export interface ReplyTarget {
  readonly signal: AbortSignal;
  /** The same cancellation without an AbortController, where the transport has one. */
  readonly cancel?: CancelSignal;
  readonly answered: boolean;
  json(status: number, body: JsonBody, headers?: Readonly<Record<string, string>>): void;
  empty(status: number, headers?: Readonly<Record<string, string>>): void;
  sse(headers?: Readonly<Record<string, string>>): SseStream;
}

/**
 * The JSON-then-SSE sink of one request. A class, not an object literal: a literal's `streaming`
 * getter is made anew on every request (about 0.8 µs in V8), the prototype's is shared.
 */
class ReplySink implements Sink {
  private stream: SseStream | undefined;

  constructor(
    private readonly ex: ReplyTarget,
    private readonly opts: ReplyOptions,
  ) {}

  get streaming(): boolean {
    return this.stream !== undefined;
  }

  private event(msg: RpcMessage): SseEvent {
    const ev: SseEvent = { event: 'message', data: serializeBody(msg) };
    if (this.opts.nextEventId) ev.id = this.opts.nextEventId();
    this.opts.onEvent?.(ev);
    return ev;
  }

  send(msg: RpcMessage): boolean {
    const { ex, opts } = this;
    if ((ex.cancel ?? ex.signal).aborted) return false;
    opts.tap?.(msg);
    this.stream ??= ex.sse(opts.headers);
    return this.stream.send(this.event(msg));
  }

  finish(msg: RpcMessage | RpcMessage[] | null, status = 200, headers?: Readonly<Record<string, string>>): void {
    const { ex, opts, stream } = this;
    const list = msg === null ? [] : Array.isArray(msg) ? msg : [msg];
    if (opts.tap) for (const m of list) opts.tap(m);
    if (stream) {
      for (const m of list) stream.send(this.event(m));
      stream.close();
      return;
    }
    if (ex.answered) return;
    if (msg === null) {
      // Nothing to say (a cancelled request): end the exchange without a body, if anyone listens.
      if (!(ex.cancel ?? ex.signal).aborted) ex.empty(202, opts.headers && headers ? { ...opts.headers, ...headers } : (headers ?? opts.headers));
      return;
    }
    ex.json(status, serializeBody(msg), opts.headers && headers ? { ...opts.headers, ...headers } : (headers ?? opts.headers));
  }
}

/**
 * Creates the JSON-then-SSE sink of one request.
 * @see 2026-07-28 basic/transports/streamable-http (JSON or SSE; SSE may first carry messages
 *   related to the request); 2025-11-25 basic/transports#sending-messages-to-the-server
 */
export function createReplySink(ex: ReplyTarget, opts: ReplyOptions = {}): Sink {
  return new ReplySink(ex, opts);
}

/** What `writePieces` writes to: a node:http response (or any Writable). */
export interface PieceTarget {
  readonly destroyed: boolean;
  write(chunk: string): boolean;
  end(): void;
  destroy(): void;
  once(event: 'drain' | 'finish' | 'close', cb: () => void): unknown;
}

/**
 * Writes a body's pieces to `res` as the socket takes them (on `write` returning false, waits for
 * `drain`), then ends it: a large message never sits whole in memory, serialized or encoded. A
 * piece that cannot be serialized (it throws) destroys the response, whose head is already sent.
 * Shutdown waits for the answer to go out (`trackDelivery`), within its bound.
 */
export function writePieces(res: PieceTarget, pieces: Iterable<string>): void {
  trackDelivery(res);
  const it = pieces[Symbol.iterator]();
  const pump = (): void => {
    try {
      for (;;) {
        if (res.destroyed) return;
        const next = it.next();
        if (next.done) {
          res.end();
          return;
        }
        if (!res.write(next.value)) {
          res.once('drain', pump);
          return;
        }
      }
    } catch {
      res.destroy();
    }
  };
  pump();
}
