// A large message serialized in pieces: one that holds a long string value (a 5 MB tool result)
// is written as a series of short JSON strings, so that no copy of the whole serialized message,
// and no flattened copy of it, is ever made. Everything else is serialized whole, as before.

import { rememberedPieces } from './long-strings.js';
import { serialize } from './message.js';

/** String values at least this long (UTF-16 code units) make a message large. */
export const LARGE_STRING_UNITS = 256 * 1024;

/** A long string is written in slices of this many code units (before escaping). */
export const PIECE_UNITS = 64 * 1024;

/**
 * Objects and arrays the search for a long string visits before it stops (the message is then
 * serialized whole). A tool result is `{ content: [{ type, text }] }`: a handful of nodes.
 */
export const MAX_VISITED = 64;

/**
 * A message serialized lazily, piece by piece: concatenated, the pieces are exactly
 * `serialize(msg)` (one line of JSON). Each piece is at most about 6 × `PIECE_UNITS` characters
 * (every code unit escaped as `\uXXXX`) or one small subtree's JSON. Iterate it once.
 */
export interface JsonPieces {
  readonly kind: 'json-pieces';
  /**
   * The least the pieces hold once written, UTF-16 code units: the sum of the long strings'
   * lengths (escaping and the rest of the message only add to it). What a queue counts a message
   * waiting in pieces as, since its exact size is known only once it is written.
   */
  readonly units: number;
  [Symbol.iterator](): Iterator<string>;
}

/** A serialized JSON-RPC message: one string, or pieces when it is large. */
export type JsonBody = string | JsonPieces;

/** Thresholds of `serializeBody`, for tests; the defaults are the constants above. */
export interface PieceOptions {
  /** String length (UTF-16 code units) from which a message is large. */
  largeUnits?: number;
  /** Slice length of a long string, UTF-16 code units. */
  pieceUnits?: number;
}

/**
 * Serializes a message: as one string (`serialize`), unless a string value of at least
 * `LARGE_STRING_UNITS` code units is found within the first `MAX_VISITED` objects and arrays;
 * then as `JsonPieces`. Values JSON.stringify drops or nulls (undefined, functions, symbols) are
 * dropped or nulled the same way; an object with `toJSON` is serialized whole.
 * @see RFC 8259 §7 (strings); ECMA-262 §25.5.2 (JSON.stringify, well-formed: lone surrogates escaped)
 */
export function serializeBody(msg: unknown, opts: PieceOptions = {}): JsonBody {
  const largeUnits = opts.largeUnits ?? LARGE_STRING_UNITS;
  // The common case first, allocating nothing: no long string within the budget.
  visitsLeft = MAX_VISITED;
  if (!hasLong(msg, largeUnits)) return serialize(msg);
  const onPath = new Set<object>();
  visitsLeft = MAX_VISITED;
  longUnits = 0;
  markPath(msg, largeUnits, onPath);
  const pieceUnits = Math.max(2, opts.pieceUnits ?? PIECE_UNITS);
  return {
    kind: 'json-pieces',
    units: longUnits,
    [Symbol.iterator]: () => piecesOf(msg, onPath, largeUnits, pieceUnits),
  };
}

/** The whole text of a body (joins pieces; for callers that must have one string). */
export function bodyText(body: JsonBody): string {
  return typeof body === 'string' ? body : [...body].join('');
}

/** Objects and arrays the current search may still visit (the searches are synchronous). */
let visitsLeft = 0;

/** The lengths of the long strings `markPath` found so far, UTF-16 code units. */
let longUnits = 0;

/** True when `v` holds a string of at least `largeUnits` within the visits left. */
function hasLong(v: unknown, largeUnits: number): boolean {
  if (visitsLeft < 0) return false;
  if (typeof v === 'string') return v.length >= largeUnits;
  if (v === null || typeof v !== 'object') return false;
  if (--visitsLeft < 0) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (hasLong(v[i], largeUnits)) return true;
    return false;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  // for-in: no key array made. An inherited enumerable key can only make a message take the
  // pieces path, which writes own keys only, as JSON.stringify does.
  for (const k in v) if (hasLong((v as Record<string, unknown>)[k], largeUnits)) return true;
  return false;
}

/** Puts in `onPath` each object or array on the way to a long string (the same walk and budget as `hasLong`) and adds each long string's length to `longUnits`; true when `v` holds one. */
function markPath(v: unknown, largeUnits: number, onPath: Set<object>): boolean {
  if (visitsLeft < 0) return false;
  if (typeof v === 'string') {
    if (v.length < largeUnits) return false;
    longUnits += v.length;
    return true;
  }
  if (v === null || typeof v !== 'object') return false;
  if (--visitsLeft < 0) return false;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  let found = false;
  if (Array.isArray(v)) {
    for (const x of v) if (markPath(x, largeUnits, onPath)) found = true;
  } else {
    for (const k of Object.keys(v)) if (markPath((v as Record<string, unknown>)[k], largeUnits, onPath)) found = true;
  }
  if (found) onPath.add(v);
  return found;
}

/** JSON.stringify writes these as null in an array and leaves them out of an object. */
function dropped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function* piecesOf(v: unknown, onPath: Set<object>, largeUnits: number, pieceUnits: number): Generator<string, void, undefined> {
  if (typeof v === 'string' && v.length >= largeUnits) {
    yield* stringPieces(v, pieceUnits);
    return;
  }
  if (v === null || typeof v !== 'object' || !onPath.has(v)) {
    yield serialize(v);
    return;
  }
  if (Array.isArray(v)) {
    yield '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ',';
      const x: unknown = v[i];
      if (dropped(x)) yield 'null';
      else yield* memberPieces(v, i, x, onPath, largeUnits, pieceUnits);
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (dropped(x)) continue;
    yield `${first ? '' : ','}${JSON.stringify(k)}:`;
    first = false;
    yield* memberPieces(v, k, x, onPath, largeUnits, pieceUnits);
  }
  yield '}';
}

/** The pieces of `holder[key]` (`x`): a long string remembered in pieces goes out by them, anything else by `piecesOf`. */
function memberPieces(
  holder: object,
  key: string | number,
  x: unknown,
  onPath: Set<object>,
  largeUnits: number,
  pieceUnits: number,
): Generator<string, void, undefined> {
  if (typeof x === 'string' && x.length >= largeUnits) {
    const pieces = rememberedPieces(holder, key, x);
    if (pieces !== undefined) return rememberedStringPieces(pieces, pieceUnits);
  }
  return piecesOf(x, onPath, largeUnits, pieceUnits);
}

/** A character JSON.stringify escapes (or may: any surrogate, so that a lone one is escaped as it would be). */
// eslint-disable-next-line no-control-regex -- the controls are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A long string as JSON, in slices. A slice never ends between a high and a low surrogate, so
 * each pair is escaped (or kept) exactly as JSON.stringify does for the whole string.
 */
function* stringPieces(s: string, pieceUnits: number): Generator<string, void, undefined> {
  yield '"';
  yield* stringContent(s, pieceUnits);
  yield '"';
}

/** The inside of `stringPieces`: the slices of `s`, each escaped when it needs it. */
function* stringContent(s: string, pieceUnits: number): Generator<string, void, undefined> {
  // Most text needs no escape: then the slice is its own JSON, with no copy made.
  for (const slice of pairSafeSlices(s, pieceUnits)) yield NEEDS_ESCAPE.test(slice) ? JSON.stringify(slice).slice(1, -1) : slice;
}

/**
 * `s` in consecutive slices of at most `units` UTF-16 units (one fewer where a slice would end
 * between a high and a low surrogate), so that each slice can be escaped or encoded to UTF-8 on
 * its own exactly as the whole string would be.
 * @see RFC 3629 §3 (UTF-8 encodes a pair as one four-byte sequence)
 */
export function* pairSafeSlices(s: string, units: number): Generator<string, void, undefined> {
  for (let i = 0; i < s.length;) {
    let end = Math.min(s.length, i + units);
    if (end < s.length) {
      const c = s.charCodeAt(end - 1);
      if (c >= 0xd800 && c <= 0xdbff) end--;
    }
    yield s.slice(i, end);
    i = end;
  }
}

/**
 * A long string as JSON from the pieces it was decoded in (`rememberedPieces`), so that it is
 * never flattened into one copy: each piece escaped as `stringPieces` escapes a slice, a piece
 * longer than `pieceUnits` sliced as it is. A high surrogate that ends a piece is carried to the
 * next, so that a pair split between two pieces is kept (or escaped) as JSON.stringify does for
 * the whole string.
 */
function* rememberedStringPieces(pieces: readonly string[], pieceUnits: number): Generator<string, void, undefined> {
  yield '"';
  let carry = '';
  for (let k = 0; k < pieces.length; k++) {
    let p = carry + pieces[k];
    carry = '';
    if (k < pieces.length - 1) {
      const c = p.charCodeAt(p.length - 1);
      if (c >= 0xd800 && c <= 0xdbff) {
        carry = p.slice(-1);
        p = p.slice(0, -1);
      }
    }
    yield* stringContent(p, pieceUnits);
  }
  yield '"';
}
