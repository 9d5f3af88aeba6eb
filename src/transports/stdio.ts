// The stdio front door: serves the core to one local client over newline-delimited JSON-RPC on
// stdin/stdout, in either era (initialize sessions and 2026-07-28 stateless requests).

import { honouredFilter } from '../core/upstream.js';
import type { Readable, Writable } from 'node:stream';
import type { CoreLog } from '../core/dialect.js';
import { SwitchyardError, toRpcError } from '../core/errors.js';
import type { Executor } from '../core/executor.js';
import type { Limits } from '../core/limits.js';
import {
  classify,
  decodeUtf8,
  errorResponse,
  idKey,
  idOf,
  parseBody,
  resultResponse,
  serialize,
  type JsonObject,
  type RequestId,
  type RpcMessage,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from '../core/message.js';
import { hasModernMeta, MODERN_META, MODERN_METHODS, shapeModernResult, validateModernMeta } from '../core/modern-meta.js';
import { levelAdmits, type SubscriptionFilter } from '../core/request.js';
import { ClientSession, sessionLimits, type Outbound } from '../core/sessions.js';
import { INITIALIZE_REVISIONS } from '../core/versions.js';
import { Lines } from '../log/lines.js';

/** Default longest line accepted, bytes (without its `\n`). */
export const DEFAULT_MAX_LINE_BYTES = 2_000_000;
/** Default time one write to stdout may stay blocked before the transport ends, ms. */
export const DEFAULT_WRITE_TIMEOUT_MS = 5_000;

/** One event of the line splitter: a complete line (without `\n`), or a line that broke the bound. */
export type LineEvent = { kind: 'line'; bytes: Buffer } | { kind: 'too-long' };

/**
 * Splits a byte stream into `\n`-terminated lines, holding at most `maxLineBytes` bytes of one
 * line. A line that grows past the bound yields one `too-long` event as soon as it does (before
 * its end arrives), and the rest of it, up to and including its `\n`, is discarded. A final line
 * without `\n` is yielded by `end()`. The `\n` is not part of a line; a `\r` before it is (JSON
 * treats it as whitespace).
 * @see 2025-11-25 basic/transports#stdio (messages are delimited by newlines, contain none)
 */
export class LineSplitter {
  private readonly max: number;
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  /** @param maxLineBytes longest line kept, bytes. */
  constructor(maxLineBytes: number) {
    this.max = maxLineBytes;
  }

  /** Feeds one chunk; returns the events it completes, in order. */
  push(chunk: Buffer): LineEvent[] {
    const out: LineEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.discarding) {
        if (this.size + (end - start) > this.max) {
          out.push({ kind: 'too-long' });
          this.parts = [];
          this.size = 0;
          this.discarding = true;
        } else if (end > start) {
          this.parts.push(chunk.subarray(start, end));
          this.size += end - start;
        }
      }
      if (nl === -1) break;
      if (this.discarding) this.discarding = false;
      else out.push({ kind: 'line', bytes: this.take() });
      start = nl + 1;
    }
    return out;
  }

  /** Ends the stream: yields a last line that had no `\n`, if any. */
  end(): LineEvent[] {
    const had = this.size > 0 && !this.discarding;
    const bytes = this.take();
    this.discarding = false;
    return had ? [{ kind: 'line', bytes }] : [];
  }

  private take(): Buffer {
    const b = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    return b;
  }
}

const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * Escapes every non-ASCII UTF-16 unit of a serialized message as `\uXXXX`, so that the output is
 * pure ASCII whatever encoding the client's reader assumes. Safe on JSON text: non-ASCII occurs
 * only inside strings, where the escape means the same character (RFC 8259 §7).
 */
export function escapeNonAscii(json: string): string {
  NON_ASCII.lastIndex = 0;
  if (!NON_ASCII.test(json)) return json;
  return json.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Options of the stdio front door. */
export interface ServeStdioOptions {
  /** Runs requests (admission, deadlines, cancellation). */
  executor: Executor;
  /** Bounds; this transport uses the parse bounds, `maxBatchMessages`, `maxStreamBufferBytes` and the session bounds. */
  limits: Limits;
  /** Logger; never stdout. */
  log: CoreLog;
  /** The client's messages (process.stdin). */
  input: Readable;
  /** Where messages to the client go (process.stdout); nothing else is written to it. */
  output: Writable;
  /** Longest line accepted, bytes, without its `\n` (default 2,000,000); longer: -32600 with id null. */
  maxLineBytes?: number;
  /** Time a blocked write may wait for the client to read, ms (default 5,000); longer: the transport ends. */
  writeTimeoutMs?: number;
  /** Revisions served statelessly (for -32022 `data.supported`). */
  modernRevisions: string[];
}

/** A running stdio front door. */
export interface StdioTransport {
  /**
   * Resolves once the input ended (EOF) or `close()` was called, every admitted request was
   * answered, open listens got their final result, and the output drained; also when the
   * output failed (the client is gone). Rejects with SwitchyardError SWY_ERR_STDIO_WRITE_STALLED
   * when the client stopped reading (its requests are then cancelled).
   */
  done: Promise<void>;
  /** Stops reading input, then finishes like EOF; resolves when `done` settles. */
  close(): Promise<void>;
}

interface Entry {
  /** Set once the client cancelled it or the transport died: nothing more is written for it. */
  cancelled: boolean;
  /** Aborts a stateless request. */
  ac: AbortController | undefined;
  /** Ends a listen: graceful sends its final result. */
  endListen: ((graceful: boolean) => void) | undefined;
  /** True for requests of the initialize session (cancelled through it). */
  legacy: boolean;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Serves the core to one client over stdio: one JSON-RPC message per line in, one per line out.
 * A message with `_meta["io.modelcontextprotocol/protocolVersion"]` is served statelessly
 * (2026-07-28: `_meta` checks, -32022, `subscriptions/listen`, `input_required` passed
 * through); `initialize` opens one initialize-era session (ping, `logging/setLevel`,
 * server-to-client requests, list-changed notifications, batches when it negotiated 2025-03-26).
 *
 * Bounds: a line over `maxLineBytes` is refused (-32600, id null) before decoding and the rest
 * of it discarded; a write blocked past `writeTimeoutMs`, or more than
 * `limits.maxStreamBufferBytes` queued behind a blocked write, ends the transport. Requests are
 * bounded by the executor (admission, deadline) and the session (in flight, pending server
 * requests). A leading UTF-8 BOM on a line is ignored; blank lines are skipped; output is ASCII.
 * @see 2025-11-25 basic/transports#stdio; 2026-07-28 basic/patterns/cancellation (stdio:
 *   `notifications/cancelled`), basic/patterns/subscriptions; RFC 8259 §8.1 (BOM)
 */
export function serveStdio(opts: ServeStdioOptions): StdioTransport {
  const { executor, limits, log, input, output } = opts;
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const writeTimeoutMs = opts.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  const splitter = new LineSplitter(maxLineBytes);
  const inflight = new Map<string, Entry>();
  const work = new Set<Promise<void>>();
  /** Server-to-client requests awaiting the client's answer, by key. */
  const asks = new Map<string, RequestId>();
  let session: ClientSession | undefined;
  let reading = true;
  let dead = false;
  let stallTimer: NodeJS.Timeout | undefined;
  let ending: Promise<void> | undefined;
  let settle!: { resolve: () => void; reject: (e: unknown) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  let settled = false;

  // --- output: one write per message, so messages never interleave ---

  let unflushed = 0;
  let onFlushed: Array<() => void> = [];
  const afterWrite = () => {
    if (--unflushed > 0) return;
    const waiting = onFlushed;
    onFlushed = [];
    for (const f of waiting) f();
  };

  const onDrain = () => {
    clearTimeout(stallTimer);
    stallTimer = undefined;
  };

  const write = (msg: RpcMessage | RpcResponse[]): boolean => {
    if (dead) return false;
    // A client that does not read may not make us queue without bound.
    if (output.writableLength > limits.maxStreamBufferBytes) {
      stall(`more than ${limits.maxStreamBufferBytes} bytes queued`);
      return false;
    }
    unflushed++;
    const ok = output.write(escapeNonAscii(serialize(msg)) + '\n', afterWrite); // stdout-ok
    if (!ok && !stallTimer) {
      stallTimer = setTimeout(() => stall(`a write stayed blocked for ${writeTimeoutMs} ms`), writeTimeoutMs);
      stallTimer.unref();
      output.once('drain', onDrain);
    }
    return true;
  };

  /** Resolves once every message written so far left the process (or the output failed). */
  const flushed = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (dead || unflushed === 0) resolve();
      else onFlushed.push(resolve);
    });

  // --- ending ---

  const stopReading = () => {
    if (!reading) return;
    reading = false;
    input.off('data', onData);
    input.off('end', onEnd);
    input.off('error', onInputError);
    input.pause();
  };

  const finish = (err?: unknown) => {
    if (settled) return;
    settled = true;
    clearTimeout(stallTimer);
    output.off('error', onOutputError);
    output.off('drain', onDrain);
    if (err) settle.reject(err);
    else settle.resolve();
  };

  /** The client can no longer answer: fail its pending server requests with an error response. */
  const failAsks = () => {
    if (!session) return;
    const why = new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: 'the client closed its input' }).toRpcError();
    for (const id of [...asks.values()]) void session.handle(errorResponse(id, why), 'response', NO_OUT);
    asks.clear();
  };

  const settleWork = async () => {
    while (work.size > 0) await Promise.allSettled([...work]);
  };

  /** EOF or close(): finish admitted requests, end listens, close the session, drain. */
  const drain = (): Promise<void> => {
    ending ??= (async () => {
      stopReading();
      failAsks();
      await settleWork();
      for (const e of [...inflight.values()]) e.endListen?.(true);
      if (session) {
        session.close();
        log.info({ sessionId: session.id, dialect: 'stdio' }, Lines.sessionClose);
      }
      await flushed();
      finish();
    })();
    return ending;
  };

  /** The client stopped reading: cancel everything and end now. */
  const stall = (detail: string) => {
    if (dead) return;
    const err = new SwitchyardError('SWY_ERR_STDIO_WRITE_STALLED', { detail });
    log.warn({ err, writeTimeoutMs, queuedBytes: output.writableLength }, Lines.slowClientCut);
    kill(err);
  };

  const kill = (err: unknown) => {
    dead = true;
    stopReading();
    for (const e of inflight.values()) {
      e.cancelled = true;
      e.ac?.abort();
      e.endListen?.(false);
    }
    session?.close();
    void settleWork().then(() => finish(err));
  };

  const onOutputError = (err: Error) => {
    // EPIPE and friends: the client is gone, so nothing can carry answers any more.
    log.info({ err: { message: err.message, code: (err as { code?: string }).code } }, 'stdio output closed');
    kill(undefined);
  };
  output.on('error', onOutputError);

  // --- input ---

  const onData = (chunk: Buffer | string) => {
    const events = splitter.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    for (const ev of events) onEvent(ev);
  };

  const onEnd = () => {
    for (const ev of splitter.end()) onEvent(ev);
    void drain();
  };

  const onInputError = (err: Error) => {
    log.warn({ err }, 'stdio input failed');
    void drain();
  };

  const onEvent = (ev: LineEvent) => {
    if (dead) return;
    if (ev.kind === 'too-long') {
      // Refused before decoding: the id cannot be known, so it is null.
      const err = new SwitchyardError('SWY_ERR_STDIO_LINE_TOO_LONG', { detail: `limit ${maxLineBytes} bytes` });
      log.warn({ code: err.code, maxLineBytes }, Lines.clientFault);
      write(errorResponse(null, err.toRpcError()));
      return;
    }
    let bytes = ev.bytes;
    // RFC 8259 §8.1: a parser MAY ignore a leading byte order mark.
    if (bytes.length >= 3 && bytes.subarray(0, 3).equals(UTF8_BOM)) bytes = bytes.subarray(3);
    let value: unknown;
    let batch: boolean;
    try {
      const text = decodeUtf8(bytes);
      if (text.trim() === '') return;
      ({ value, batch } = parseBody(text, limits));
    } catch (err) {
      log.info({ code: (err as SwitchyardError).code }, Lines.clientFault);
      write(errorResponse(null, toRpcError(err)));
      return;
    }
    if (batch) onBatch(value as unknown[]);
    else onMessage(value, write);
  };

  /** JSON-RPC batches: only in a session that negotiated 2025-03-26 (2025-06-18 changelog: removed). */
  const onBatch = (items: unknown[]) => {
    if (!session || session.version !== '2025-03-26') return void write(errorResponse(null, new SwitchyardError('SWY_ERR_REQ_BATCH_NOT_ALLOWED').toRpcError()));
    if (items.length === 0) return void write(errorResponse(null, new SwitchyardError('SWY_ERR_REQ_INVALID', { detail: 'empty batch' }).toRpcError()));
    if (items.length > limits.maxBatchMessages) return void write(errorResponse(null, new SwitchyardError('SWY_ERR_REQ_BATCH_TOO_LARGE').toRpcError()));
    const replies: RpcResponse[] = [];
    const parts: Promise<void>[] = [];
    for (const item of items) {
      const p = onMessage(item, (m) => void replies.push(m as RpcResponse), true);
      if (p) parts.push(p);
    }
    track(
      Promise.allSettled(parts).then(() => {
        if (replies.length > 0) write(replies);
      }),
    );
  };

  const track = (p: Promise<void>): Promise<void> => {
    const q = p.catch((err: unknown) => log.error({ err }, Lines.internalFault)).finally(() => work.delete(q));
    work.add(q);
    return q;
  };

  /**
   * Handles one message. `reply` carries its response (the output, or a batch's collector);
   * messages before the response always go to the output.
   * @returns the request's work, when it is one that runs.
   */
  const onMessage = (value: unknown, reply: (m: RpcResponse) => void, inBatch = false): Promise<void> | undefined => {
    let kind;
    try {
      kind = classify(value, limits);
    } catch (err) {
      const e = err as SwitchyardError;
      log.info({ code: e.code }, Lines.clientFault);
      reply(errorResponse(e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(value, limits), e.toRpcError()));
      return undefined;
    }
    if (kind === 'response') {
      const res = value as RpcResponse;
      if (res.id !== null) asks.delete(idKey(res.id));
      if (session) void session.handle(res, 'response', NO_OUT);
      else log.debug({ rpcId: res.id }, 'stdio response without a session dropped');
      return undefined;
    }
    if (kind === 'notification') {
      onNotification(value as RpcNotification);
      return undefined;
    }
    const req = value as RpcRequest;
    const key = idKey(req.id);
    // basic/messages: ids are unique among the client's requests in flight.
    if (inflight.has(key)) {
      reply(errorResponse(req.id, new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID').toRpcError()));
      return undefined;
    }
    if (hasModernMeta(req.params))
      return run(key, { cancelled: false, ac: new AbortController(), endListen: undefined, legacy: false }, (e) => modern(req, e, reply));
    if (req.method === 'initialize' && !session && !inBatch) {
      open(req);
      return undefined;
    }
    if (session) return run(key, { cancelled: false, ac: undefined, endListen: undefined, legacy: true }, (e) => legacy(req, e, reply));
    // basic/lifecycle: before initialize, only ping is answered.
    if (req.method === 'ping') reply(resultResponse(req.id, {}));
    else reply(errorResponse(req.id, new SwitchyardError('SWY_ERR_SESSION_NOT_INITIALIZED').toRpcError()));
    return undefined;
  };

  const run = (key: string, entry: Entry, fn: (e: Entry) => Promise<void>): Promise<void> => {
    inflight.set(key, entry);
    return track(
      fn(entry).finally(() => {
        if (!entry.endListen) inflight.delete(key);
      }),
    );
  };

  const onNotification = (n: RpcNotification) => {
    if (n.method === 'notifications/cancelled') {
      const rid = n.params?.requestId;
      if (typeof rid === 'string' || typeof rid === 'number' || typeof rid === 'bigint') {
        const key = idKey(rid);
        const e = inflight.get(key);
        if (e) {
          // basic/utilities/cancellation: stop the work and send nothing more for it.
          e.cancelled = true;
          e.ac?.abort();
          if (e.endListen) {
            e.endListen(false);
            inflight.delete(key);
          }
        }
      }
    }
    if (session) void session.handle(n, 'notification', NO_OUT);
  };

  // --- the initialize era ---

  const open = (req: RpcRequest) => {
    if (executor.closing) return void write(errorResponse(req.id, new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN').toRpcError()));
    const s = new ClientSession(executor, sessionLimits(limits), log, INITIALIZE_REVISIONS[0]);
    // Every initialize-era revision defined stdio; the newest is the counter-offer.
    const result = s.initialize(req.params ?? {}, INITIALIZE_REVISIONS);
    session = s;
    log.info({ sessionId: s.id, dialect: 'stdio', version: s.version }, Lines.sessionOpen);
    write(resultResponse(req.id, result));
    s.attachNotifications((m) => void write(m));
  };

  const legacy = (req: RpcRequest, entry: Entry, reply: (m: RpcResponse) => void): Promise<void> => {
    const s = session as ClientSession;
    const out: Outbound = {
      send(m) {
        if (dead) return false;
        const isRequest = 'id' in m && 'method' in m;
        if (isRequest) {
          // After EOF the client cannot answer a server request.
          if (!reading || entry.cancelled) return false;
          asks.set(idKey((m as RpcRequest).id), (m as RpcRequest).id);
        } else if ((m as RpcNotification).method === 'notifications/cancelled') {
          const rid = (m as RpcNotification).params?.requestId as RequestId | undefined;
          if (rid !== undefined) asks.delete(idKey(rid));
        } else if (entry.cancelled) return false;
        return write(m as RpcMessage);
      },
      finish(m) {
        if (m && !entry.cancelled) reply(m);
      },
    };
    return s.handle(req, 'request', out);
  };

  // --- 2026-07-28, stateless ---

  const modern = async (req: RpcRequest, entry: Entry, reply: (m: RpcResponse) => void): Promise<void> => {
    let info;
    try {
      info = validateModernMeta(req, opts.modernRevisions);
      // stateless-2026-07-28 §4.2 step 10: an unknown method (initialize, ping, … included) is -32601.
      if (!MODERN_METHODS.has(req.method)) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: req.method });
    } catch (err) {
      log.info({ code: (err as SwitchyardError).code, rpcId: req.id }, Lines.clientFault);
      return reply(errorResponse(req.id, toRpcError(err)));
    }
    if (req.method === 'subscriptions/listen') return listen(req, info.params, entry, reply);
    const token = (req.params?._meta as JsonObject | undefined)?.progressToken as RequestId | undefined;
    const send = (m: RpcMessage) => void (!entry.cancelled && write(m));
    try {
      const result = await executor.run(
        {
          method: req.method,
          params: info.params,
          protocolVersion: info.protocolVersion,
          clientInfo: info.clientInfo,
          clientCapabilities: info.clientCapabilities,
          logLevel: info.logLevel,
          identity: null,
          progressToken: token,
          onProgress: (p) => {
            if (token !== undefined) send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: token } });
          },
          onLog: (m) => {
            if (levelAdmits(info.logLevel, m.level)) send({ jsonrpc: '2.0', method: 'notifications/message', params: { ...m } });
          },
          // 2026-07-28 servers send no requests: input needs travel as input_required results.
          ask: undefined,
        },
        entry.ac?.signal,
      );
      if (!entry.cancelled) reply(resultResponse(req.id, shapeModernResult(req.method, result, executor.router.upstream.describe().serverInfo)));
    } catch (err) {
      if (entry.cancelled || (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_CANCELLED')) return;
      if (err instanceof SwitchyardError && err.entry.fault !== 'client') log.error({ err, rpcId: req.id }, 'request failed');
      else if (!(err instanceof SwitchyardError) && !(err instanceof Error && err.name === 'PeerRpcError'))
        log.error({ err, rpcId: req.id }, Lines.internalFault);
      reply(errorResponse(req.id, toRpcError(err)));
    }
  };

  /**
   * `subscriptions/listen`: the acknowledgement first, then matching notifications tagged with
   * the listen's id, until the client cancels it (no more messages) or the transport ends (the
   * final result).
   * @see 2026-07-28 basic/patterns/subscriptions; basic/patterns/cancellation (stdio)
   */
  const listen = async (req: RpcRequest, params: JsonObject, entry: Entry, reply: (m: RpcResponse) => void): Promise<void> => {
    const want = params.notifications as SubscriptionFilter | undefined;
    if (!want || typeof want !== 'object' || Array.isArray(want)) {
      return reply(errorResponse(req.id, new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'notifications filter is required' }).toRpcError()));
    }
    const honoured = honouredFilter(want, executor.router.upstream.describe().capabilities);
    const tag = { [MODERN_META.subscriptionId]: req.id };
    let sub;
    try {
      sub = executor.subscribe(honoured, (n) => {
        if (!entry.cancelled)
          write({ jsonrpc: '2.0', method: n.method, params: { ...n.params, _meta: { ...(n.params._meta as JsonObject | undefined), ...tag } } });
      });
    } catch (err) {
      return reply(errorResponse(req.id, toRpcError(err)));
    }
    write({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: tag, notifications: honoured } });
    let open = true;
    entry.endListen = (graceful) => {
      if (!open) return;
      open = false;
      sub.close();
      inflight.delete(idKey(req.id));
      if (graceful && !entry.cancelled) write(resultResponse(req.id, { resultType: 'complete', _meta: tag }));
    };
  };

  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onInputError);

  return {
    done,
    close() {
      void drain();
      return done.catch(() => {});
    },
  };
}

/** An outbound for messages that carry no reply (responses and notifications from the client). */
const NO_OUT: Outbound = { send: () => false, finish: () => {} };
