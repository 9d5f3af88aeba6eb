// The JSON-RPC 2.0 message model shared by every dialect, and the one place bodies are parsed.

import { randomBytes } from 'node:crypto';
import { SwitchyardError, type RpcErrorObject } from './errors.js';

/**
 * A JSON-RPC request id: a string or an integer (JSON-RPC 2.0 §4; MCP basic#requests: never null).
 * Integers outside Number's safe range are kept exactly as `bigint`.
 */
export type RequestId = string | number | bigint;

/** Any JSON value as parsed from the wire. */
export type Json = null | boolean | number | string | bigint | Json[] | { [k: string]: Json };

/** A plain JSON object. */
export type JsonObject = { [k: string]: unknown };

/**
 * A JSON Schema document (draft 2020-12) as parsed from one of the package's JSON files. The
 * exported schema constants have this type, not a type query of the JSON file itself, so that the
 * shipped declarations import no JSON module: a consumer on `module: Node16` without
 * `resolveJsonModule` could not type-check them (`test/regressions/library-types-node16.test.ts`).
 */
export interface JsonSchemaDocument {
  readonly $id?: string;
  readonly [keyword: string]: unknown;
}

/** A JSON-RPC request: has an `id` and expects a response. */
export interface RpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: JsonObject;
}

/** A JSON-RPC notification: no `id`, no response. */
export interface RpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JsonObject;
}

/** A JSON-RPC response carrying `result`. */
export interface RpcResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: JsonObject;
}

/** A JSON-RPC error response; `id` is null only when the request's id could not be read. */
export interface RpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: RpcErrorObject;
}

/** A JSON-RPC response of either kind. */
export type RpcResponse = RpcResultResponse | RpcErrorResponse;

/** Any JSON-RPC message. */
export type RpcMessage = RpcRequest | RpcNotification | RpcResponse;

/** Bounds applied while parsing (limits.ts holds the defaults). */
export interface ParseLimits {
  /** Longest integer literal accepted, in digits (default 64). */
  maxIntegerDigits: number;
  /** Longest string id or progress token, in UTF-8 bytes (default 256). */
  maxIdBytes: number;
  /** Deepest nesting of arrays and objects (default 128). */
  maxJsonDepth: number;
}

/** The result of parsing one HTTP body or stdio line. */
export interface ParsedBody {
  /** The parsed value (object or array). */
  value: unknown;
  /** True when the body was a JSON array (a batch). */
  batch: boolean;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** What the scanner found out about a body beyond what `JSON.parse` keeps. */
interface ScanResult {
  /** Raw texts of integer literals over 15 digits at a message's `id` or `progressToken`, in order. */
  big: string[] | null;
  /** Ordinals (among the body's message objects) whose `id` literal has a fraction or exponent. */
  badIds: number[] | null;
  /** Ordinals whose `params._meta.progressToken` literal has a fraction or exponent. */
  badTokens: number[] | null;
}

// What the value after the current `:` is, for the members the scanner follows.
const NONE = 0;
const ID = 1;
const TOKEN = 2;
const PARAMS = 3;
const META = 4;

/**
 * True when the string at `start..end` (the indexes of its quotes) is the key `name`. Keys
 * written with escapes (`"i\u0064"`) are decoded; only short keys are looked at, so the cost
 * stays bounded per key.
 */
function keyIs(text: string, start: number, end: number, name: string): boolean {
  const len = end - start - 1;
  if (len === name.length) return text.startsWith(name, start + 1);
  // The longest escaped spelling is six characters per letter (`\u0069`), and an escaped
  // spelling starts with the first letter or with an escape.
  if (len < name.length || len > 6 * name.length) return false;
  const first = text.charCodeAt(start + 1);
  if (first !== 92 /* \ */ && first !== name.charCodeAt(0)) return false;
  for (let k = start + 1; k < end; k++) {
    if (text.charCodeAt(k) === 92 /* \ */) {
      try {
        return JSON.parse(text.slice(start, end + 1)) === name;
      } catch {
        return false;
      }
    }
  }
  return false;
}

/**
 * Scans JSON text for number literals, in one pass without allocation per character:
 * - refuses any literal whose integer part has more than `maxIntegerDigits` digits;
 * - follows each message object (the root object, or each object element of a root array) and
 *   its `id` and `params._meta.progressToken` members, keys written with escapes included;
 * - records the raw text of their integer literals over 15 digits (so that values beyond 2^53
 *   keep their exact value), and which of them are written with a fraction or an exponent
 *   (`1.0`, `1.0000000000000001`, `-1e-400`, `1e2`): `JSON.parse` would turn those into
 *   integers (1, 1, -0, 100), but they are not integer literals (RFC 8259 §6 `int`).
 * @returns what was found, or null when nothing was (the common case).
 * @throws SwitchyardError SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 */
function scanNumbers(text: string, maxDigits: number, maxDepth: number): ScanResult | null {
  let found: ScanResult | null = null;
  let depth = 0;
  let lastStringStart = -1;
  let lastStringEnd = -1;
  // Depth of a message object's members: 1 for a root object, 2 for the elements of a batch.
  let msgDepth = 1;
  let ordinal = -1;
  let inParams = false;
  let inMeta = false;
  let pending = NONE;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Jump to the closing quote with indexOf (strings are most of a large message): a quote
      // closes the string unless an odd number of backslashes precedes it.
      lastStringStart = i;
      let j = text.indexOf('"', i + 1);
      while (j > 0) {
        let k = j - 1;
        while (text.charCodeAt(k) === 92 /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (j < 0) return found; // unterminated: JSON.parse refuses it
      lastStringEnd = j;
      i = j;
      continue;
    }
    if (c === 58 /* : */) {
      pending = NONE;
      if (depth === msgDepth) {
        if (keyIs(text, lastStringStart, lastStringEnd, 'id')) pending = ID;
        else if (keyIs(text, lastStringStart, lastStringEnd, 'params')) pending = PARAMS;
      } else if (inMeta && depth === msgDepth + 2) {
        if (keyIs(text, lastStringStart, lastStringEnd, 'progressToken')) pending = TOKEN;
      } else if (inParams && depth === msgDepth + 1) {
        if (keyIs(text, lastStringStart, lastStringEnd, '_meta')) pending = META;
      }
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i;
      if (c === 45) i++;
      let digits = 0;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d < 48 || d > 57) break;
        digits++;
        i++;
      }
      if (digits > maxDigits) throw new SwitchyardError('SWY_ERR_REQ_INT_TOO_LONG', { detail: `${digits} digits, limit ${maxDigits}` });
      // Fraction and exponent: not integer digits, and not part of an integer literal.
      const intEnd = i;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) i++;
        else break;
      }
      if ((pending === ID || pending === TOKEN) && (i > intEnd || digits > 15)) {
        found ??= { big: null, badIds: null, badTokens: null };
        if (i === intEnd) (found.big ??= []).push(text.slice(start, i));
        else if (pending === ID) (found.badIds ??= []).push(ordinal);
        else (found.badTokens ??= []).push(ordinal);
      }
      pending = NONE;
      i--;
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      // Bounded nesting: deeper values would exhaust the stack of JSON.stringify downstream.
      if (++depth > maxDepth) throw new SwitchyardError('SWY_ERR_REQ_TOO_DEEP', { detail: `limit ${maxDepth}` });
      if (depth === 1) msgDepth = c === 91 ? 2 : 1;
      if (c === 123) {
        if (depth === msgDepth) {
          ordinal++;
          inParams = false;
          inMeta = false;
        } else if (pending === PARAMS && depth === msgDepth + 1) inParams = true;
        else if (pending === META && depth === msgDepth + 2) inMeta = true;
      }
      pending = NONE;
    } else if (c === 125 || c === 93) {
      if (depth === msgDepth + 2) inMeta = false;
      else if (depth === msgDepth + 1) inParams = false;
      depth--;
      pending = NONE;
    } else if (c === 44 /* , */) pending = NONE;
  }
  return found;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8KeepingBom = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes a body as UTF-8, refusing invalid sequences (RFC 8259 §8.1: JSON text is UTF-8). A
 * leading byte order mark is dropped (a parser MAY ignore it, §8.1) unless `keepBom` is true,
 * for bytes from inside a body (a string value may begin with U+FEFF).
 * @throws SwitchyardError SWY_ERR_REQ_PARSE
 */
export function decodeUtf8(bytes: Uint8Array, keepBom = false): string {
  try {
    return (keepBom ? utf8KeepingBom : utf8).decode(bytes);
  } catch (cause) {
    throw new SwitchyardError('SWY_ERR_REQ_PARSE', { detail: 'body is not valid UTF-8', cause });
  }
}

/**
 * Parses one body (HTTP POST or stdio line) into a JSON value, enforcing the integer-literal
 * bound before `JSON.parse` sees it. Big integer ids are restored exactly as `bigint`; an `id`
 * or `progressToken` written with a fraction or exponent becomes NaN, so that `classify`
 * refuses it.
 * @param text UTF-8 decoded body.
 * @throws SwitchyardError SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP, SWY_ERR_REQ_PARSE
 */
export function parseBody(text: string, limits: ParseLimits): ParsedBody {
  const found = scanNumbers(text, limits.maxIntegerDigits, limits.maxJsonDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new SwitchyardError('SWY_ERR_REQ_PARSE', { cause });
  }
  if (found) {
    if (found.big) restoreBigIds(value, found.big);
    if (found.badIds || found.badTokens) markNonIntegers(value, found);
  }
  return { value, batch: Array.isArray(value) };
}

/**
 * Replaces an `id` or `progressToken` that was written with a fraction or exponent by NaN,
 * which no id check accepts: `classify` then refuses it (SWY_ERR_REQ_BAD_ID with id null,
 * SWY_ERR_REQ_BAD_PROGRESS_TOKEN) instead of taking `1.0` for the integer 1.
 */
function markNonIntegers(value: unknown, found: ScanResult): void {
  const messages: JsonObject[] = [];
  for (const m of Array.isArray(value) ? value : [value]) if (m && typeof m === 'object' && !Array.isArray(m)) messages.push(m as JsonObject);
  for (const k of found.badIds ?? []) {
    const m = messages[k];
    if (m && typeof m.id === 'number') m.id = NaN;
  }
  for (const k of found.badTokens ?? []) {
    const meta = (messages[k]?.params as JsonObject | undefined)?._meta as JsonObject | undefined;
    if (meta && typeof meta === 'object' && typeof meta.progressToken === 'number') meta.progressToken = NaN;
  }
}

function restoreBigIds(value: unknown, raws: string[]): void {
  const byValue = new Map<number, string>();
  for (const raw of raws) if (/^-?\d+$/.test(raw)) byValue.set(Number(raw), raw);
  const restore = (o: JsonObject, k: string) => {
    const v = o[k];
    if (typeof v === 'number' && !Number.isSafeInteger(v)) {
      const raw = byValue.get(v);
      if (raw !== undefined) o[k] = BigInt(raw);
    }
  };
  const fix = (m: unknown) => {
    if (m && typeof m === 'object' && !Array.isArray(m)) {
      const o = m as JsonObject;
      restore(o, 'id');
      const meta = (o.params as JsonObject | undefined)?._meta;
      if (meta && typeof meta === 'object' && !Array.isArray(meta)) restore(meta as JsonObject, 'progressToken');
    }
  };
  if (Array.isArray(value)) value.forEach(fix);
  else fix(value);
}

function validToken(v: unknown, maxBytes: number): boolean {
  if (typeof v === 'string') return v.length <= maxBytes && Buffer.byteLength(v, 'utf8') <= maxBytes;
  if (typeof v === 'bigint') return v >= INT64_MIN && v <= INT64_MAX;
  // Integers beyond 2^53 arrive as bigint (parseBody restores them exactly); a number here that
  // is not a safe integer is fractional or written in a form we cannot hold exactly.
  if (typeof v === 'number') return Number.isSafeInteger(v);
  return false;
}

/** SWY_ERR_REQ_BAD_ID, its message naming the bound in force (`maxIdBytes`), not the default's. */
function badId(limits: ParseLimits): SwitchyardError {
  return new SwitchyardError('SWY_ERR_REQ_BAD_ID', { detail: `a string id is at most ${limits.maxIdBytes} bytes` });
}

/** What a classified message is. */
export type MessageKind = 'request' | 'notification' | 'response';

/**
 * Checks that a parsed value is one JSON-RPC 2.0 message and says which kind.
 * Ids must be strings of at most `maxIdBytes` or integers in the int64 range, written as
 * integer literals (`parseBody` marks `1.0`, `1e2` and `-1e-400`); a bad id is refused with id
 * null (the id cannot be echoed). A `progressToken` outside the same bounds is
 * -32602 with the request's id.
 * @see MCP 2025-11-25 basic#requests (id: string or integer, not null); JSON-RPC 2.0 §4
 * @throws SwitchyardError SWY_ERR_REQ_INVALID, SWY_ERR_REQ_BAD_ID, SWY_ERR_REQ_BAD_PROGRESS_TOKEN
 */
export function classify(value: unknown, limits: ParseLimits): MessageKind {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new SwitchyardError('SWY_ERR_REQ_INVALID');
  const m = value as JsonObject;
  if (m.jsonrpc !== '2.0') throw new SwitchyardError('SWY_ERR_REQ_INVALID');
  const hasId = 'id' in m;
  if (typeof m.method === 'string') {
    if (m.params !== undefined && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))) {
      if (hasId && validToken(m.id, limits.maxIdBytes)) {
        throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'params must be an object' });
      }
      throw new SwitchyardError('SWY_ERR_REQ_INVALID');
    }
    if (!hasId) return 'notification';
    if (!validToken(m.id, limits.maxIdBytes)) throw badId(limits);
    const meta = (m.params as JsonObject | undefined)?._meta as JsonObject | undefined;
    if (meta && typeof meta === 'object' && 'progressToken' in meta && !validToken(meta.progressToken, limits.maxIdBytes)) {
      throw new SwitchyardError('SWY_ERR_REQ_BAD_PROGRESS_TOKEN', { detail: `a string token is at most ${limits.maxIdBytes} bytes` });
    }
    return 'request';
  }
  if (hasId && ('result' in m || 'error' in m) && !('method' in m)) {
    if (m.id !== null && !validToken(m.id, limits.maxIdBytes)) throw badId(limits);
    const shape = responseShapeFault(m);
    if (shape !== undefined) throw new SwitchyardError('SWY_ERR_REQ_INVALID', { detail: shape });
    return 'response';
  }
  throw new SwitchyardError('SWY_ERR_REQ_INVALID');
}

/**
 * What makes a response unfit, or undefined when it is one: a result that is not an object, an
 * error that is not an object with an integer `code` and a string `message`, or both at once.
 * Such an answer to a server request was handed on as it came (a string, a code `"x"`) to the
 * upstream, which dropped it and left the call waiting (found by a trial).
 * @see JSON-RPC 2.0 §5, §5.1; MCP basic (JSONRPCResultResponse: `result` is a Result object; JSONRPCErrorResponse)
 */
function responseShapeFault(m: JsonObject): string | undefined {
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if ('result' in m && 'error' in m) return 'a response carries result or error, not both';
  if ('result' in m) return isObject(m.result) ? undefined : 'result must be an object';
  const e = m.error as JsonObject;
  const integer = (v: unknown) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';
  return isObject(e) && integer(e.code) && typeof e.message === 'string' ? undefined : 'error must be an object with an integer code and a string message';
}

/** The id of a value if it looks like a request with a valid id, else null (for error replies). */
export function idOf(value: unknown, limits: ParseLimits): RequestId | null {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const id = (value as JsonObject).id;
    if (validToken(id, limits.maxIdBytes)) return id as RequestId;
  }
  return null;
}

/**
 * Serializes a message to one line of JSON (no newlines, so it fits one SSE `data:` line and one
 * stdio line). `bigint` values are written as exact integer literals. A bigint is first written
 * as a marker string holding a nonce drawn for this call, then turned into its literal; a string
 * of the message can never equal a marker (it would have to guess the nonce), so no string is
 * ever turned into a number.
 */
export function serialize(msg: unknown): string {
  // Fast path: a replacer function takes V8 off its fast JSON.stringify path, and bigint values
  // (ids beyond 2^53) are rare; JSON.stringify throws a TypeError on the first one it meets.
  try {
    return JSON.stringify(msg);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
  }
  const mark = `swy-big-${randomBytes(12).toString('hex')}:`;
  const s = JSON.stringify(msg, (_k: string, v: unknown) => (typeof v === 'bigint' ? mark + v.toString() : v));
  return s.replace(new RegExp(`"${mark}(-?\\d+)"`, 'g'), '$1');
}

/** Builds an error response. */
export function errorResponse(id: RequestId | null, error: RpcErrorObject): RpcErrorResponse {
  return { jsonrpc: '2.0', id, error };
}

/** Builds a result response. */
export function resultResponse(id: RequestId, result: JsonObject): RpcResultResponse {
  return { jsonrpc: '2.0', id, result };
}

/** A key that identifies an id across string/number/bigint (so `1` and `"1"` differ). */
export function idKey(id: RequestId): string {
  return typeof id === 'string' ? `s:${id}` : `n:${id.toString()}`;
}

/** True for a JSON object: not null, not an array (RFC 8259 §4). */
export function isJsonObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A JSON value as text for a message or a log line: a string as it is, anything else as JSON
 * (so an object a peer sent where a string belongs reads as itself, not `[object Object]`).
 * @param value any JSON value (or undefined, which reads as the empty string).
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : (JSON.stringify(value) ?? '');
}
