// The contract between transports and era modules, in neutral terms: header bags, answer sinks,
// SSE streams, and an HTTP exchange as a dialect sees it (no types of Node's HTTP module).

import type { JsonBody } from './json-pieces.js';
import type { CancelSignal } from './cancel.js';
import type { Identity } from './identity.js';
import type { StreamCredential } from './open-streams.js';
import type { RpcMessage } from './message.js';

/**
 * Request headers by lower-case name. `get` returns the field value, several field lines of the
 * same name combined with `", "` (RFC 9110 §5.3); `count` says how many field lines there were.
 */
export interface HeaderBag {
  get(name: string): string | undefined;
  /** Number of field lines named `name` (0 when absent). */
  count(name: string): number;
}

/**
 * A header bag over a plain record. A class: an object literal with two methods closing over the
 * record was an object, two closures and their context on every HTTP request.
 */
class RecordHeaderBag implements HeaderBag {
  constructor(private readonly h: Readonly<Record<string, string | string[] | undefined>>) {}

  get(name: string): string | undefined {
    const v = this.h[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }

  count(name: string): number {
    const v = this.h[name];
    return v === undefined ? 0 : Array.isArray(v) ? v.length : 1;
  }
}

/** A header bag over a plain record (the shape of Node's `IncomingHttpHeaders`, or a test literal). */
export function headerBag(h: Readonly<Record<string, string | string[] | undefined>>): HeaderBag {
  return new RecordHeaderBag(h);
}

/** An empty header bag (stdio: no headers). */
export const NO_HEADERS: HeaderBag = { get: () => undefined, count: () => 0 };

/**
 * Where the messages of one client request go: `send` carries messages before the response
 * (progress, log messages, server-to-client requests), `finish` the response itself (or nothing,
 * for a cancelled request or a notification). Over HTTP a sink starts as a JSON reply and switches
 * to a request-scoped SSE stream on the first `send`; over stdio both write lines.
 */
export interface Sink {
  /** @returns false when nothing can carry the message any more (client gone, stream closed). */
  send(msg: RpcMessage): boolean;
  /**
   * Ends the request with its response(s), or with nothing (`null`). `status` and `headers` matter
   * only where the answer is still an HTTP response head (a JSON reply); in-band answers ignore them.
   */
  finish(msg: RpcMessage | RpcMessage[] | null, status?: number, headers?: Readonly<Record<string, string>>): void;
  /** True once the answer switched to a stream (its HTTP status is already sent). */
  readonly streaming: boolean;
}

/** One SSE event to write (WHATWG HTML §9.2 server-sent events). */
export interface SseEvent {
  /** Event type; omitted means `message`. */
  event?: string;
  /** Event id, for Last-Event-ID resumption. */
  id?: string;
  /**
   * Data; must contain no newline (serialize() output never does): one string, or the pieces of
   * a large message (`serializeBody`), written one after another within the event.
   */
  data: JsonBody;
  /** Reconnection delay to announce, ms. */
  retryMs?: number;
}

/**
 * An open SSE response. Writes are bounded: a client that does not read is cut once
 * `maxStreamBufferBytes` are queued (never buffered without limit).
 */
export interface SseStream {
  /** Writes one event; returns false when the stream is closed (the event is dropped). */
  send(ev: SseEvent): boolean;
  /** Writes a `:` comment line (keepalive). */
  comment(text: string): void;
  /** Ends the response. */
  close(): void;
  /** True once closed by either side. */
  readonly closed: boolean;
  /**
   * True once the gateway cut the stream because its client left more than the stream's buffer
   * bound unread (`limits.maxStreamBufferBytes`); false or absent for any other close.
   */
  readonly cut?: boolean;
  /** Called once when the stream closes for any reason. */
  onClose(cb: () => void): void;
}

/** Options of an exchange's JSON-then-SSE sink. */
export interface ReplyOptions {
  /** Headers for the reply's head (JSON or SSE), e.g. `Mcp-Session-Id`. */
  headers?: Readonly<Record<string, string>>;
  /** Gives each SSE event an id (resumable streams). */
  nextEventId?: () => string;
  /** Called with each SSE event written, for resumption buffers. */
  onEvent?: (ev: SseEvent) => void;
  /** Sees every message before it is written (strict mode). */
  tap?: (msg: RpcMessage) => void;
}

/**
 * One HTTP request as a dialect sees it. The transport owns the socket; the dialect answers
 * through exactly one of `json`, `empty`, `sse` or a `reply()` sink.
 */
export interface HttpExchange {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  /** Query parameters. */
  readonly query: URLSearchParams;
  /** Request headers. */
  readonly headers: HeaderBag;
  /** The parsed body of a POST (already through parseBody); undefined otherwise. */
  readonly body: unknown;
  /** Aborted when the client's connection closes before the answer is complete. */
  readonly signal: AbortSignal;
  /**
   * The same cancellation as `signal`, for the executor: reading it makes no AbortController
   * (`Cancellation`). Absent where the transport has only a real signal.
   */
  readonly cancel?: CancelSignal;
  /** The verified caller (authentication before MCP, or the embedding host); null when none. */
  readonly identity: Identity | null;
  /**
   * The credential the request was admitted with, for a long-lived stream it opens to be checked
   * again at its token's expiry and when a reload changes `auth` (`Executor.streams`): undefined
   * where no front door admitted it (a host's own identity). Read only by the dialects that
   * register a stream.
   */
  readonly credential?: StreamCredential;
  /**
   * The client this request's long-lived places (sessions, listen streams) are counted against
   * under `maxSessionsPerClient` and `maxSubscriptionsPerClient`: `clientKey(identity, address)`,
   * the verified principal, else the remote address as the front door sees it (behind trusted
   * proxies, `trustProxy`, the first untrusted `X-Forwarded-For` hop). Undefined: counted against
   * no one (the fetch handler without an identity knows no address).
   */
  readonly client?: string;
  /**
   * The URL a client must use to reach `path` on this server, as the client sees it (behind a
   * trusted proxy: its scheme, host and prefix). `relative` yields a reference that resolves
   * against the request's own URL instead (for the 2024-11-05 `endpoint` event).
   */
  publicUrl(path: string, relative?: boolean): string;
  /**
   * Answers with a JSON body, already serialized: one string (`serialize`), or pieces
   * (`serializeBody`, a message holding a long string), written as they come, with backpressure.
   */
  json(status: number, body: JsonBody, headers?: Readonly<Record<string, string>>): void;
  /** Answers with no body. */
  empty(status: number, headers?: Readonly<Record<string, string>>): void;
  /**
   * Opens an SSE response (200, `text/event-stream`, no-store, `X-Accel-Buffering: no`).
   * `detach`: a long-lived stream (an HTTP+SSE session's, a 2025 session's GET stream), which
   * the transport may take off its HTTP server once the head is out (src/transports/sse.ts);
   * when it ends, its connection is kept for the client's next request.
   */
  sse(headers?: Readonly<Record<string, string>>, opts?: { detach?: boolean }): SseStream;
  /** The JSON-then-SSE answer channel of this request. */
  reply(opts?: ReplyOptions): Sink;
  /** True once an answer has started. */
  readonly answered: boolean;
}

/** The logging surface the core and era modules use (pino's shape). */
export interface CoreLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * A client on a message channel (stdio), as the channel's framing sees it: parsed messages in;
 * messages out through the `write` the peer was built with (dialects/peer.ts builds one).
 */
export interface MessagePeer {
  /** One parsed message (or a JSON array: a batch) from the client. Never throws. */
  receive(value: unknown, batch: boolean): void;
  /**
   * The input ended: pending server-to-client requests fail (the client cannot answer any more),
   * admitted requests finish, listens end with their final result, the session closes. Resolves
   * when all of that is done. `reason`, on the `session closed` line: `eof` (the client ended its
   * input, the default) or `shutdown` (the gateway is stopping).
   */
  end(reason?: 'eof' | 'shutdown'): Promise<void>;
  /**
   * The channel died (client gone or stalled): everything is cancelled; resolves when work
   * settled. The `session closed` line says `reason`: `stream-closed` (the client's end closed,
   * the default) or `slow-reader` (the gateway cut a client that stopped reading its output).
   */
  kill(reason?: 'stream-closed' | 'slow-reader'): Promise<void>;
}
