// Parsing a message straight from its bytes, so that a message with a long string value (a
// 5 MB tool result) is never held as one whole string beside its parsed value. The long string
// is decoded from its own bytes once; the rest of the message (its skeleton) is parsed by
// `parseBody` as any other body. The bytes (external memory, freed as soon as their Buffer
// object dies young) replace the whole-text copy (a large V8 string, freed only by a full
// collection), which is what raised the peak of a large stdio message (docs/performance.md).

import { randomBytes } from 'node:crypto';
import { decodeUtf8, parseBody, type ParsedBody, type ParseLimits } from './message.js';

/** A string literal whose content is at least this many bytes is decoded on its own. */
export const LONG_STRING_BYTES = 256 * 1024;

/** String literals looked at before the search for long ones stops (the rest is parsed whole). */
export const MAX_SCANNED_STRINGS = 4096;

/** Long string literals decoded on their own, at most, per message. */
export const MAX_LONG_STRINGS = 16;

/** Thresholds of `parseJsonBytes`, for tests; the defaults are the constants above. */
export interface JsonBytesOptions {
  /** Content length (bytes) from which a string literal is decoded on its own. */
  longBytes?: number;
}

// A placeholder no message can hold by chance: a NUL (which JSON text can only write escaped)
// and 128 random bits chosen at start. Written escaped, so the skeleton stays valid JSON.
const NONCE = randomBytes(16).toString('hex');
const PLACEHOLDER_PREFIX = `\u0000swy-${NONCE}-`;

// eslint-disable-next-line no-control-regex -- the controls are what JSON refuses raw in a string
const RAW_CONTROL = /[\u0000-\u001f]/;

/**
 * Decodes and parses one body (an HTTP POST body or a stdio line) from its UTF-8 bytes: exactly
 * `parseBody(decodeUtf8(bytes), limits)` (the same value, the same errors), with less memory for
 * a message holding long strings. Object member values that are string literals of at least
 * `LONG_STRING_BYTES` bytes (up to `MAX_LONG_STRINGS`, among the first `MAX_SCANNED_STRINGS`
 * literals) are decoded from their own bytes, each into one string; the skeleton left around
 * them is parsed with a placeholder in their place, which is then replaced. Anything unusual
 * (a long key, a long literal holding a raw control character, a placeholder not found once)
 * takes the plain path, which then gives the plain path's answer or error.
 * @param bytes the body, without a byte order mark.
 * @throws SwitchyardError SWY_ERR_REQ_PARSE (not UTF-8, not JSON), SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 * @see RFC 8259 §7 (strings: quotation mark, reverse solidus and controls escaped), §8.1 (UTF-8)
 */
export function parseJsonBytes(bytes: Uint8Array, limits: ParseLimits, opts: JsonBytesOptions = {}): ParsedBody {
  const longBytes = opts.longBytes ?? LONG_STRING_BYTES;
  if (bytes.length < longBytes + 2) return parseBody(decodeUtf8(bytes), limits);
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found = findLongStrings(buf, longBytes);
  if (found.length === 0) return parseBody(decodeUtf8(bytes), limits);

  // Each long value, decoded from its own bytes. UTF-8 is checked piece by piece: a quotation
  // mark is one byte, never inside a multi-byte sequence, so the pieces are valid exactly when
  // the whole is.
  const values: string[] = [];
  for (let k = 0; k < found.length; k += 2) {
    const open = found[k];
    const close = found[k + 1];
    const inner = buf.subarray(open + 1, close);
    let value: string;
    if (inner.indexOf(92 /* \ */) === -1) {
      value = decodeUtf8(inner, true);
      if (RAW_CONTROL.test(value)) return parseBody(decodeUtf8(bytes), limits);
    } else {
      try {
        value = JSON.parse(decodeUtf8(buf.subarray(open, close + 1))) as string;
      } catch {
        return parseBody(decodeUtf8(bytes), limits);
      }
    }
    values.push(value);
  }

  // The skeleton: the bytes around the long literals, each replaced by its placeholder.
  const parts: Buffer[] = [];
  let from = 0;
  for (let k = 0; k < found.length; k += 2) {
    parts.push(buf.subarray(from, found[k]), Buffer.from(`"\\u0000swy-${NONCE}-${k >> 1}"`, 'latin1'));
    from = found[k + 1] + 1;
  }
  parts.push(buf.subarray(from));
  const parsed = parseBody(decodeUtf8(Buffer.concat(parts)), limits);
  if (!putBack(parsed.value, values)) return parseBody(decodeUtf8(bytes), limits);
  return parsed;
}

/**
 * The byte offsets of the quotation marks around each long string literal that is an object
 * member's value or an array element, as a flat list (open, close, open, close…). Empty when
 * none is found, or when a long literal is a member name (the plain path parses those).
 */
function findLongStrings(buf: Buffer, longBytes: number): number[] {
  const found: number[] = [];
  let from = 0;
  for (let scanned = 0; scanned < MAX_SCANNED_STRINGS && found.length < 2 * MAX_LONG_STRINGS; scanned++) {
    const open = buf.indexOf(34 /* " */, from);
    if (open === -1) break;
    // A quotation mark closes the literal unless an odd number of reverse solidi precede it.
    let close = buf.indexOf(34, open + 1);
    while (close !== -1) {
      let k = close - 1;
      while (buf[k] === 92 /* \ */) k--;
      if ((close - 1 - k) % 2 === 0) break;
      close = buf.indexOf(34, close + 1);
    }
    if (close === -1) break; // unterminated: the plain path refuses it
    if (close - open - 1 >= longBytes) {
      let next = close + 1;
      while (buf[next] === 32 || buf[next] === 9 || buf[next] === 10 || buf[next] === 13) next++;
      if (buf[next] === 58 /* : */) return [];
      found.push(open, close);
    }
    from = close + 1;
  }
  return found;
}

/**
 * Replaces each placeholder in `value` by its string (`values[k]` for placeholder k), walking
 * objects and arrays without recursion until all are placed.
 * @returns false unless every placeholder was found exactly once.
 */
function putBack(value: unknown, values: string[]): boolean {
  let left = values.length;
  const seen = new Array<boolean>(values.length).fill(false);
  const stack: unknown[] = [value];
  while (stack.length > 0 && left > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    const keys: Array<string | number> = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (const key of keys) {
      const x = (v as Record<string | number, unknown>)[key];
      if (typeof x === 'string') {
        if (!x.startsWith(PLACEHOLDER_PREFIX)) continue;
        const k = Number(x.slice(PLACEHOLDER_PREFIX.length));
        if (!(k >= 0 && k < values.length) || seen[k]) return false;
        seen[k] = true;
        left--;
        (v as Record<string | number, unknown>)[key] = values[k];
      } else if (x !== null && typeof x === 'object') stack.push(x);
    }
  }
  return left === 0;
}
