// The 2026-07-28 protocol `_meta` in transport-neutral terms: the checks every transport makes
// on a request's `_meta` (HTTP adds its mirrored headers on top), and the shape of its results.

import { SwitchyardError } from './errors.js';
import type { JsonObject, RpcRequest } from './message.js';
import { LOG_LEVELS, type Implementation } from './request.js';

/** `_meta` keys of the protocol (2026-07-28 basic#meta). */
export const MODERN_META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/**
 * Client requests a 2026-07-28 server answers (2026-07-28 schema, ClientRequest). The HTTP
 * dialect keeps the same list in `dialects/2026-07-28/methods.ts`; a test keeps both in step.
 */
export const MODERN_METHODS: ReadonlySet<string> = new Set([
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
export const MODERN_CACHEABLE: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** Caching defaults for upstream results that carry none: do not cache, never share. */
export const MODERN_CACHE_DEFAULTS = Object.freeze({ ttlMs: 0, cacheScope: 'private' as const });

/** True when a request's params carry `_meta["io.modelcontextprotocol/protocolVersion"]` (the era marker). */
export function hasModernMeta(params: unknown): boolean {
  const meta = (params as JsonObject | undefined)?._meta;
  return !!meta && typeof meta === 'object' && !Array.isArray(meta) && MODERN_META.protocolVersion in meta;
}

/** What the protocol `_meta` of a valid request says. */
export interface ModernMeta {
  protocolVersion: string;
  clientCapabilities: JsonObject;
  clientInfo: Implementation | undefined;
  logLevel: string | undefined;
}

/**
 * Checks the keys of a `_meta` that carries a protocolVersion: the version is a string,
 * clientCapabilities an object, clientInfo (optional) has name and version, logLevel (optional)
 * an RFC 5424 name. Says nothing about whether the version is served.
 * @see 2026-07-28 basic#meta
 * @throws SwitchyardError SWY_ERR_MODERN_META
 */
export function readModernMeta(meta: JsonObject): ModernMeta {
  const version = meta[MODERN_META.protocolVersion];
  if (typeof version !== 'string') throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: 'protocolVersion must be a string' });
  const caps = meta[MODERN_META.clientCapabilities];
  if (!caps || typeof caps !== 'object' || Array.isArray(caps))
    throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: `_meta["${MODERN_META.clientCapabilities}"] is required` });
  const info = meta[MODERN_META.clientInfo];
  if (
    info !== undefined &&
    (!info || typeof info !== 'object' || typeof (info as JsonObject).name !== 'string' || typeof (info as JsonObject).version !== 'string')
  ) {
    throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: 'clientInfo needs name and version' });
  }
  const level = meta[MODERN_META.logLevel];
  if (level !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(level))
    throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: 'unknown logLevel' });
  return {
    protocolVersion: version,
    clientCapabilities: caps as JsonObject,
    clientInfo: info as Implementation | undefined,
    logLevel: level as string | undefined,
  };
}

/** `params` without the protocol `_meta` keys (other `_meta` keys, e.g. traceparent, stay; an emptied `_meta` goes). */
export function stripModernMeta(params: JsonObject): JsonObject {
  const meta = (params._meta ?? {}) as JsonObject;
  const rest: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) {
    if (k !== MODERN_META.protocolVersion && k !== MODERN_META.clientCapabilities && k !== MODERN_META.clientInfo && k !== MODERN_META.logLevel) rest[k] = v;
  }
  const out: JsonObject = { ...params };
  if (Object.keys(rest).length > 0) out._meta = rest;
  else delete out._meta;
  return out;
}

/** A validated 2026-07-28 request: its `_meta`, and params with the protocol keys removed. */
export interface ModernRequest extends ModernMeta {
  params: JsonObject;
}

/**
 * Validates the `_meta` of a 2026-07-28 request on a transport without mirrored headers
 * (stdio): malformed or missing `_meta` is -32602, an unsupported version -32022 with
 * `data.supported` and `data.requested`.
 * @see 2026-07-28 basic#meta; basic/versioning
 * @throws SwitchyardError SWY_ERR_MODERN_META, SWY_ERR_MODERN_VERSION
 */
export function validateModernMeta(msg: RpcRequest, supported: readonly string[]): ModernRequest {
  const params = (msg.params ?? {}) as JsonObject;
  if (!hasModernMeta(params)) throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: `_meta["${MODERN_META.protocolVersion}"] is required` });
  const meta = readModernMeta(params._meta as JsonObject);
  if (!supported.includes(meta.protocolVersion)) {
    throw new SwitchyardError('SWY_ERR_MODERN_VERSION', {
      detail: meta.protocolVersion,
      data: { supported: [...supported], requested: meta.protocolVersion },
    });
  }
  return { ...meta, params: stripModernMeta(params) };
}

/**
 * Shapes a core result for a 2026-07-28 client: `resultType` (absent means `complete`,
 * basic#resulttype), `ttlMs`/`cacheScope` on complete cacheable results (defaults: 0 and
 * `private`), and `_meta["io.modelcontextprotocol/serverInfo"]`. Copies only the top level.
 * @see 2026-07-28 server/utilities/caching
 */
export function shapeModernResult(
  method: string,
  result: JsonObject,
  serverInfo: Implementation,
  cache: { ttlMs: number; cacheScope: 'public' | 'private' } = MODERN_CACHE_DEFAULTS,
): JsonObject {
  const out: JsonObject = { ...result };
  if (out.resultType === undefined) out.resultType = 'complete';
  if (out.resultType === 'complete' && MODERN_CACHEABLE.has(method)) {
    if (typeof out.ttlMs !== 'number' || out.ttlMs < 0) out.ttlMs = cache.ttlMs;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = cache.cacheScope;
  }
  const meta = out._meta && typeof out._meta === 'object' ? { ...(out._meta as JsonObject) } : {};
  if (meta[MODERN_META.serverInfo] === undefined) meta[MODERN_META.serverInfo] = serverInfo;
  out._meta = meta;
  return out;
}
