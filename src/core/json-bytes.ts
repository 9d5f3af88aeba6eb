// Parsing a message straight from its bytes, so that a message with a long string value (a
// 5 MB tool result) is never held as one whole string, nor as one whole buffer, beside its parsed
// value. The bytes may come as the chunks they arrived in (a POST body, a stdio line): they are
// never joined. Each long string is decoded from its own bytes in short pieces, which become one
// (cons) string and are remembered for writing it out again (`long-strings.ts`); the rest of the
// message (its skeleton) is parsed by `parseBody` as any other body.

import { randomBytes } from 'node:crypto';
import { rememberPieces } from './long-strings.js';
import { decodeUtf8, parseBody, type ParsedBody, type ParseLimits } from './message.js';

/** A string literal whose content is at least this many bytes is decoded on its own. */
export const LONG_STRING_BYTES = 256 * 1024;

/**
 * A long literal is decoded in pieces of at most this many bytes: each piece is then an ordinary
 * young V8 string (under the 128 KiB large-object size even as UTF-16), not a large object of its own.
 */
export const PIECE_BYTES = 32 * 1024;

/** String literals looked at before the search for long ones stops (the rest is parsed whole). */
export const MAX_SCANNED_STRINGS = 4096;

/** Long string literals decoded on their own, at most, per message. */
export const MAX_LONG_STRINGS = 16;

/** A message's bytes: one buffer, or the chunks it arrived in, in order. */
export type JsonBytes = Uint8Array | readonly Uint8Array[];

/** Thresholds of `parseJsonBytes`, for tests; the defaults are the constants above. */
export interface JsonBytesOptions {
  /** Content length (bytes) from which a string literal is decoded on its own. */
  longBytes?: number;
  /** Largest piece a long literal is decoded in, bytes. */
  pieceBytes?: number;
  /**
   * Join each long string's pieces into one flat string (a young large object; the pieces are
   * then garbage) instead of keeping it as their cons. For a message held while much else is
   * allocated around it (an upstream's answer, beside the request still waiting for it): pieces
   * that a scavenge finds alive are copied and, whole pages at a time, promoted into fresh
   * old-space memory, where a large object is never copied. Default false.
   */
  flat?: boolean;
}

// A placeholder no message can hold by chance: a NUL (which JSON text can only write escaped)
// and 128 random bits chosen at start. Written escaped, so the skeleton stays valid JSON.
const NONCE = randomBytes(16).toString('hex');
const PLACEHOLDER_PREFIX = `\u0000swy-${NONCE}-`;

// eslint-disable-next-line no-control-regex -- the controls are what JSON refuses raw in a string
const RAW_CONTROL = /[\u0000-\u001f]/;

/**
 * Decodes and parses one body (an HTTP POST body or a stdio line) from its UTF-8 bytes: exactly
 * `parseBody(decodeUtf8(whole))` of the bytes joined (the same value, the same errors), with
 * less memory for a message holding long strings. Object member values and array elements that
 * are string literals of at least `LONG_STRING_BYTES` bytes (up to `MAX_LONG_STRINGS`, among the
 * first `MAX_SCANNED_STRINGS` literals) are decoded from their own bytes in pieces of at most
 * `PIECE_BYTES`, escapes included; each becomes one string made of its pieces, remembered with
 * them (`rememberedPieces`), or with `opts.flat` one flat string. The skeleton left around them is parsed with a placeholder in their
 * place, which is then replaced. The chunks are never joined unless something is unusual (a long
 * member name, a raw control character, invalid UTF-8 or a bad escape in a long literal, a
 * placeholder not found once): that takes the plain path, which gives the plain path's answer or error.
 * @param bytes the body: one buffer or its chunks, in order.
 * @throws SwitchyardError SWY_ERR_REQ_PARSE (not UTF-8, not JSON), SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 * @see RFC 8259 §7 (strings: quotation mark, reverse solidus and controls escaped), §8.1 (UTF-8)
 */
export function parseJsonBytes(bytes: JsonBytes, limits: ParseLimits, opts: JsonBytesOptions = {}): ParsedBody {
  const longBytes = opts.longBytes ?? LONG_STRING_BYTES;
  // The common case first, with nothing made: one short buffer.
  if (!Array.isArray(bytes) && (bytes as Uint8Array).length < longBytes + 2) return parseBody(decodeUtf8(bytes as Uint8Array), limits);
  const src = new Chunks(bytes);
  if (src.length < longBytes + 2) return plain(src, limits);
  const found = findLongStrings(src, longBytes);
  if (found.length === 0) return plain(src, limits);

  const pieceBytes = Math.max(4, opts.pieceBytes ?? PIECE_BYTES);
  const values: Array<{ value: string; pieces: string[] }> = [];
  for (let k = 0; k < found.length; k += 2) {
    const decoded = decodeLiteral(src, found[k] + 1, found[k + 1], pieceBytes);
    if (decoded === undefined) return plain(src, limits);
    if (opts.flat === true && decoded.pieces.length > 1) {
      const value = decoded.pieces.join('');
      values.push({ value, pieces: [value] });
    } else values.push(decoded);
  }

  // The skeleton: the bytes around the long literals, each replaced by its placeholder.
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let k = 0; k < found.length; k += 2) {
    src.views(from, found[k], parts);
    parts.push(Buffer.from(`"\\u0000swy-${NONCE}-${k >> 1}"`, 'latin1'));
    from = found[k + 1] + 1;
  }
  src.views(from, src.length, parts);
  const parsed = parseBody(decodeUtf8(Buffer.concat(parts)), limits);
  if (!putBack(parsed.value, values)) return plain(src, limits);
  return parsed;
}

/** The plain parse: the bytes joined (one buffer as it is), decoded and parsed whole. */
function plain(src: Chunks, limits: ParseLimits): ParsedBody {
  return parseBody(decodeUtf8(src.whole()), limits);
}

/**
 * A message's bytes as one sequence over the chunks they arrived in: positions count from the
 * first byte of the first chunk. Reads move forward nearly always, so a cursor keeps the chunk of
 * the last read.
 */
class Chunks {
  readonly list: readonly Buffer[];
  /** Position of each chunk's first byte. */
  private readonly starts: number[];
  readonly length: number;
  /** The chunk of the last position looked up. */
  private at = 0;

  constructor(bytes: JsonBytes) {
    const given: readonly Uint8Array[] = Array.isArray(bytes) ? (bytes as readonly Uint8Array[]) : [bytes as Uint8Array];
    // Views, not copies: Buffer's indexOf and subarray on every chunk.
    this.list = given.filter((c) => c.length > 0).map((c) => (Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
    this.starts = [];
    let n = 0;
    for (const c of this.list) {
      this.starts.push(n);
      n += c.length;
    }
    this.length = n;
  }

  /** The index of the chunk holding position `pos` (0 ≤ pos < length). */
  private chunkOf(pos: number): number {
    let i = this.at;
    while (i > 0 && this.starts[i] > pos) i--;
    while (i < this.list.length - 1 && this.starts[i + 1] <= pos) i++;
    this.at = i;
    return i;
  }

  /** The byte at `pos`, or undefined outside. */
  byteAt(pos: number): number | undefined {
    if (pos < 0 || pos >= this.length) return undefined;
    const i = this.chunkOf(pos);
    return this.list[i][pos - this.starts[i]];
  }

  /** The first position at or after `from` and before `to` that holds `byte`, or -1. */
  indexOf(byte: number, from: number, to = this.length): number {
    if (from >= to) return -1;
    for (let i = this.chunkOf(from); i < this.list.length && this.starts[i] < to; i++) {
      const c = this.list[i];
      const start = this.starts[i];
      const j = c.indexOf(byte, Math.max(0, from - start));
      if (j !== -1) return start + j < to ? start + j : -1;
    }
    return -1;
  }

  /** Pushes onto `out` views of the bytes from `from` to `to`, each within one chunk and at most `max` long. */
  views(from: number, to: number, out: Uint8Array[], max = Infinity): Uint8Array[] {
    if (from >= to) return out;
    for (let i = this.chunkOf(from); i < this.list.length && this.starts[i] < to; i++) {
      const c = this.list[i];
      const start = this.starts[i];
      const a = Math.max(0, from - start);
      const b = Math.min(c.length, to - start);
      for (let p = a; p < b; p += max) out.push(c.subarray(p, Math.min(b, p + max)));
    }
    return out;
  }

  /** All the bytes as one buffer: the only chunk as it is, or the chunks joined (a copy). */
  whole(): Uint8Array {
    return this.list.length === 1 ? this.list[0] : Buffer.concat(this.list, this.length);
  }
}

/**
 * The positions of the quotation marks around each long string literal that is an object
 * member's value or an array element, as a flat list (open, close, open, close…). Empty when
 * none is found, or when a long literal is a member name (the plain path parses those).
 */
function findLongStrings(src: Chunks, longBytes: number): number[] {
  const found: number[] = [];
  let from = 0;
  for (let scanned = 0; scanned < MAX_SCANNED_STRINGS && found.length < 2 * MAX_LONG_STRINGS; scanned++) {
    const open = src.indexOf(34 /* " */, from);
    if (open === -1) break;
    // A quotation mark closes the literal unless an odd number of reverse solidi precede it.
    let close = src.indexOf(34, open + 1);
    while (close !== -1) {
      let k = close - 1;
      while (src.byteAt(k) === 92 /* \ */) k--;
      if ((close - 1 - k) % 2 === 0) break;
      close = src.indexOf(34, close + 1);
    }
    if (close === -1) break; // unterminated: the plain path refuses it
    if (close - open - 1 >= longBytes) {
      let next = close + 1;
      for (let b = src.byteAt(next); b === 32 || b === 9 || b === 10 || b === 13; b = src.byteAt(++next));
      if (src.byteAt(next) === 58 /* : */) return [];
      found.push(open, close);
    }
    from = close + 1;
  }
  return found;
}

/**
 * The string a literal's content (bytes `from` to `to`, between its quotation marks) stands for,
 * and the pieces it was decoded in (each at most `pieceBytes` bytes of the literal, UTF-8 checked
 * piece by piece by one streaming decoder). Escapes are read piece by piece too: a piece ends
 * before an escape it would cut, which then starts the next. Undefined for anything the plain
 * parse refuses: invalid UTF-8, a raw control character, a bad escape.
 */
function decodeLiteral(src: Chunks, from: number, to: number, pieceBytes: number): { value: string; pieces: string[] } | undefined {
  const escaped = src.indexOf(92 /* \ */, from, to) !== -1;
  // ignoreBOM: a U+FEFF at the start of a string value is content.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const pieces: string[] = [];
  let carry = '';
  try {
    const views = src.views(from, to, [], pieceBytes);
    for (let i = 0; i <= views.length; i++) {
      let text = i < views.length ? decoder.decode(views[i], { stream: true }) : decoder.decode();
      if (escaped) {
        text = carry + text;
        const cut = i < views.length ? escapeCut(text) : text.length;
        carry = text.slice(cut);
        text = JSON.parse(`"${text.slice(0, cut)}"`) as string;
      } else if (RAW_CONTROL.test(text)) return undefined;
      if (text.length > 0) pieces.push(text);
    }
  } catch {
    return undefined;
  }
  let value = pieces.length > 0 ? pieces[0] : '';
  for (let i = 1; i < pieces.length; i++) value += pieces[i];
  return { value, pieces };
}

/**
 * Where text made of whole escapes from its start must be cut so that its last escape is not cut
 * in half: before that escape when it is not complete, else at the end. An escape is at most six
 * units (`\uXXXX`), so only a reverse solidus among the last six can start an unfinished one; it
 * starts an escape when the run of reverse solidi it ends is odd (the others pair up as `\\`).
 * @see RFC 8259 §7
 */
function escapeCut(t: string): number {
  const n = t.length;
  let q = -1;
  for (let i = n - 1; i >= 0 && i >= n - 6; i--) {
    if (t.charCodeAt(i) === 92 /* \ */) {
      q = i;
      break;
    }
  }
  if (q === -1) return n;
  let k = q;
  while (k > 0 && t.charCodeAt(k - 1) === 92) k--;
  if ((q - k + 1) % 2 === 0) return n;
  const len = q + 1 < n && t.charCodeAt(q + 1) === 117 /* u */ ? 6 : 2;
  return q + len > n ? q : n;
}

/**
 * Replaces each placeholder in `value` by its string (`values[k]` for placeholder k), walking
 * objects and arrays without recursion until all are placed, and remembers the pieces of each
 * string made of more than one beside the object (or array) that now holds it.
 * @returns false unless every placeholder was found exactly once.
 */
function putBack(value: unknown, values: ReadonlyArray<{ value: string; pieces: string[] }>): boolean {
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
        const { value: s, pieces } = values[k];
        (v as Record<string | number, unknown>)[key] = s;
        if (pieces.length > 1) rememberPieces(v, key, s, pieces);
      } else if (x !== null && typeof x === 'object') stack.push(x);
    }
  }
  return left === 0;
}
