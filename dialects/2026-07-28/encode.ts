// 2026-07-28 result shaping: resultType, caching fields and serverInfo on every result.

import type { JsonObject } from '../../src/core/message.js';
import type { Implementation } from '../../src/core/request.js';
import { CACHEABLE, META } from './methods.js';

/** Caching defaults for upstream results that carry none (2026-07-28 server/utilities/caching). */
export interface CacheDefaults {
  /** Default `ttlMs` for results without one, ms (0 = do not cache). */
  ttlMs: number;
  /** Default `cacheScope`. */
  cacheScope: 'public' | 'private';
}

/**
 * Shapes a core result for a 2026-07-28 client: `resultType` (absent means `complete`,
 * basic#resulttype), `ttlMs`/`cacheScope` on complete cacheable results, and
 * `_meta["io.modelcontextprotocol/serverInfo"]`. Copies only the top level.
 */
export function encodeModernResult(method: string, result: JsonObject, serverInfo: Implementation, cache: CacheDefaults): JsonObject {
  const out: JsonObject = { ...result };
  if (out.resultType === undefined) out.resultType = 'complete';
  if (out.resultType === 'complete' && CACHEABLE.has(method)) {
    if (typeof out.ttlMs !== 'number' || out.ttlMs < 0) out.ttlMs = cache.ttlMs;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = cache.cacheScope;
  }
  const meta = out._meta && typeof out._meta === 'object' ? { ...(out._meta as JsonObject) } : {};
  if (meta[META.serverInfo] === undefined) meta[META.serverInfo] = serverInfo;
  out._meta = meta;
  return out;
}
