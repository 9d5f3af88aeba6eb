// The contract between transports and dialects: an HTTP exchange in neutral terms.

import type { IncomingHttpHeaders } from 'node:http';
import type { RpcMessage } from './message.js';
import { serialize } from './message.js';
import { SwitchyardError } from './errors.js';

/** One SSE event to write (WHATWG HTML §9.2 server-sent events). */
export interface SseEvent {
  /** Event type; omitted means `message`. */
  event?: string;
  /** Event id, for Last-Event-ID resumption. */
  id?: string;
  /** Data; must contain no newline (serialize() output never does). */
  data: string;
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
  /** Called once when the stream closes for any reason. */
  onClose(cb: () => void): void;
}

/**
 * One HTTP request as a dialect sees it. The transport owns the socket; the dialect answers
 * through exactly one of `json`, `empty` or `sse`.
 */
export interface HttpExchange {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  /** Query parameters. */
  readonly query: URLSearchParams;
  /** Lower-cased header names (node:http). */
  readonly headers: IncomingHttpHeaders;
  /** The parsed body of a POST (already through parseBody); undefined otherwise. */
  readonly body: unknown;
  /** Aborted when the client's connection closes before the answer is complete. */
  readonly signal: AbortSignal;
  /** Answers with a JSON body (already serialized by `serialize`). */
  json(status: number, body: string, headers?: Record<string, string>): void;
  /** Answers with no body. */
  empty(status: number, headers?: Record<string, string>): void;
  /** Opens an SSE response (200, `text/event-stream`, no-cache, `X-Accel-Buffering: no`). */
  sse(headers?: Record<string, string>): SseStream;
  /** True once an answer has started. */
  readonly answered: boolean;
}

/** A dialect as the registry holds it. */
export interface Dialect {
  /** Folder name, e.g. `2026-07-28`. */
  readonly id: string;
  /** Revisions it serves. */
  readonly revisions: readonly string[];
  /** Handles one exchange; must answer it exactly once and never throw. */
  handle(ex: HttpExchange): Promise<void>;
  /** Ends every session and stream (shutdown). */
  close(): Promise<void>;
  /** Live sessions (0 for stateless dialects). */
  readonly sessionCount: number;
  /** True when `id` names one of this dialect's live sessions. */
  hasSession(id: string): boolean;
}

/**
 * The answer channel of one request: JSON until something must be sent before the response
 * (progress, a log message, a server request), then a request-scoped SSE stream.
 * @see 2026-07-28 basic/transports/streamable-http (JSON or SSE; SSE may first carry
 *   notifications related to the request); 2025-11-25 basic/transports#sending-messages-to-the-server
 */
export class ReplyChannel {
  private stream: SseStream | undefined;
  private readonly ex: HttpExchange;
  private readonly headers: Record<string, string> | undefined;
  private readonly nextEventId: (() => string) | undefined;
  /** Called with each event written, for resumption buffers. */
  onEvent: ((ev: SseEvent) => void) | undefined;
  /** Sees every message before it is written (strict mode). */
  tap: ((msg: RpcMessage) => void) | undefined;

  constructor(ex: HttpExchange, headers?: Record<string, string>, nextEventId?: () => string) {
    this.ex = ex;
    this.headers = headers;
    this.nextEventId = nextEventId;
  }

  /** True when the reply switched to SSE. */
  get streaming(): boolean {
    return this.stream !== undefined;
  }

  /** The SSE stream, opened on first use. */
  private open(): SseStream {
    this.stream ??= this.ex.sse(this.headers);
    return this.stream;
  }

  /** Sends a message before the response (switches to SSE). @returns false if the client is gone. */
  send(msg: RpcMessage): boolean {
    if (this.ex.signal.aborted) return false;
    this.tap?.(msg);
    const ev: SseEvent = { event: 'message', data: serialize(msg) };
    if (this.nextEventId) ev.id = this.nextEventId();
    this.onEvent?.(ev);
    return this.open().send(ev);
  }

  /** Sends the final message (JSON, or the last SSE event) and ends the exchange. */
  finish(msg: RpcMessage | RpcMessage[], status = 200): void {
    if (this.tap) for (const m of Array.isArray(msg) ? msg : [msg]) this.tap(m);
    if (this.stream) {
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        const ev: SseEvent = { event: 'message', data: serialize(m) };
        if (this.nextEventId) ev.id = this.nextEventId();
        this.onEvent?.(ev);
        this.stream.send(ev);
      }
      this.stream.close();
      return;
    }
    if (!this.ex.answered) this.ex.json(status, serialize(msg), this.headers);
  }
}

/** The logging surface the core and dialects use (pino's shape). */
export interface CoreLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What every dialect is built with. */
export interface DialectDeps {
  /** Runs requests (admission, deadlines, cancellation). */
  executor: import('./executor.js').Executor;
  /** Bounds. */
  limits: import('./limits.js').Limits;
  /** Logger (pino). */
  log: CoreLog;
  /** Path of the MCP endpoint (for documentation and endpoint events). */
  mcpPath: string;
  /** Path HTTP+SSE POSTs go to (named by the `endpoint` event). */
  legacyMessagePath: string;
  /** Revisions the gateway serves statelessly (for -32022 and `server/discover`). */
  modernRevisions: readonly string[];
  /** Strict mode: validates client messages both ways; undefined when off. */
  strict?: MessageValidator;
  /** The id of the dialect that holds session `id`, if any (set by the registry). */
  sessionOwner?: (id: string) => string | undefined;
}

/** One strict-mode finding: a message that does not match its era's JSON schema. */
export interface StrictViolation {
  /** `in`: from the client; `out`: to the client. */
  direction: 'in' | 'out';
  /** The era (revision) whose schema was used. */
  era: string;
  /** The JSON-RPC method (of the request, for responses). */
  method: string;
  /** JSON Pointer into the message. */
  path: string;
  /** What the schema says (definition: ajv message). */
  message: string;
  envelope?: boolean;
}

/** Validates messages against the official schema of an era (strict mode). */
export interface MessageValidator {
  /** `log`: report only; `reject`: also refuse invalid client messages. */
  readonly mode: 'log' | 'reject';
  /** Checks one message; logs and returns the violations ([] when valid or unknown). */
  check(direction: 'in' | 'out', era: string, msg: unknown, method?: string): StrictViolation[];
}

/**
 * The error that refuses an invalid client message in strict `reject` mode: -32600 when the
 * JSON-RPC envelope is wrong, -32602 when the params are.
 */
export function strictRejection(v: StrictViolation): import('./errors.js').SwitchyardError {
  const envelope = !v.path.startsWith('/params');
  return new SwitchyardError('SWY_ERR_REQ_SCHEMA', { detail: `${v.path}: ${v.message}`, rpcCode: envelope ? -32600 : -32602 });
}
