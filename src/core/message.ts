// The JSON-RPC 2.0 message model shared by every dialect, and the one place bodies are parsed.

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

/**
 * Scans JSON text for number literals: refuses any whose integer part has more than
 * `maxIntegerDigits` digits, and records the raw text of numbers that sit at a key named `id`
 * or `progressToken` (so that ids and tokens beyond 2^53 keep their exact value). Runs in one pass, no allocation per char.
 * @returns raw integer texts of `id` members, in order of appearance, or null when none is big.
 * @throws SwitchyardError SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP
 */
function scanNumbers(text: string, maxDigits: number, maxDepth: number): string[] | null {
  let big: string[] | null = null;
  let depth = 0;
  let lastStringStart = -1;
  let lastStringEnd = -1;
  let keyIsId = false;
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
      if (j < 0) return big; // unterminated: JSON.parse refuses it
      lastStringEnd = j;
      i = j;
      continue;
    }
    if (c === 58 /* : */) {
      const keyLen = lastStringEnd - lastStringStart;
      keyIsId = (keyLen === 3 && text.startsWith('"id"', lastStringStart)) || (keyLen === 14 && text.startsWith('"progressToken"', lastStringStart));
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
      // Skip fraction and exponent; they are not integer digits.
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) i++;
        else break;
      }
      if (keyIsId && digits > 15) (big ??= []).push(text.slice(start, i));
      keyIsId = false;
      i--;
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      // Bounded nesting: deeper values would exhaust the stack of JSON.stringify downstream.
      if (++depth > maxDepth) throw new SwitchyardError('SWY_ERR_REQ_TOO_DEEP', { detail: `limit ${maxDepth}` });
      keyIsId = false;
    } else if (c === 125 || c === 93) {
      depth--;
      keyIsId = false;
    } else if (c === 44 /* , */) keyIsId = false;
  }
  return big;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes a body as UTF-8, refusing invalid sequences (RFC 8259 §8.1: JSON text is UTF-8).
 * @throws SwitchyardError SWY_ERR_REQ_PARSE
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch (cause) {
    throw new SwitchyardError('SWY_ERR_REQ_PARSE', { detail: 'body is not valid UTF-8', cause });
  }
}

/**
 * Parses one body (HTTP POST or stdio line) into a JSON value, enforcing the integer-literal
 * bound before `JSON.parse` sees it. Big integer ids are restored exactly as `bigint`.
 * @param text UTF-8 decoded body.
 * @throws SwitchyardError SWY_ERR_REQ_INT_TOO_LONG, SWY_ERR_REQ_TOO_DEEP, SWY_ERR_REQ_PARSE
 */
export function parseBody(text: string, limits: ParseLimits): ParsedBody {
  const big = scanNumbers(text, limits.maxIntegerDigits, limits.maxJsonDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new SwitchyardError('SWY_ERR_REQ_PARSE', { cause });
  }
  if (big) restoreBigIds(value, big);
  return { value, batch: Array.isArray(value) };
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

/** What a classified message is. */
export type MessageKind = 'request' | 'notification' | 'response';

/**
 * Checks that a parsed value is one JSON-RPC 2.0 message and says which kind.
 * Ids must be strings of at most `maxIdBytes` or integers in the int64 range; a bad id is
 * refused with id null (the id cannot be echoed). A `progressToken` outside the same bounds is
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
    if (!validToken(m.id, limits.maxIdBytes)) throw new SwitchyardError('SWY_ERR_REQ_BAD_ID');
    const meta = (m.params as JsonObject | undefined)?._meta as JsonObject | undefined;
    if (meta && typeof meta === 'object' && 'progressToken' in meta && !validToken(meta.progressToken, limits.maxIdBytes)) {
      throw new SwitchyardError('SWY_ERR_REQ_BAD_PROGRESS_TOKEN');
    }
    return 'request';
  }
  if (hasId && ('result' in m || 'error' in m) && !('method' in m)) {
    if (m.id !== null && !validToken(m.id, limits.maxIdBytes)) throw new SwitchyardError('SWY_ERR_REQ_BAD_ID');
    return 'response';
  }
  throw new SwitchyardError('SWY_ERR_REQ_INVALID');
}

/** The id of a value if it looks like a request with a valid id, else null (for error replies). */
export function idOf(value: unknown, limits: ParseLimits): RequestId | null {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const id = (value as JsonObject).id;
    if (validToken(id, limits.maxIdBytes)) return id as RequestId;
  }
  return null;
}

const BIG_MARK = '\u0000swy-big:';

/**
 * Serializes a message to one line of JSON (no newlines, so it fits one SSE `data:` line and one
 * stdio line). `bigint` values are written as exact integer literals.
 */
export function serialize(msg: unknown): string {
  // Fast path: a replacer function takes V8 off its fast JSON.stringify path, and bigint values
  // (ids beyond 2^53) are rare; JSON.stringify throws a TypeError on the first one it meets.
  try {
    return JSON.stringify(msg);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
  }
  const s = JSON.stringify(msg, bigReplacer);
  return s.includes('swy-big:') ? s.replace(/"\\u0000swy-big:(-?\d+)"/g, '$1') : s;
}

function bigReplacer(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? BIG_MARK + v.toString() : v;
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
