// The 2026-07-28 wire vocabulary and codec: the protocol `_meta`, the method registry, request
// decoding in the rejection order of basic/transports/streamable-http (mirrored headers where the
// transport has them), result and error encoding.

import { PeerRpcError, SwitchyardError, toRpcError, type RpcErrorObject } from '../../src/core/errors.js';
import type { ParamHeader } from '../../src/core/era.js';
import type { HeaderBag } from '../../src/core/exchange.js';
import { textOf, type JsonObject, type RpcRequest } from '../../src/core/message.js';
import { LOG_LEVELS, type Implementation } from '../../src/core/request.js';
import { capabilitiesForUpstreams } from '../../src/core/gate.js';
import type { ServerDescription } from '../../src/core/upstream.js';

/** Revisions this era serves. */
export const REVISIONS = ['2026-07-28'] as const;

/** `_meta` keys of the protocol (2026-07-28 basic#meta). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** Client requests a 2026-07-28 server answers (2026-07-28 schema, ClientRequest). */
export const METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
]);

/** Complete results that must carry `ttlMs` and `cacheScope` (2026-07-28 server/utilities/caching). */
export const CACHEABLE: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** Methods whose requests must carry `Mcp-Name`, and the param it mirrors (2026-07-28 basic/transports/streamable-http §Request headers). */
export const NAME_PARAM: Readonly<Record<string, 'name' | 'uri'>> = Object.freeze({
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
});

/** Caching fields for results that carry none (2026-07-28 server/utilities/caching). */
export interface CacheDefaults {
  /** Default `ttlMs` for results without one, ms (0 = do not cache). */
  ttlMs: number;
  /** Default `cacheScope`. */
  cacheScope: 'public' | 'private';
}

/** Caching defaults for upstream results that carry none: do not cache, never share. */
export const CACHE_DEFAULTS: Readonly<CacheDefaults> = Object.freeze({ ttlMs: 0, cacheScope: 'private' });

/** True when a request's params carry `_meta["io.modelcontextprotocol/protocolVersion"]` (the era marker). */
export function hasModernMeta(params: unknown): boolean {
  const meta = (params as JsonObject | undefined)?._meta;
  return !!meta && typeof meta === 'object' && !Array.isArray(meta) && META.protocolVersion in meta;
}

// ---------------------------------------------------------------------------------------------
// Mirrored header values
// ---------------------------------------------------------------------------------------------

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Raw characters a mirrored header value may not carry (they must be Base64-encoded). */
// eslint-disable-next-line no-control-regex
const HEADER_VALUE_RAW_INVALID = /[\x00-\x1f\x7f-\uffff]/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes one `Mcp-Name` / `Mcp-Param-*` value: optional whitespace stripped, then
 * `=?base64?…?=` decoded as UTF-8; a value missing either marker is literal. The Base64 must be
 * canonical (RFC 4648 §3.5: padding present, unused bits zero): a value whose re-encoding differs
 * names something else than it seems to, and is refused.
 * @see 2026-07-28 basic/transports/streamable-http (value encoding)
 * @returns the decoded value, or null when the value is invalid: bad or non-canonical Base64,
 *   bytes that are not UTF-8, or raw control or non-ASCII characters.
 */
export function decodeHeaderValue(raw: string): string | null {
  const v = raw.trim();
  // Control characters and non-ASCII must travel Base64-encoded; raw ones are invalid.
  if (HEADER_VALUE_RAW_INVALID.test(v)) return null;
  if (v.length >= 12 && v.startsWith('=?base64?') && v.endsWith('?=')) {
    const b = v.slice(9, -2);
    if (b.length % 4 !== 0 || !B64.test(b)) return null;
    const bytes = Buffer.from(b, 'base64');
    if (bytes.toString('base64') !== b) return null;
    try {
      return utf8.decode(bytes);
    } catch {
      return null;
    }
  }
  return v;
}

/**
 * Encodes a value for `Mcp-Name` / `Mcp-Param-*`: as-is when plain visible ASCII without
 * surrounding whitespace, else `=?base64?<Base64(UTF-8)>?=`.
 * @see 2026-07-28 basic/transports/streamable-http (value encoding)
 */
export function encodeHeaderValue(value: string | number | boolean): string {
  const s = String(value);
  if (/^[\x20-\x7e]*$/.test(s) && s.trim() === s && !(s.startsWith('=?base64?') && s.endsWith('?='))) return s;
  return `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}

function mismatch(detail: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_MODERN_HEADER_MISMATCH', { detail });
}

/** Why a raw header value is invalid, or null (2026-07-28 basic/transports/streamable-http, value encoding). */
function invalidValue(name: string, raw: string): SwitchyardError | null {
  if (HEADER_VALUE_RAW_INVALID.test(raw.trim())) return mismatch(`${name} has invalid characters`);
  if (decodeHeaderValue(raw) === null) return mismatch(`${name} has invalid Base64`);
  return null;
}

// ---------------------------------------------------------------------------------------------
// Decoding a request
// ---------------------------------------------------------------------------------------------

/** What a valid request's protocol `_meta` says, and its params without the protocol keys. */
export interface DecodedRequest {
  protocolVersion: string;
  clientCapabilities: JsonObject;
  clientInfo: Implementation | undefined;
  logLevel: string | undefined;
  /** params with the protocol `_meta` keys removed (other `_meta` keys, e.g. traceparent, stay). */
  params: JsonObject;
}

/**
 * Checks the keys of a `_meta` that carries a protocolVersion: the version is a string,
 * clientCapabilities an object, clientInfo (optional) has name and version, logLevel (optional)
 * an RFC 5424 name. Says nothing about whether the version is served.
 * @see 2026-07-28 basic#meta
 * @throws SwitchyardError SWY_ERR_MODERN_META
 */
function readMeta(meta: JsonObject): Omit<DecodedRequest, 'params'> {
  const version = meta[META.protocolVersion];
  if (typeof version !== 'string') throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: 'protocolVersion must be a string' });
  const caps = meta[META.clientCapabilities];
  if (!caps || typeof caps !== 'object' || Array.isArray(caps))
    throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: `_meta["${META.clientCapabilities}"] is required` });
  const info = meta[META.clientInfo];
  if (
    info !== undefined &&
    (!info || typeof info !== 'object' || typeof (info as JsonObject).name !== 'string' || typeof (info as JsonObject).version !== 'string')
  ) {
    throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: 'clientInfo needs name and version' });
  }
  const level = meta[META.logLevel];
  if (level !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(level))
    throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: 'unknown logLevel' });
  return {
    protocolVersion: version,
    // As upstreams are told of them: without the Tasks extension or a legacy `tasks`, since the
    // gateway serves no task (ext-tasks: a server creates one only for a request that declares it).
    clientCapabilities: withoutTasksExtension(capabilitiesForUpstreams(caps as JsonObject)),
    clientInfo: info as Implementation | undefined,
    logLevel: level as string | undefined,
  };
}

/** `params` without the protocol `_meta` keys (other `_meta` keys, e.g. traceparent, stay; an emptied `_meta` goes). */
export function stripMeta(params: JsonObject): JsonObject {
  const meta = (params._meta ?? {}) as JsonObject;
  const rest: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) {
    if (k !== META.protocolVersion && k !== META.clientCapabilities && k !== META.clientInfo && k !== META.logLevel) rest[k] = v;
  }
  const out: JsonObject = { ...params };
  if (Object.keys(rest).length > 0) out._meta = rest;
  else delete out._meta;
  return out;
}

function unsupported(requested: string, supported: readonly string[]): SwitchyardError {
  return new SwitchyardError('SWY_ERR_MODERN_VERSION', { detail: requested, data: { supported: [...supported], requested } });
}

/**
 * Decodes one 2026-07-28 request: its `_meta`, and, where the transport has them (HTTP), the
 * standard mirrored headers, in the rejection order of the spec: malformed `_meta` (-32602),
 * header/body disagreement (-32020), unsupported version (-32022 with `data.supported` and
 * `data.requested`), missing standard headers or a bad `Mcp-Name` (-32020). Over stdio
 * (`headers` undefined) only the `_meta` rules apply.
 * @see 2026-07-28 basic#meta; basic/versioning; basic/transports/streamable-http §Server validation
 * @throws SwitchyardError SWY_ERR_MODERN_META, SWY_ERR_MODERN_HEADER_MISMATCH, SWY_ERR_MODERN_VERSION
 */
export function decodeRequest(msg: RpcRequest, supported: readonly string[], headers?: HeaderBag): DecodedRequest {
  const params = msg.params ?? {};
  const meta = params._meta as JsonObject | undefined;
  const hVersion = headers?.get('mcp-protocol-version');
  const hMethod = headers?.get('mcp-method');
  // _meta present but malformed, or modern headers without (complete) _meta: -32602.
  if (!meta || typeof meta !== 'object' || Array.isArray(meta) || !(META.protocolVersion in meta)) {
    if (!headers || hVersion !== undefined || hMethod !== undefined)
      throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: `_meta["${META.protocolVersion}"] is required` });
    // Neither headers nor _meta over HTTP: answer -32022 with the versions served. The version
    // asked for is initialize's, else the one a header-less request implies (2025-03-26,
    // 2025-06-18 basic/transports#protocol-version-header).
    throw unsupported(msg.method === 'initialize' && typeof params.protocolVersion === 'string' ? params.protocolVersion : '2025-03-26', supported);
  }
  const read = readMeta(meta);
  const version = read.protocolVersion;
  if (headers) {
    // Header disagrees with the body: -32020.
    if (hVersion !== undefined && hVersion.trim() !== version) throw mismatch('MCP-Protocol-Version differs from _meta protocolVersion');
    if (hMethod !== undefined && hMethod.trim() !== msg.method) throw mismatch('Mcp-Method differs from method');
  }
  if (!supported.includes(version)) throw unsupported(version, supported);
  if (headers) {
    // Missing standard headers, or a bad Mcp-Name: -32020.
    if (hVersion === undefined) throw mismatch('MCP-Protocol-Version header is required');
    if (hMethod === undefined) throw mismatch('Mcp-Method header is required');
    const nameParam = NAME_PARAM[msg.method];
    if (nameParam) {
      const raw = headers.get('mcp-name');
      if (raw === undefined) throw mismatch('Mcp-Name header is required');
      if (headers.count('mcp-name') > 1) throw mismatch('Mcp-Name header is repeated');
      const bad = invalidValue('Mcp-Name', raw);
      if (bad) throw bad;
      if (decodeHeaderValue(raw) !== params[nameParam]) throw mismatch(`Mcp-Name differs from params.${nameParam}`);
    }
  }
  return { ...read, params: stripMeta(params) };
}

// ---------------------------------------------------------------------------------------------
// x-mcp-header annotations (server/tools#x-mcp-header)
// ---------------------------------------------------------------------------------------------

export type { ParamHeader } from '../../src/core/era.js';

/**
 * Reads the valid `x-mcp-header` annotations of one tool's `inputSchema`: top-level
 * `properties` only, primitive types only, RFC 9110 token names, unique case-insensitively.
 * @see 2026-07-28 server/tools#x-mcp-header
 * @returns the annotations, or null when any annotation is invalid (the tool must be dropped).
 */
export function paramHeadersOf(inputSchema: unknown): ParamHeader[] | null {
  const props = (inputSchema as { properties?: Record<string, { type?: unknown; 'x-mcp-header'?: unknown }> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return [];
  const out: ParamHeader[] = [];
  const seen = new Set<string>();
  for (const [property, schema] of Object.entries(props)) {
    if (!schema || typeof schema !== 'object') continue;
    // An annotation anywhere below a top-level property (nested `properties`, `items`, `oneOf`,
    // `$defs`, …) is not reachable through `properties` keys alone: invalid.
    if (annotatedBelow(schema, 0)) return null;
    if (!('x-mcp-header' in schema)) continue;
    const header = schema['x-mcp-header'];
    if (typeof header !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(header)) return null;
    const type = schema.type;
    if (type !== 'string' && type !== 'integer' && type !== 'boolean') return null;
    const key = header.toLowerCase();
    if (seen.has(key)) return null;
    seen.add(key);
    out.push({ header, property, type });
  }
  return out;
}

/** Nesting followed when looking for annotations below a property (parsed JSON is depth-bounded already). */
const MAX_ANNOTATION_DEPTH = 64;

/** True when some value nested in `schema` (not `schema` itself) carries an `x-mcp-header` key. */
function annotatedBelow(schema: object, depth: number): boolean {
  if (depth >= MAX_ANNOTATION_DEPTH) return false;
  for (const v of Object.values(schema)) {
    if (!v || typeof v !== 'object') continue;
    if (!Array.isArray(v) && 'x-mcp-header' in v) return true;
    if (annotatedBelow(v as object, depth + 1)) return true;
  }
  return false;
}

/**
 * Checks `Mcp-Param-*` headers of a tools/call against the tool's `x-mcp-header` annotations:
 * every annotated argument present in the body needs its header, equal after decoding (integers
 * compared numerically, booleans as `true`/`false`).
 * @see 2026-07-28 server/tools#x-mcp-header; basic/transports/streamable-http §Server validation
 * @throws SwitchyardError SWY_ERR_MODERN_HEADER_MISMATCH
 */
export function checkParamHeaders(headers: HeaderBag, args: JsonObject | undefined, annotations: readonly ParamHeader[]): void {
  for (const a of annotations) {
    const value = args?.[a.property];
    const name = `mcp-param-${a.header.toLowerCase()}`;
    const raw = headers.get(name);
    if (value === undefined || value === null) continue;
    if (raw === undefined) throw mismatch(`Mcp-Param-${a.header} header is required`);
    if (headers.count(name) > 1) throw mismatch(`Mcp-Param-${a.header} header is repeated`);
    const bad = invalidValue(`Mcp-Param-${a.header}`, raw);
    if (bad) throw bad;
    const decoded = decodeHeaderValue(raw) as string;
    let same: boolean;
    if (a.type === 'integer') same = decoded.trim() !== '' && Number(decoded) === value;
    else if (a.type === 'boolean') same = decoded === textOf(value);
    else same = decoded === value;
    if (!same) throw mismatch(`Mcp-Param-${a.header} differs from arguments.${a.property}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding results and errors
// ---------------------------------------------------------------------------------------------

/**
 * Shapes a core result for a 2026-07-28 client: `resultType` (absent means `complete`,
 * basic#resulttype), `ttlMs`/`cacheScope` on complete cacheable results, and
 * `_meta["io.modelcontextprotocol/serverInfo"]`: always `serverInfo`, the mount's, which its
 * DiscoverResult names, even over one a 2026-07-28 upstream put there (an aggregate member's
 * own name would otherwise tell the client another server answered). Copies only the top level.
 * @see 2026-07-28 server/utilities/caching
 */
export function encodeResult(method: string, result: JsonObject, serverInfo: Implementation, cache: CacheDefaults = CACHE_DEFAULTS): JsonObject {
  const out: JsonObject = { ...result };
  if (out.resultType === undefined) out.resultType = 'complete';
  if (out.resultType === 'complete' && CACHEABLE.has(method)) {
    if (typeof out.ttlMs !== 'number' || out.ttlMs < 0) out.ttlMs = cache.ttlMs;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = cache.cacheScope;
  }
  const meta = out._meta && typeof out._meta === 'object' ? { ...(out._meta as JsonObject) } : {};
  meta[META.serverInfo] = serverInfo;
  out._meta = meta;
  return out;
}

/**
 * Errors toward 2026-07-28 clients: an older upstream's -32002 (resource not found) becomes
 * -32602, which this revision uses instead.
 * @see 2026-07-28 basic#error-codes (-32002 reserved: MUST NOT be emitted)
 */
export function encodeError(err: unknown): RpcErrorObject {
  const rpc = toRpcError(err);
  return rpc.code === -32002 ? { ...rpc, code: -32602 } : rpc;
}

/** True when an upstream's error means a missing client capability (-32021). */
export function isCapabilityError(err: unknown): boolean {
  return err instanceof PeerRpcError && err.rpc.code === -32021;
}

/** The Tasks extension's key in `capabilities.extensions` (ext-tasks, SEP-2663). */
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * `caps` without the Tasks extension (`extensions` itself goes when nothing else is in it): the
 * gateway routes no `tasks/*` method, so it does not advertise them (the core leaves out the
 * `tasks` capability for every era, src/core/gate.ts). `caps` itself when there is nothing to drop.
 */
function withoutTasksExtension(caps: JsonObject): JsonObject {
  const ext = caps.extensions;
  if (ext === null || typeof ext !== 'object' || Array.isArray(ext) || !Object.hasOwn(ext, TASKS_EXTENSION)) return caps;
  const { [TASKS_EXTENSION]: _tasks, ...rest } = ext as JsonObject;
  const { extensions: _extensions, ...others } = caps;
  return Object.keys(rest).length > 0 ? { ...others, extensions: rest } : others;
}

/**
 * The `server/discover` result (2026-07-28 server/discover), without the caching fields
 * `encodeResult` adds. The capabilities leave out the Tasks extension, which is not served.
 */
export function discoverResult(desc: ServerDescription, supportedVersions: readonly string[]): JsonObject {
  const out: JsonObject = {
    supportedVersions: [...supportedVersions],
    capabilities: withoutTasksExtension(desc.capabilities),
    _meta: { [META.serverInfo]: desc.serverInfo },
  };
  if (desc.instructions !== undefined) out.instructions = desc.instructions;
  return out;
}

/** Errors that end an HTTP exchange with their catalogue status even after validation passed. */
const STATUS_CODES: ReadonlySet<string> = new Set([
  'SWY_ERR_REQ_METHOD_NOT_FOUND',
  'SWY_ERR_MODERN_CAPABILITY',
  'SWY_ERR_MODERN_HEADER_MISMATCH',
  'SWY_ERR_ADMISSION_BUSY',
  'SWY_ERR_ADMISSION_SHUTTING_DOWN',
  'SWY_ERR_SESSION_LIMIT',
  'SWY_ERR_SUBSCRIPTION_LIMIT',
  'SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT',
  'SWY_ERR_RATE_LIMITED',
  'SWY_ERR_ADMISSION_PRINCIPAL_BUSY',
  'SWY_ERR_UPSTREAM_DOWN',
  // The shared state store (Redis) down: retryable like an overload, with its Retry-After.
  'SWY_ERR_CLUSTER_UNAVAILABLE',
]);

/**
 * The HTTP status of an error answer to a 2026-07-28 request whose answer is still a JSON reply:
 * the catalogue status for refusals that are HTTP-level in this revision (unknown method 404,
 * header mismatch and missing capability 400, overload (an upstream that cannot open one more session included) and the cluster store down 503, a rate limit and a principal's or client's full share 429), 200 for everything
 * answered in-band (invalid params, upstream JSON-RPC errors), and 400 for an upstream's -32021.
 * @see 2026-07-28 basic/transports/streamable-http §Server validation, error status codes
 */
export function statusFor(err: unknown): number {
  if (err instanceof SwitchyardError) return STATUS_CODES.has(err.code) ? err.status : 200;
  return isCapabilityError(err) ? 400 : 200;
}
