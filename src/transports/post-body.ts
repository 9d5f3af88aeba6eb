// Reading a POST body in the fastify front door: within the route's bound, and decoded from
// UTF-8 as it arrives, so that a body is never held as bytes and as text at once. A body that may
// hold a long string (declared at least LONG_STRING_BYTES) is kept as the chunks it arrived in
// instead, for `parseJsonBytes`, which decodes only its long strings, in pieces, and never makes
// its whole text nor one buffer of it.

import { constants } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { SwitchyardError } from '../core/errors.js';
import { LONG_STRING_BYTES } from '../core/json-bytes.js';
import { decodeUtf8 } from '../core/message.js';
import { createUtf8Stream, type Utf8Stream } from '../io/utf8.js';
import { PostChunks, PostText } from './front-door.js';

/** Decoding errors say what decodeUtf8 says of a body read whole. */
const UTF8 = { fatal: true, detail: 'body is not valid UTF-8' };

/** The catalogue error a decoder threw (both throw SwitchyardError), or one made of `cause`. */
function asParseError(cause: unknown): SwitchyardError {
  return cause instanceof SwitchyardError ? cause : new SwitchyardError('SWY_ERR_REQ_PARSE', { detail: UTF8.detail, cause });
}

/**
 * A fastify content-type parser for every type. It reads the body within the route's `bodyLimit`
 * and `buffer.constants.MAX_LENGTH` (bytes; 413 `SWY_ERR_HTTP_BODY_TOO_LARGE` once past it, or
 * at once when `Content-Length` says so), checks the length against `Content-Length` (400
 * `SWY_ERR_REQ_PARSE`), and hands the route a `PostText`; the bytes (a Buffer) when the request
 * names a `Content-Encoding` (for `decodeBody`); or, when it declares a length of at least
 * `LONG_STRING_BYTES`, the chunks as node:http gave them (`PostChunks`, for `parseJsonBytes`:
 * each chunk is already a copy of its own, so keeping them costs nothing more, where joining them
 * cost the body once more). The bound and length checks are fastify's own for `parseAs: 'buffer'`.
 * @see RFC 9112 §6.3 (message body length); RFC 9110 §8.4 (Content-Encoding); RFC 3629 (UTF-8)
 */
export function readPostBody(req: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: unknown) => void): void {
  // A body longer than a Buffer can hold could never be read whole: past that it is too large.
  const limit = Math.min(req.routeOptions.bodyLimit ?? Infinity, constants.MAX_LENGTH);
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    done(new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE'));
    return;
  }
  const coded = req.headers['content-encoding'] !== undefined;
  const asBytes = coded || declared >= LONG_STRING_BYTES;
  let received = 0;
  const chunks: Buffer[] = [];
  const parts: string[] = [];
  let decoder: Utf8Stream | undefined;
  let bad: SwitchyardError | undefined;
  const stop = () => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
  };
  function onData(chunk: Buffer): void {
    received += chunk.length;
    if (received > limit) {
      stop();
      done(new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE'));
      return;
    }
    if (asBytes) {
      chunks.push(chunk);
      return;
    }
    if (bad) return;
    try {
      // Most bodies arrive in one chunk: decoded at once, with no streaming decoder made.
      if (decoder === undefined && parts.length === 0 && chunk.length === declared) parts.push(decodeUtf8(chunk));
      else {
        decoder ??= createUtf8Stream(UTF8);
        const s = decoder.write(chunk);
        if (s.length > 0) parts.push(s);
      }
    } catch (cause) {
      bad = asParseError(cause);
      parts.length = 0;
    }
  }
  function onEnd(err?: Error): void {
    stop();
    if (err) {
      done(new SwitchyardError('SWY_ERR_REQ_PARSE', { detail: 'the body could not be read', cause: err }));
      return;
    }
    if (!Number.isNaN(declared) && received !== declared) {
      done(new SwitchyardError('SWY_ERR_REQ_PARSE', { detail: 'the body is not as long as its Content-Length' }));
      return;
    }
    if (asBytes) {
      // node:http copies each chunk out of its read buffer, so these are the body's only bytes.
      done(null, coded ? Buffer.concat(chunks, received) : new PostChunks(chunks, received));
      return;
    }
    if (decoder && !bad) {
      try {
        const rest = decoder.end();
        if (rest.length > 0) parts.push(rest);
      } catch (cause) {
        bad = asParseError(cause);
      }
    }
    done(null, new PostText(bad ? undefined : parts.length === 1 ? parts[0] : parts.join(''), received, bad));
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}
