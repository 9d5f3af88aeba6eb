// What an upstream's answer to a request must be before anything of ours reads it: a result
// that is a JSON object (a list's items objects that carry their names), or a JSON-RPC error
// object. Anything else is the upstream's protocol error (SWY_ERR_UPSTREAM_PROTOCOL), so that
// no era's encoder, the aggregate or the annotation reader is handed a string, null or junk.

import { PeerRpcError, SwitchyardError, type RpcErrorObject } from './errors.js';
import { isJsonObject as isObject, type JsonObject } from './message.js';

/** Each list method: the member that holds its items, and the string field that names an item. @see 2025-11-25 server/tools, server/prompts, server/resources */
const LISTS: Readonly<Record<string, readonly [string, string]>> = {
  'tools/list': ['tools', 'name'],
  'prompts/list': ['prompts', 'name'],
  'resources/list': ['resources', 'uri'],
  'resources/templates/list': ['resourceTemplates', 'uriTemplate'],
};

/** Characters of a bad answer quoted in the error's detail at most. */
const QUOTE_CHARS = 120;

/**
 * A short excerpt of a bad value for an error's detail, at most QUOTE_CHARS characters (and an
 * ellipsis): a long string is cut before it is quoted, so a large answer is never copied whole,
 * and a value JSON cannot write (a bigint inside) is named by its type.
 */
const quote = (v: unknown): string => {
  let s: string;
  if (v === undefined) s = 'nothing';
  else if (typeof v === 'string') s = JSON.stringify(v.length > QUOTE_CHARS ? v.slice(0, QUOTE_CHARS) : v);
  else if (typeof v === 'bigint') s = v.toString();
  else if (v !== null && typeof v === 'object') s = Array.isArray(v) ? `an array of ${v.length}` : 'an object';
  else s = typeof v === 'number' || typeof v === 'boolean' ? String(v) : v === null ? 'null' : typeof v;
  return s.length > QUOTE_CHARS ? `${s.slice(0, QUOTE_CHARS)}…` : s;
};

/**
 * The result of the upstream's answer to `method`, checked: a JSON object; for a list method its
 * items member an array of objects, each with its name (`name`, `uri` or `uriTemplate`) a string.
 * Nothing else of the result is checked here (strict mode checks the rest against the schema: docs/strict.md, "Upstreams").
 * @param raw the response's `result` member as it arrived (undefined when it had none)
 * @throws SwitchyardError SWY_ERR_UPSTREAM_PROTOCOL, naming what was wrong
 * @see JSON-RPC 2.0 §5 (result REQUIRED on success); MCP basic#responses (a result is an object)
 */
export function upstreamResult(method: string, raw: unknown): JsonObject {
  if (!isObject(raw)) throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${method}: a result that is not an object: ${quote(raw)}` });
  const list = LISTS[method];
  if (list === undefined) return raw;
  const [member, field] = list;
  const items = raw[member];
  if (!Array.isArray(items)) throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${method}: ${member} is not an array: ${quote(items)}` });
  for (let i = 0; i < items.length; i++) {
    const item: unknown = items[i];
    if (!isObject(item) || typeof item[field] !== 'string')
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${method}: ${member}[${i}] is not an object with a string ${field}: ${quote(item)}` });
  }
  return raw;
}

/**
 * The upstream's error answer as it reaches the client: a PeerRpcError when `raw` is a JSON-RPC
 * error object (an integer `code`, a string `message`, any `data`), else the upstream's protocol
 * error.
 * @param raw the response's `error` member as it arrived
 * @see JSON-RPC 2.0 §5.1 (code: an integer; message: a string)
 */
export function upstreamError(raw: unknown): PeerRpcError | SwitchyardError {
  if (isObject(raw) && Number.isInteger(raw.code) && typeof raw.message === 'string') return new PeerRpcError(raw as unknown as RpcErrorObject);
  return new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `an error that is not a JSON-RPC error object: ${quote(raw)}` });
}

/** Characters of an invalid response's error message quoted for the operator at most. */
const OPERATOR_QUOTE_CHARS = 200;

/**
 * Why upstream message `m`, matched by its id to a request of ours, is no valid response, or
 * undefined when it is one: it carries both `result` and `error`, or neither. Such a message is
 * the upstream's protocol error, never read as its result or as its error (which of the two it
 * meant cannot be known). The client's message says which in Switchyard's words; the operator's
 * (`operatorMessage`, for the log) adds the error member's code and the start of its message,
 * which are the upstream's words. Two `in` checks on the way of every response, nothing more.
 * @param m the response as it arrived (a JSON object without `method`).
 * @param method the request it answers, for the message (`tools/call: …`); absent: not named.
 * @returns SWY_ERR_UPSTREAM_PROTOCOL, or undefined for a response with exactly one of the two.
 * @see JSON-RPC 2.0 §5 (Response object: "Either the result member or error member MUST be
 *   included, but both members MUST NOT be included")
 */
export function invalidResponse(m: JsonObject, method?: string): SwitchyardError | undefined {
  const hasResult = 'result' in m;
  // JSON-RPC 2.0 §5: exactly one of result and error.
  if (hasResult !== 'error' in m) return undefined;
  const detail = `${method !== undefined ? `${method}: ` : ''}a response with ${hasResult ? 'both result and error' : 'neither result nor error'} (JSON-RPC 2.0 §5)`;
  if (!hasResult) return new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail });
  const e = isObject(m.error) ? m.error : {};
  const text = typeof e.message === 'string' ? e.message : '';
  const said = `error code ${quote(e.code)}, message ${JSON.stringify(text.length > OPERATOR_QUOTE_CHARS ? `${text.slice(0, OPERATOR_QUOTE_CHARS)}…` : text)}`;
  return new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail, operatorDetail: `${detail}; its ${said}` });
}

/** The one revision whose peers may send JSON-RPC batches: 2024-11-05 defined none, 2025-06-18 removed them. */
export const BATCH_REVISION = '2025-03-26';

/** Messages an upstream sent inside a JSON array (a batch), remembered by identity until collected. */
const BATCHED = new WeakSet<object>();

/**
 * The messages of one JSON value an upstream sent as one message (a POST's JSON body, an SSE
 * event's data, a stdio line): the value itself when it is an object, else, for an array, each of
 * its members that is an object, each remembered as having come in a batch ({@link isBatched}).
 * Anything else gives none. Who reads a message decides what a batched one may be
 * ({@link batchedResponse}, {@link batchAllowed}).
 * @see JSON-RPC 2.0 §6 (Batch)
 */
export function upstreamMessages(value: unknown): JsonObject[] {
  if (!Array.isArray(value)) return isObject(value) ? [value] : [];
  const out: JsonObject[] = [];
  for (const m of value as unknown[])
    if (isObject(m)) {
      BATCHED.add(m);
      out.push(m);
    }
  return out;
}

/** True when upstream message `m` came inside a JSON array (see {@link upstreamMessages}). */
export function isBatched(m: JsonObject): boolean {
  return BATCHED.has(m);
}

/**
 * True when a request or notification an upstream sent inside a batch may be taken: only from an
 * upstream speaking 2025-03-26, whose server may batch the requests and notifications it sends on
 * its own (on an SSE stream, on stdio). A response in a batch is never taken ({@link batchedResponse}).
 * @param revision the revision the upstream speaks (undefined before its handshake settled one: no batches then)
 * @see 2025-03-26 basic/transports#sending-messages-to-the-server ("These requests and
 *   notifications MAY be batched"); 2025-06-18 changelog (JSON-RPC batching removed)
 */
export function batchAllowed(revision: string | undefined): boolean {
  return revision === BATCH_REVISION;
}

/**
 * The error of a request of ours answered by a response inside a JSON array (a batch): the
 * upstream's protocol error, in every era. Switchyard never sends a batch upstream, and a batch is
 * answered only to a batch; 2025-03-26's "responses MAY be batched" concerns a POST that carried
 * several requests, which Switchyard never sends (docs/upstreams.md, "Batches from an upstream").
 * @param method the request it answered, for the message (`tools/call: …`)
 * @see JSON-RPC 2.0 §6 (the server answers a batch with an array; a single request with one Response object)
 */
export function batchedResponse(method?: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', {
    detail: `${method !== undefined ? `${method}: ` : ''}a response inside a JSON array (a batch) to a request sent alone (JSON-RPC 2.0 §6)`,
  });
}
