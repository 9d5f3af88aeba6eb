// The stdio front door: framing only. Newline-delimited JSON-RPC on stdin/stdout for one local
// client; what each message means is the era modules' business (a MessagePeer, injected).

import type { Readable, Writable } from 'node:stream';
import type { CoreLog, MessagePeer } from '../core/exchange.js';
import { SwitchyardError, toRpcError } from '../core/errors.js';
import { parseJsonBytes } from '../core/json-bytes.js';
import { decodeUtf8, errorResponse, serialize, type ParseLimits, type RpcMessage, type RpcResponse } from '../core/message.js';
import { afterLargeMessage } from '../io/large-message.js';
import { LineSplitter, type LineEvent } from '../io/lines.js';
import { Lines } from '../log/lines.js';

export { LineSplitter, type LineEvent } from '../io/lines.js';

/** Default longest line accepted, bytes (without its `\n`). */
export const DEFAULT_MAX_LINE_BYTES = 2_000_000;
/** Default time one write to stdout may stay blocked before the transport ends, ms. */
export const DEFAULT_WRITE_TIMEOUT_MS = 5_000;

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
  /** Bounds: the parse bounds and `maxStreamBufferBytes` (bytes queued behind a blocked write). */
  limits: ParseLimits & { maxStreamBufferBytes: number };
  /** Logger; never stdout. */
  log: CoreLog;
  /** The client's messages (process.stdin). */
  input: Readable;
  /** Where messages to the client go (process.stdout); nothing else is written to it. */
  output: Writable;
  /** Builds the peer that serves the client's messages, given the transport's writer. */
  createPeer(write: (msg: RpcMessage | RpcResponse[]) => boolean): MessagePeer;
  /** Longest line accepted, bytes, without its `\n` (default 2,000,000); longer: -32600 with id null. */
  maxLineBytes?: number;
  /** Time a blocked write may wait for the client to read, ms (default 5,000); longer: the transport ends. */
  writeTimeoutMs?: number;
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

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * True when a line holds only whitespace (as `String.prototype.trim` counts it): such a line is
 * skipped, not answered. Only a line whose first other byte is not ASCII is decoded for this.
 * @throws SwitchyardError SWY_ERR_REQ_PARSE (that line is not UTF-8)
 */
function blank(bytes: Buffer): boolean {
  for (const b of bytes) {
    if (b === 32 || (b >= 9 && b <= 13)) continue;
    return b >= 0x80 && decodeUtf8(bytes).trim() === '';
  }
  return true;
}

/**
 * Serves one client over stdio: one JSON-RPC message per line in, one per line out. Lines are
 * decoded (UTF-8, a leading BOM ignored, blank lines skipped) and parsed here; each message or
 * batch goes to the peer, which assigns it to its era.
 *
 * Bounds: a line over `maxLineBytes` is refused (-32600, id null) before decoding and the rest
 * of it discarded; a write blocked past `writeTimeoutMs`, or more than
 * `limits.maxStreamBufferBytes` queued behind a blocked write, ends the transport. Output is ASCII.
 * @see 2025-11-25 basic/transports#stdio; RFC 8259 §8.1 (BOM)
 */
export function serveStdio(opts: ServeStdioOptions): StdioTransport {
  const { limits, log, input, output } = opts;
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const writeTimeoutMs = opts.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  const splitter = new LineSplitter(maxLineBytes);
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

  const peer = opts.createPeer(write);

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

  /** EOF or close(): the peer finishes its work, then the output drains. */
  const drain = (reason: 'eof' | 'shutdown'): Promise<void> => {
    ending ??= (async () => {
      stopReading();
      await peer.end(reason);
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
    kill(err, 'slow-reader');
  };

  const kill = (err: unknown, reason?: 'slow-reader') => {
    dead = true;
    stopReading();
    void peer.kill(reason).then(() => finish(err));
  };

  const onOutputError = (err: Error) => {
    // EPIPE and friends: the client is gone, so nothing can carry answers any more.
    // The text, not an object: pino's error serializer writes an object literal as {type: 'Object', stack: ''}.
    log.info({ err: err.message, code: (err as { code?: string }).code }, 'stdio output closed');
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
    void drain('eof');
  };

  const onInputError = (err: Error) => {
    log.warn({ err }, 'stdio input failed');
    void drain('eof');
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
    // This splitter joins every line (no `partsFrom`): a long-line never comes.
    let bytes = ev.kind === 'line' ? ev.bytes : Buffer.concat(ev.parts, ev.length);
    // RFC 8259 §8.1: a parser MAY ignore a leading byte order mark.
    if (bytes.length >= 3 && bytes.subarray(0, 3).equals(UTF8_BOM)) bytes = bytes.subarray(3);
    let value: unknown;
    let batch: boolean;
    try {
      if (blank(bytes)) return;
      ({ value, batch } = parseJsonBytes(bytes, limits));
      afterLargeMessage(bytes.length);
    } catch (err) {
      log.info({ code: (err as SwitchyardError).code }, Lines.clientFault);
      write(errorResponse(null, toRpcError(err)));
      return;
    }
    peer.receive(value, batch);
  };

  input.on('data', onData);
  input.on('end', onEnd);
  input.on('error', onInputError);

  return {
    done,
    close() {
      void drain('shutdown');
      return done.catch(() => {});
    },
  };
}
