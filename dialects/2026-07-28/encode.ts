// 2026-07-28 result shaping: resultType, caching fields and serverInfo on every result.

import type { JsonObject } from '../../src/core/message.js';
import { shapeModernResult } from '../../src/core/modern-meta.js';
import type { Implementation } from '../../src/core/request.js';

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
 * `_meta["io.modelcontextprotocol/serverInfo"]`. Copies only the top level. (The shaping itself
 * is shared with the stdio front door: src/core/modern-meta.ts.)
 */
export function encodeModernResult(method: string, result: JsonObject, serverInfo: Implementation, cache: CacheDefaults): JsonObject {
  return shapeModernResult(method, result, serverInfo, cache);
}
