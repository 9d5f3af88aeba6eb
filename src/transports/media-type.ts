// Strict Content-Type parsing and Accept matching (RFC 9110 media types).

import { BoundedMemo } from '../core/memo.js';

/**
 * A parsed media type. `type` and `subtype` are lower-cased (RFC 9110 §8.3.1: case-insensitive);
 * parameter names are lower-cased, values kept as sent with quoted-strings unquoted.
 */
export interface MediaType {
  type: string;
  subtype: string;
  /** `type/subtype`, lower-cased. */
  essence: string;
  parameters: ReadonlyMap<string, string>;
}

// RFC 9110 §5.6.2 tchar.
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) TCHAR[c] = 1;
for (let c = 65; c <= 90; c++) TCHAR[c] = 1;
for (let c = 97; c <= 122; c++) TCHAR[c] = 1;

const isTchar = (c: number) => c < 128 && TCHAR[c] === 1;
const isOws = (c: number) => c === 32 || c === 9;

/** Longest header value parsed, characters; longer values are refused rather than scanned. */
export const MAX_MEDIA_TYPE_LENGTH = 1024;

interface Cursor {
  s: string;
  i: number;
  end: number;
}

function token(cur: Cursor): string | null {
  const start = cur.i;
  while (cur.i < cur.end && isTchar(cur.s.charCodeAt(cur.i))) cur.i++;
  return cur.i > start ? cur.s.slice(start, cur.i) : null;
}

function skipOws(cur: Cursor): void {
  while (cur.i < cur.end && isOws(cur.s.charCodeAt(cur.i))) cur.i++;
}

/** RFC 9110 §5.6.4 quoted-string, cursor on the opening DQUOTE; returns the unquoted value. */
function quotedString(cur: Cursor): string | null {
  cur.i++;
  let out = '';
  while (cur.i < cur.end) {
    const c = cur.s.charCodeAt(cur.i++);
    if (c === 34 /* " */) return out;
    if (c === 92 /* \ */) {
      if (cur.i >= cur.end) return null;
      const q = cur.s.charCodeAt(cur.i++);
      // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
      if (!(q === 9 || (q >= 32 && q <= 126) || (q >= 0x80 && q <= 0xff))) return null;
      out += String.fromCharCode(q);
      continue;
    }
    // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
    if (!(c === 9 || c === 32 || c === 33 || (c >= 35 && c <= 91) || (c >= 93 && c <= 126) || (c >= 0x80 && c <= 0xff))) return null;
    out += String.fromCharCode(c);
  }
  return null;
}

/**
 * Parses `type "/" subtype parameters` from `cur.i` up to `cur.end` (or a top-level comma when
 * `stopAtComma`), requiring the whole range to be consumed. Null when malformed.
 */
function parseRange(cur: Cursor, stopAtComma: boolean): MediaType | null {
  skipOws(cur);
  const type = token(cur);
  if (type === null || cur.s.charCodeAt(cur.i) !== 47 /* / */) return null;
  cur.i++;
  const subtype = token(cur);
  if (subtype === null) return null;
  const parameters = new Map<string, string>();
  for (;;) {
    skipOws(cur);
    if (cur.i >= cur.end || (stopAtComma && cur.s.charCodeAt(cur.i) === 44)) break;
    if (cur.s.charCodeAt(cur.i) !== 59 /* ; */) return null;
    cur.i++;
    skipOws(cur);
    // RFC 9110 §5.6.6: parameters = *( OWS ";" OWS [ parameter ] ) — an empty one is allowed.
    if (cur.i >= cur.end || cur.s.charCodeAt(cur.i) === 59 || (stopAtComma && cur.s.charCodeAt(cur.i) === 44)) continue;
    const name = token(cur);
    if (name === null || cur.s.charCodeAt(cur.i) !== 61 /* = */) return null;
    cur.i++;
    const value = cur.s.charCodeAt(cur.i) === 34 ? quotedString(cur) : token(cur);
    if (value === null) return null;
    const key = name.toLowerCase();
    // A repeated parameter (two charsets) has no single meaning: refuse the value.
    if (parameters.has(key)) return null;
    parameters.set(key, value);
  }
  const t = type.toLowerCase();
  const st = subtype.toLowerCase();
  return { type: t, subtype: st, essence: `${t}/${st}`, parameters };
}

/**
 * Parses a `Content-Type` value strictly: `type "/" subtype *( OWS ";" OWS [ parameter ] )` with
 * tokens, token or quoted-string parameter values, surrounding OWS allowed. Malformed values
 * (`;`, `a b`, `/`, `,application/json`, empty, a repeated parameter, a list) give null.
 * @returns the media type, or null when absent or malformed.
 * @see RFC 9110 §8.3.1 (media-type), §5.6.6 (parameters), §5.6.2 (token), §5.6.4 (quoted-string)
 */
export function parseMediaType(value: string | undefined): MediaType | null {
  if (value === undefined || value.length > MAX_MEDIA_TYPE_LENGTH) return null;
  const cur: Cursor = { s: value, i: 0, end: value.length };
  const mt = parseRange(cur, false);
  return mt && cur.i === cur.end ? mt : null;
}

/**
 * True for `application/json` with no charset or `charset=utf-8` (any case, quoted or not);
 * other parameters are ignored. False for an absent or malformed value.
 * @see RFC 8259 §8.1 (JSON text is UTF-8), §11 (application/json has no charset parameter)
 */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === 'application/json') return true;
  const mt = parseMediaType(value);
  if (!mt || mt.essence !== 'application/json') return false;
  const charset = mt.parameters.get('charset');
  return charset === undefined || charset.toLowerCase() === 'utf-8';
}

// RFC 9110 §12.4.2 qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
const QVALUE = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/** Most Accept members looked at; the rest of a longer header is ignored. */
export const MAX_ACCEPT_MEMBERS = 64;

/**
 * True when an `Accept` field value admits the media type `type` (`application/json`).
 * - Absent: everything is acceptable (RFC 9110 §12.5.1). Empty: nothing is.
 * - The most specific matching range decides (`type/subtype` over `type/*` over `*` + `/*`); among
 *   equally specific ones the highest weight; `q=0` means "not acceptable".
 * - Members that are malformed (bad syntax, a qvalue outside RFC 9110 §12.4.2, `*` + `/json`) are
 *   skipped, as are members past the first 64. Media-range parameters other than `q` are
 *   ignored when matching: the types we offer carry none.
 * @param type a lower-case `type/subtype`.
 * @see RFC 9110 §12.5.1 (Accept), §12.4.2 (quality values)
 */
export function accepts(accept: string | undefined, type: string): boolean {
  if (accept === undefined) return true;
  const best = rememberedMatch(accept, type);
  return best.specificity >= 0 && best.q > 0;
}

/**
 * True when an `Accept` field value names `type` itself with a weight above 0: a wildcard
 * (`*` + `/*`, `text/*`) or an absent Accept does not count. For requests the spec requires to
 * list a type (a GET stream must list `text/event-stream`), so that a browser navigation,
 * which sends `*` + `/*`, does not open a never-ending stream.
 * @param type a lower-case `type/subtype`.
 * @see 2025-11-25 basic/transports#listening-for-messages-from-the-server (Accept MUST list text/event-stream)
 */
export function acceptsExplicitly(accept: string | undefined, type: string): boolean {
  if (accept === undefined) return false;
  const best = rememberedMatch(accept, type);
  return best.specificity === 2 && best.q > 0;
}

/** Distinct (Accept, type) pairs whose match is remembered; past it the memory is emptied, never grown. */
export const MAX_REMEMBERED_ACCEPTS = 256;
/** Longest Accept value remembered, characters (longer ones are matched each time). */
const MAX_REMEMBERED_ACCEPT_CHARS = 512;
const matches = new BoundedMemo<{ specificity: number; q: number }>(MAX_REMEMBERED_ACCEPTS);

/** `bestMatch`, remembered: clients send the same few Accept values on every request. */
function rememberedMatch(accept: string, type: string): { specificity: number; q: number } {
  if (accept.length > MAX_REMEMBERED_ACCEPT_CHARS) return bestMatch(accept, type);
  return matches.get(`${type} ${accept}`, () => bestMatch(accept, type));
}

/** The most specific Accept member matching `type`, and its weight (specificity -1: none). */
function bestMatch(accept: string, type: string): { specificity: number; q: number } {
  const slash = type.indexOf('/');
  const want = { type: type.slice(0, slash), subtype: type.slice(slash + 1) };
  // Linear in the value, whose size Node's header limit (16 KiB by default) bounds.
  const cur: Cursor = { s: accept, i: 0, end: accept.length };
  let bestSpecificity = -1;
  let bestQ = 0;
  for (let members = 0; cur.i < cur.end && members < MAX_ACCEPT_MEMBERS; members++) {
    const start = cur.i;
    const range = parseRange(cur, true);
    if (range === null) {
      // Skip a malformed member whole: rescan it from its start to its top-level comma.
      cur.i = start;
      skipMember(cur);
    }
    if (cur.i < cur.end) cur.i++; // the comma
    if (range === null) continue;
    const specificity = matchSpecificity(range, want);
    if (specificity < 0) continue;
    const qText = range.parameters.get('q');
    if (qText !== undefined && !QVALUE.test(qText)) continue;
    const q = qText === undefined ? 1 : Number(qText);
    if (specificity > bestSpecificity || (specificity === bestSpecificity && q > bestQ)) {
      bestSpecificity = specificity;
      bestQ = q;
    }
  }
  return { specificity: bestSpecificity, q: bestQ };
}

/** 2 for an exact type, 1 for `type/*`, 0 for `*` + `/*`, -1 when the range does not match (or is `*` + `/x`). */
function matchSpecificity(range: MediaType, want: { type: string; subtype: string }): number {
  if (range.type === '*') return range.subtype === '*' ? 0 : -1;
  if (range.type !== want.type) return -1;
  if (range.subtype === '*') return 1;
  return range.subtype === want.subtype ? 2 : -1;
}

/** Moves the cursor to the next comma outside a quoted-string (or the end). */
function skipMember(cur: Cursor): void {
  let quoted = false;
  while (cur.i < cur.end) {
    const c = cur.s.charCodeAt(cur.i);
    if (quoted) {
      if (c === 92) cur.i++;
      else if (c === 34) quoted = false;
    } else if (c === 34) quoted = true;
    else if (c === 44) return;
    cur.i++;
  }
}
