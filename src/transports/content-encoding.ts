// Decoding of request bodies by their Content-Encoding, bounded against decompression bombs.

import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { SwitchyardError } from '../core/errors.js';

/** Codings this module decodes, as `Accept-Encoding` lists them in a 415 (RFC 9110 §15.5.16). */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** Most codings one `Content-Encoding` may list; more are refused (each costs a decompression pass). */
export const MAX_CODINGS = 4;

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

/** A content coding this module undoes (`x-gzip` reads as `gzip`, RFC 9110 §8.4.1.3). */
export type Coding = 'gzip' | 'deflate' | 'br';

/** RFC 9110 §8.4.1: coding names are case-insensitive; `x-gzip` is `gzip` (§8.4.1.3). */
function codingOf(name: string): Coding | 'identity' | null {
  switch (name.toLowerCase()) {
    case 'identity':
      return 'identity';
    case 'gzip':
    case 'x-gzip':
      return 'gzip';
    case 'deflate':
      return 'deflate';
    case 'br':
      return 'br';
    default:
      return null;
  }
}

/**
 * Reads a `Content-Encoding` value into the codings to undo, in the order they were applied.
 * `identity` and empty list members are dropped.
 * @throws SwitchyardError SWY_ERR_HTTP_CONTENT_ENCODING for an unknown coding or more than `MAX_CODINGS`
 * @see RFC 9110 §8.4 (Content-Encoding), §5.6.1 (lists)
 */
export function parseContentEncoding(value: string | undefined): Coding[] {
  if (value === undefined) return [];
  const out: Coding[] = [];
  for (const raw of value.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    const c = codingOf(name);
    if (c === null) throw unsupported(`unknown coding ${JSON.stringify(name.slice(0, 40))}`);
    if (c === 'identity') continue;
    if (out.length === MAX_CODINGS) throw unsupported(`more than ${MAX_CODINGS} codings`);
    out.push(c);
  }
  return out;
}

function unsupported(detail: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_HTTP_CONTENT_ENCODING', { detail, headers: { 'Accept-Encoding': ACCEPT_ENCODING } });
}

/**
 * RFC 9110 §8.4.1.2 defines `deflate` as the zlib format (RFC 1950); some senders send raw
 * deflate (RFC 1951) under the name, as browsers tolerate in responses. A zlib stream starts
 * with CM=8 and a header check that makes the first two bytes a multiple of 31. A raw stream's
 * first three bits are BFINAL and BTYPE, so its first byte ends in 8 only for a non-final
 * stored block with a set padding bit, which deflaters do not write.
 */
function isZlibHeader(b: Uint8Array): boolean {
  return b.length >= 2 && (b[0] & 0x0f) === 8 && b[0] >> 4 <= 7 && ((b[0] << 8) | b[1]) % 31 === 0;
}

/** Thrown inside `undo` for bytes after the end of a deflate or brotli stream. */
const TRAILING = new Error('bytes after the end of the compressed data');

async function undo(coding: Coding, input: Buffer, maxOutputLength: number): Promise<Buffer> {
  if (coding === 'gzip') return gunzip(input, { maxOutputLength }); // node:zlib refuses trailing bytes itself
  // inflate and brotli stop at the end of their stream and drop what follows; `info` tells how
  // much they consumed, so trailing bytes are refused as gunzip refuses them.
  const opts = { maxOutputLength, info: true };
  const run = coding === 'br' ? brotli : isZlibHeader(input) ? inflate : inflateRaw;
  const { buffer, engine } = (await run(input, opts)) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  if (engine.bytesWritten !== input.length) throw TRAILING;
  return buffer;
}

/**
 * Bodies decoded at once; the others wait their turn. A brotli decoder holds its whole window
 * (up to 16 MiB, RFC 7932 §9.1) besides the output, whatever `maxOutputLength` says, so 100 bombs
 * decoded together held 1.9 GB; the zlib work runs on libuv's pool of 4 threads anyway.
 */
const MAX_CONCURRENT_DECODES = 4;
let decoding = 0;
const waiting: Array<() => void> = [];

async function decodeSlot(): Promise<void> {
  if (decoding < MAX_CONCURRENT_DECODES) {
    decoding++;
    return;
  }
  // The slot passes straight from the one that frees it (the count stays).
  await new Promise<void>((resolve) => waiting.push(resolve));
}

/** Bodies being decoded now, and bodies waiting for a turn (at most {@link MAX_CONCURRENT_DECODES} decode at once). */
export function decodeLoad(): { active: number; waiting: number } {
  return { active: decoding, waiting: waiting.length };
}

function freeSlot(): void {
  const next = waiting.shift();
  if (next) next();
  else decoding--;
}

/**
 * Decodes a request body by its `Content-Encoding`: `identity`, `gzip`, `x-gzip`, `deflate`
 * (zlib, or raw deflate) and `br`, several codings undone in reverse order of application.
 * Every stage stops at `maxDecodedBytes` (zlib's `maxOutputLength`), so a decompression bomb
 * costs at most that much output, plus the decoder's window (brotli: up to 16 MiB); at most
 * {@link MAX_CONCURRENT_DECODES} bodies decode at once, the others wait. Runs on the libuv thread pool.
 * @param bytes the body as received.
 * @param contentEncoding the `Content-Encoding` value (absent: identity).
 * @param maxDecodedBytes largest decoded body, bytes (also bounds an identity body).
 * @returns the decoded body (the input itself when no coding applies).
 * @throws SwitchyardError SWY_ERR_HTTP_CONTENT_ENCODING (415, with `Accept-Encoding`) for an
 *   unknown coding or too many; SWY_ERR_HTTP_BODY_TOO_LARGE (413) when a stage would exceed
 *   `maxDecodedBytes`; SWY_ERR_REQ_PARSE (400) for corrupt or truncated data, or bytes after
 *   the end of the compressed stream (any coding); SWY_ERR_CONFIG_INVALID when `maxDecodedBytes` is not a
 *   positive integer
 * @see RFC 9110 §8.4 (codings applied in order, listed in order), §8.4.1 (gzip, deflate), §15.5.16 (415);
 *   RFC 1950, RFC 1951, RFC 1952, RFC 7932 (brotli)
 */
export async function decodeBody(bytes: Uint8Array, contentEncoding: string | undefined, maxDecodedBytes: number): Promise<Buffer> {
  if (!Number.isSafeInteger(maxDecodedBytes) || maxDecodedBytes < 1) {
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `maxDecodedBytes must be a positive integer, got ${maxDecodedBytes}` });
  }
  const codings = parseContentEncoding(contentEncoding);
  let body = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (codings.length === 0 && body.length > maxDecodedBytes) {
    throw new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE', { detail: `limit ${maxDecodedBytes} bytes` });
  }
  if (codings.length === 0) return body;
  await decodeSlot();
  try {
    // RFC 9110 §8.4: codings are listed in the order applied, so they are undone last first.
    for (let k = codings.length - 1; k >= 0; k--) {
      try {
        body = await undo(codings[k], body, maxDecodedBytes);
      } catch (cause) {
        if ((cause as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
          throw new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE', { detail: `decoded body over ${maxDecodedBytes} bytes`, cause });
        }
        const detail = cause === TRAILING ? `${codings[k]} data followed by other bytes` : `body is not valid ${codings[k]} data`;
        throw new SwitchyardError('SWY_ERR_REQ_PARSE', { detail, cause: cause === TRAILING ? undefined : cause });
      }
    }
    return body;
  } finally {
    freeSlot();
  }
}
