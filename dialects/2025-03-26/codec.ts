// The initialize era's wire rules (2024-11-05 … 2025-11-25): revisions, version negotiation,
// the initialize result, error codes of the era, and the per-revision flags.

import { randomUUID } from 'node:crypto';
import { PeerRpcError, RpcCode, SwitchyardError, toRpcError, type RpcErrorObject } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/message.js';
import type { ServerDescription } from '../../src/core/upstream.js';

export { INITIALIZE_REVISIONS, isInitializeRevision, STREAMABLE_REVISIONS, HTTP_SSE_REVISION } from '../../src/core/versions.js';

/** Per-revision flags: the smaller differences inside the era, each with a test. */
export const FLAGS = {
  /** JSON-RPC batches: 2025-03-26 only (2025-06-18 changelog: removed). */
  batches: (v: string) => v === '2025-03-26',
  /** The SSE priming event (an id and empty data) for clients at 2025-11-25 or later. */
  priming: (v: string) => v >= '2025-11-25',
  /** `mode` on elicitation requests (URL elicitation) from 2025-11-25 on. */
  elicitationMode: (v: string) => v >= '2025-11-25',
} as const;

/**
 * The revision each server-to-client request method first appeared in; a session that
 * negotiated an older revision never receives it.
 * @see 2025-06-18 changelog (elicitation added); 2024-11-05 client/sampling, client/roots
 */
const SERVER_REQUEST_SINCE: Readonly<Record<string, string>> = Object.freeze({
  'sampling/createMessage': '2024-11-05',
  'roots/list': '2024-11-05',
  'elicitation/create': '2025-06-18',
  ping: '2024-11-05',
});

/**
 * The client capabilities a revision added after 2024-11-05, and the revision that defines each:
 * a client of an earlier revision that declares one anyway cannot be sent its requests
 * ({@link eraHasServerRequest}), so upstreams are not told of it.
 * @see 2025-06-18 changelog (elicitation added)
 */
const CLIENT_CAPABILITY_SINCE: Readonly<Record<string, string>> = Object.freeze({
  elicitation: '2025-06-18',
});
/** The server request each capability of {@link CLIENT_CAPABILITY_SINCE} is for. */
const CAPABILITY_REQUEST: Readonly<Record<string, string>> = Object.freeze({ elicitation: 'elicitation/create' });

/**
 * A client's declared capabilities without those its revision does not define (`elicitation`
 * before 2025-06-18): an upstream told of them would offer what needs them (server-everything
 * lists its elicitation tool) and send requests the session refuses (-32601).
 * @param version the negotiated revision (`2024-11-05` for HTTP+SSE clients)
 * @param caps the declared capabilities (`{}` = none)
 * @returns `caps` itself when nothing is removed
 */
export function eraClientCapabilities(version: string, caps: JsonObject): JsonObject {
  let kept: JsonObject | undefined;
  for (const [name, since] of Object.entries(CLIENT_CAPABILITY_SINCE)) {
    if (version >= since || !Object.hasOwn(caps, name)) continue;
    kept ??= { ...caps };
    delete kept[name];
  }
  return kept ?? caps;
}

/** True when a session at revision `version` can receive server request `method`. */
export function eraHasServerRequest(version: string, method: string): boolean {
  const since = SERVER_REQUEST_SINCE[method];
  return since !== undefined && version >= since;
}

/**
 * Server notifications that concern a server request, and the revision that defines each: a
 * session of an earlier revision is not sent them.
 * @see 2025-11-25 client/elicitation#url-mode (notifications/elicitation/complete)
 */
const SERVER_NOTIFICATION_SINCE: Readonly<Record<string, string>> = Object.freeze({
  'notifications/elicitation/complete': '2025-11-25',
});

/** True when a session at revision `version` can receive server notification `method` (of those above). */
export function eraHasServerNotification(version: string, method: string): boolean {
  const since = SERVER_NOTIFICATION_SINCE[method];
  return since !== undefined && version >= since;
}

/** Multi-select enum fields (`type: "array"`) in elicitation forms, from 2025-11-25 on. @see 2025-11-25 client/elicitation#supported-schema-types */
const MULTI_SELECT_SINCE = '2025-11-25';

/** True for a multi-select field (`type: "array"`, 2025-11-25) of an elicitation form. */
function isMultiSelect(field: unknown): boolean {
  return field !== null && typeof field === 'object' && (field as JsonObject).type === 'array';
}

/** The names a form's `requestedSchema` lists as `required`. */
function requiredOf(requestedSchema: unknown): readonly unknown[] {
  const r = (requestedSchema as JsonObject | null | undefined)?.required;
  return Array.isArray(r) ? r : [];
}

/**
 * Why a session at `version` cannot be sent server request `method` with `params`, though the
 * method exists in it; undefined when it can. An elicitation form with a required multi-select
 * field (2025-11-25) has no equivalent before that revision: an older client's
 * PrimitiveSchemaDefinition holds only strings, numbers, booleans and single-select enums, and
 * an answer without the field would not be the answer the server asked for. (An optional
 * multi-select field is left out of the form instead: see {@link encodeServerRequest}.)
 * @see 2025-11-25 client/elicitation#supported-schema-types; 2025-06-18 schema (PrimitiveSchemaDefinition)
 */
export function serverRequestUnfit(version: string, method: string, params: JsonObject): string | undefined {
  if (method !== 'elicitation/create' || version >= MULTI_SELECT_SINCE) return undefined;
  const props = (params.requestedSchema as { properties?: unknown } | undefined)?.properties;
  if (props === null || typeof props !== 'object') return undefined;
  const required = requiredOf(params.requestedSchema);
  for (const [name, field] of Object.entries(props as Record<string, unknown>)) {
    if (isMultiSelect(field) && required.includes(name)) return `required field ${JSON.stringify(name)} is a multi-select, which ${version} forms do not have`;
  }
  return undefined;
}

/**
 * Negotiates a revision: the requested one when it is in `revisions`, else the newest as the
 * counter-offer. @see 2025-11-25 basic/lifecycle#version-negotiation
 */
export function negotiate(requested: unknown, revisions: readonly string[]): string {
  return typeof requested === 'string' && revisions.includes(requested) ? requested : revisions[0];
}

/** The InitializeResult for `version` (2025-11-25 basic/lifecycle#initialization). */
export function initializeResult(version: string, desc: ServerDescription): JsonObject {
  const out: JsonObject = { protocolVersion: version, capabilities: desc.capabilities, serverInfo: desc.serverInfo };
  if (desc.instructions !== undefined) out.instructions = desc.instructions;
  return out;
}

/**
 * Errors toward initialize-era clients, in the era's codes: resource not found is -32002
 * (also when a 2026-07-28 upstream said -32602 with `data.uri`), and a missing client capability
 * (-32021 exists only in 2026-07-28: the gateway's own, or a 2026-07-28 upstream's) is reported as
 * the input-unsupported error (-32602); one that the
 * session's revision does not define (so upstreams were not told of it, {@link eraClientCapabilities})
 * is reported as such, whether the client declared it or not.
 * @param version the session's negotiated revision, when there is one
 * @see 2025-11-25 server/resources#error-handling
 */
export function encodeError(err: unknown, version?: string): RpcErrorObject {
  if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_RESOURCE_NOT_FOUND') return { ...err.toRpcError(), code: -32002 };
  // The gateway's own -32021, or a 2026-07-28 upstream's (its MissingRequiredClientCapabilityError).
  const required =
    err instanceof SwitchyardError && err.code === 'SWY_ERR_MODERN_CAPABILITY'
      ? err.data?.requiredCapabilities
      : err instanceof PeerRpcError && err.rpc.code === RpcCode.MISSING_CLIENT_CAPABILITY
        ? (err.rpc.data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities
        : false;
  if (required !== false) {
    const names = typeof required === 'object' && required !== null ? Object.keys(required).slice(0, 8) : [];
    const absent = version === undefined ? undefined : names.find((n) => CLIENT_CAPABILITY_SINCE[n] !== undefined && version < CLIENT_CAPABILITY_SINCE[n]);
    const detail =
      absent !== undefined
        ? `${CAPABILITY_REQUEST[absent]} does not exist in ${version}`
        : `client did not declare ${names.length > 0 ? names.join(', ').slice(0, 256) : 'a capability the server needs'}`;
    return new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail }).toRpcError();
  }
  const rpc = toRpcError(err);
  if (err instanceof PeerRpcError && rpc.code === -32602 && typeof (rpc.data as { uri?: unknown } | undefined)?.uri === 'string')
    return { ...rpc, code: -32002 };
  return rpc;
}

/**
 * Refusals answered with their catalogue status (and `Retry-After`) when they travel alone as a
 * POST's JSON reply: 429 for a rate limit, a principal's full admission share and a session with
 * too many requests in flight, 503 for a gateway too busy to admit the request and for an upstream
 * with no room for the new upstream session the request needs (`SWY_ERR_SESSION_LIMIT`: its pool's
 * sessions all have subscribers, or an HTTP+SSE upstream's streams hold every place). Each is decided before the request runs, so the
 * request is safe to send again, and an HTTP client, proxy or load balancer can see it and back
 * off or go elsewhere, as it can on the 2026-07-28 door (`statusFor` there).
 */
const HTTP_LEVEL: ReadonlySet<string> = new Set([
  'SWY_ERR_RATE_LIMITED',
  'SWY_ERR_ADMISSION_PRINCIPAL_BUSY',
  'SWY_ERR_ADMISSION_SESSION_BUSY',
  'SWY_ERR_ADMISSION_BUSY',
  'SWY_ERR_SESSION_LIMIT',
]);

/**
 * The HTTP status of an error answer that travels alone as a POST's JSON reply: 429 for a rate
 * limit, a principal's full admission share or a session's full in-flight bound, 503 for
 * `SWY_ERR_ADMISSION_BUSY`, `SWY_ERR_SESSION_LIMIT` and a drain's refusal of a request before it
 * ran (`SWY_ERR_ADMISSION_SHUTTING_DOWN` without detail; one it cut stays in-band) (each with its
 * `Retry-After`: the error's headers); undefined (the exchange's 200) for every other error, and
 * wherever the reply shares a stream or a batch (its status is already sent or belongs to several
 * answers). The 2025 revisions leave the status of a request's error answer open; these are the
 * refusals RFC 9110 and RFC 6585 give a status of their own (docs/config.md, "Admission errors are HTTP 503").
 * @see RFC 6585 §4 (429 Too Many Requests); RFC 9110 §15.6.4 (503, Retry-After §10.2.3);
 *   2025-11-25 basic/transports#sending-messages-to-the-server
 */
export function replyStatusOf(err: unknown): number | undefined {
  if (!(err instanceof SwitchyardError)) return undefined;
  if (HTTP_LEVEL.has(err.code)) return err.status;
  // A drain's refusal of a request it never ran (no detail) is 503 like the overloads above, so
  // that a balancer sees the replica go; one it cut after shutdownGraceMs (`request aborted`) ran.
  return err.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN' && err.detail === undefined ? err.status : undefined;
}

/**
 * The revision each content block type first appeared in. A block of a later type is rewritten
 * for an older client (see {@link contentFor}); a type no revision defines passes as it came.
 * @see 2025-03-26 changelog (audio content); 2025-06-18 changelog (resource_link)
 */
const CONTENT_SINCE: Readonly<Record<string, string>> = Object.freeze({
  text: '2024-11-05',
  image: '2024-11-05',
  resource: '2024-11-05',
  audio: '2025-03-26',
  resource_link: '2025-06-18',
});

/** Structured tool output (`structuredContent`, `outputSchema`) from 2025-06-18 on. @see 2025-06-18 server/tools#structured-content */
const STRUCTURED_SINCE = '2025-06-18';

/** Sampling messages whose `content` may be a list of blocks, from 2025-11-25 on. @see 2025-11-25 client/sampling (SamplingMessage) */
const SAMPLING_CONTENT_LISTS_SINCE = '2025-11-25';

/** The newest revision whose content blocks are all known to this era's oldest client: nothing to rewrite from here on. */
const ALL_CONTENT_SINCE = '2025-06-18';

function stringField(o: JsonObject, k: string): string | undefined {
  const v = o[k];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * One content block as a client at `version` can read it: the block itself when its type exists
 * in `version` (or is not a content type of any revision), else a `text` block saying what it was.
 * - `resource_link` (2025-06-18) → `Resource link: {title or name} <{uri}> ({mimeType})`, its
 *   description on the next line; the client may `resources/read` the URI as before.
 * - `audio` (2025-03-26) toward 2024-11-05 → a note naming the MIME type and that the audio is
 *   left out (2024-11-05 has no content block that carries audio).
 * The block's `annotations` are kept (2024-11-05 TextContent has them). Returns the same object
 * when nothing changes.
 * @see 2025-06-18 server/tools#resource-links; 2025-03-26 server/tools#audio-content
 */
export function contentFor(version: string, block: unknown): unknown {
  if (block === null || typeof block !== 'object' || Array.isArray(block)) return block;
  const b = block as JsonObject;
  const since = typeof b.type === 'string' ? CONTENT_SINCE[b.type] : undefined;
  if (since === undefined || version >= since) return block;
  let text: string;
  if (b.type === 'resource_link') {
    const uri = typeof b.uri === 'string' ? b.uri : '';
    text = `Resource link: ${stringField(b, 'title') ?? stringField(b, 'name') ?? uri} <${uri}>`;
    const mime = stringField(b, 'mimeType');
    if (mime) text += ` (${mime})`;
    const description = stringField(b, 'description');
    if (description) text += `\n${description}`;
  } else
    text = `[${String(b.type)} content${stringField(b, 'mimeType') ? ` (${stringField(b, 'mimeType')})` : ''} left out: protocol revision ${version} has no ${String(b.type)} content]`;
  const out: JsonObject = { type: 'text', text };
  if (b.annotations !== null && typeof b.annotations === 'object') out.annotations = b.annotations;
  return out;
}

/** `blocks` with each block as {@link contentFor} gives it; the same array when nothing changes. */
function contentListFor(version: string, blocks: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < blocks.length; i++) {
    const b = contentFor(version, blocks[i]);
    if (b !== blocks[i] && out === undefined) out = blocks.slice(0, i);
    out?.push(b);
  }
  return out ?? blocks;
}

/**
 * A `tools/call` or `prompts/get` result with its content blocks readable by a client at
 * `version` ({@link contentFor}). A tool result with `structuredContent` but no `text` block also
 * gets its structured content as serialized JSON in a `text` block for clients before 2025-06-18,
 * which the revision that added structured output asks servers to do for such clients.
 * Returns the same object when nothing changes (results may be shared by a cache: never mutated).
 * @see 2025-06-18 server/tools#structured-content ("For backwards compatibility …"); server/prompts#promptmessage
 */
function resultContentFor(version: string, method: string, result: JsonObject): JsonObject {
  if (method === 'tools/call') {
    const blocks = Array.isArray(result.content) ? (result.content as unknown[]) : undefined;
    let content = blocks === undefined ? undefined : contentListFor(version, blocks);
    if (version < STRUCTURED_SINCE && result.structuredContent !== undefined && !content?.some((b) => (b as JsonObject | null)?.type === 'text'))
      content = [...(content ?? []), { type: 'text', text: JSON.stringify(result.structuredContent) }];
    return content === blocks ? result : { ...result, content: content };
  }
  if (method === 'prompts/get' && Array.isArray(result.messages)) {
    const messages = result.messages as unknown[];
    let out: unknown[] | undefined;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i] as JsonObject | null;
      const c = m !== null && typeof m === 'object' ? contentFor(version, m.content) : undefined;
      const next = c !== undefined && c !== m?.content ? { ...m, content: c } : m;
      if (next !== m && out === undefined) out = messages.slice(0, i);
      out?.push(next);
    }
    return out === undefined ? result : { ...result, messages: out };
  }
  return result;
}

/** The 2026-07-28 envelope's serverInfo in a result's `_meta`: that era's, never this one's. */
const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

/**
 * A result toward a client at `version` (a revision of this era) for a request of `method`:
 * - fields that exist only in 2026-07-28 (caching hints, the result type marker, the
 *   `_meta["io.modelcontextprotocol/serverInfo"]` a 2026-07-28 upstream puts on every result) are removed;
 * - content blocks of a later revision are rewritten for `tools/call` and `prompts/get` (see
 *   {@link contentFor}), so the result validates against the client's own revision's schema.
 * Returns the same object when nothing changes; never mutates `result`.
 * @see 2026-07-28 server/utilities/caching; basic#resulttype; 2025-06-18 changelog
 */
export function encodeResult(result: JsonObject, version: string, method: string): JsonObject {
  let out = result;
  const meta = result._meta as JsonObject | undefined;
  const envelope = meta !== null && typeof meta === 'object' && SERVER_INFO_META in meta;
  if ('ttlMs' in result || 'cacheScope' in result || result.resultType === 'complete' || envelope) {
    // A copy without them, not a spread and `delete`: an object that lost a property is in V8's
    // dictionary mode, which JSON.stringify serializes about 0.4 µs slower per result.
    out = {};
    for (const k in result) {
      if (k === 'ttlMs' || k === 'cacheScope' || (k === 'resultType' && result[k] === 'complete')) continue;
      if (k === '_meta' && envelope) {
        const rest: JsonObject = {};
        let any = false;
        for (const m in meta) {
          if (m === SERVER_INFO_META) continue;
          rest[m] = meta[m];
          any = true;
        }
        if (any) out._meta = rest;
        continue;
      }
      out[k] = result[k];
    }
  }
  return version < ALL_CONTENT_SINCE ? resultContentFor(version, method, out) : out;
}

/**
 * A 2025-11-25 titled single-select field (`oneOf: [{ const, title }]`) as the single-select
 * field older revisions have: `enum` with the values, `enumNames` with their titles (2025-06-18
 * EnumSchema). Without it such a field validates there as a plain string field, and the client
 * asks for free text instead of offering the choices. Any other field is returned as it is.
 * @see 2025-11-25 client/elicitation#supported-schema-types (TitledSingleSelectEnumSchema); 2025-06-18 schema (EnumSchema)
 */
function singleSelectFor(field: unknown): unknown {
  if (field === null || typeof field !== 'object' || Array.isArray(field)) return field;
  const f = field as JsonObject;
  const options = f.oneOf;
  if (f.type !== 'string' || !Array.isArray(options) || options.length === 0) return field;
  const values: string[] = [];
  const titles: string[] = [];
  for (const o of options) {
    const c = (o as JsonObject | null)?.const;
    if (typeof c !== 'string') return field;
    values.push(c);
    const t = (o as JsonObject).title;
    titles.push(typeof t === 'string' ? t : c);
  }
  const out: JsonObject = {};
  for (const k in f) if (k !== 'oneOf') out[k] = f[k];
  out.enum = values;
  out.enumNames = titles;
  return out;
}

/**
 * An elicitation form's `requestedSchema` for a client before 2025-11-25: each field as
 * {@link singleSelectFor} gives it, optional multi-select fields left out; the same object when nothing changes.
 */
function formFor(requestedSchema: unknown): unknown {
  const props = (requestedSchema as JsonObject | null | undefined)?.properties;
  if (props === null || typeof props !== 'object' || Array.isArray(props)) return requestedSchema;
  const required = requiredOf(requestedSchema);
  let out: JsonObject | undefined;
  for (const [name, field] of Object.entries(props as JsonObject)) {
    // An optional multi-select field is left out: the form has no such field before 2025-11-25
    // (a required one is refused before this: see serverRequestUnfit).
    if (isMultiSelect(field) && !required.includes(name)) {
      delete (out ??= { ...(props as JsonObject) })[name];
      continue;
    }
    const f = singleSelectFor(field);
    if (f !== field) (out ??= { ...(props as JsonObject) })[name] = f;
  }
  return out === undefined ? requestedSchema : { ...(requestedSchema as JsonObject), properties: out };
}

/**
 * The params of a server-to-client request toward a client at `version`:
 * - `elicitation/create`: `mode` arrives with 2025-11-25 (URL elicitation); older clients know
 *   form mode only, so a form request loses the field, and its titled single-select fields
 *   become `enum` + `enumNames` (see {@link formFor}). A URL-mode request without an
 *   `elicitationId` (2026-07-28 has none: its client learns the outcome by retrying) gets a fresh
 *   one, which 2025-11-25 requires of URL mode (ElicitRequestURLParams; client/elicitation#url-mode);
 * - `sampling/createMessage`: each message's content block as {@link contentFor} gives it
 *   (audio toward 2024-11-05); a message whose content is a list of blocks (2025-11-25) becomes
 *   one message of the same role per block, in order, for clients before 2025-11-25, whose
 *   SamplingMessage holds a single block.
 * Returns the same object when nothing changes.
 * @see 2025-11-25 client/elicitation (mode, elicitationId); 2026-07-28 basic/patterns/mrtr (URL
 *   mode without elicitationId); 2025-03-26 client/sampling (audio content); 2025-11-25
 *   client/sampling (SamplingMessage content lists)
 */
export function encodeServerRequest(version: string, method: string, params: JsonObject): JsonObject {
  if (method === 'elicitation/create' && params.mode === 'url' && FLAGS.elicitationMode(version) && typeof params.elicitationId !== 'string')
    return { ...params, elicitationId: randomUUID() };
  if (method === 'elicitation/create' && !FLAGS.elicitationMode(version)) {
    let out = params;
    if (params.mode === 'form') {
      out = {};
      for (const k in params) if (k !== 'mode') out[k] = params[k];
    }
    const form = formFor(out.requestedSchema);
    return form === out.requestedSchema ? out : { ...out, requestedSchema: form };
  }
  if (method === 'sampling/createMessage' && version < SAMPLING_CONTENT_LISTS_SINCE && Array.isArray(params.messages)) {
    const messages = params.messages as unknown[];
    let changed = false;
    const out = messages.flatMap((m) => {
      if (m === null || typeof m !== 'object') return [m];
      const content = (m as JsonObject).content;
      // A list of blocks: one message of the same role per block, in order.
      if (Array.isArray(content)) {
        changed = true;
        return content.map((block) => ({ ...(m as JsonObject), content: contentFor(version, block) }));
      }
      const c = contentFor(version, content);
      if (c === content) return [m];
      changed = true;
      return [{ ...(m as JsonObject), content: c }];
    });
    return changed ? { ...params, messages: out } : params;
  }
  return params;
}
