// The list cache: `tools/list`, `prompts/list`, `resources/list` and `resources/templates/list`
// results kept per upstream, cursor and client capabilities, as the innermost interceptor of the
// chain (policy and curation filter what it returns, per caller, outside it).

import { canonicalJson } from './canonical-json.js';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Dispatch, Interceptor } from './interceptor.js';
import { LIST_SHAPES } from './interceptor.js';
import type { JsonObject } from './message.js';
import { approxJsonBytes } from './json-size.js';
import type { RequestContext } from './request.js';

/** How a list cache is built. */
export interface ListCacheOptions {
  /**
   * How long a list stays cached when its upstream does not announce changes to it
   * (no `listChanged` capability), ms; 0 disables caching of such lists.
   */
  ttlMs: number;
  /** Longest life of a list whose upstream announces its changes (a safety net), ms. */
  maxAgeMs: number;
  /** Entries at most; the least recently used goes first. */
  maxEntries: number;
  /**
   * What the entries take together at most, bytes (each counted as {@link approxJsonBytes} of its
   * result plus its key); the least recently used go first, and a list larger than this is served
   * but not kept. Undefined: no bound but `maxEntries`.
   */
  maxBytes?: number;
  /** True when `upstream` announces changes of the list `method` returns (its `listChanged` capability). */
  announces(upstream: string, method: string): boolean;
  /** True when `upstream`'s lists may depend on who asks (per-caller credentials): never cached. */
  bypass?(upstream: string): boolean;
  /** The clock, ms (tests). */
  now?: () => number;
}

/** A list cache (key: upstream, method, cursor, the client's protocol revision and capabilities). */
export interface ListCache {
  /** The interceptor; put it innermost (first in the chain's list). */
  readonly interceptor: Interceptor;
  /** Forgets `upstream`'s lists of `method` (every list when absent): on a list-changed notification. */
  invalidate(upstream: string, method?: string): void;
  /** Entries now. */
  readonly size: number;
  /** Lookups answered from the cache, and those that went upstream (since creation). */
  readonly stats: { hits: number; misses: number };
}

interface Entry {
  result: JsonObject;
  /** ms since the epoch when it stops being served. */
  expiresAt: number;
  /** True when the entry's life comes from a TTL (a hit tells clients the time left in `ttlMs`). */
  timed: boolean;
}

/** The notification that announces a change of each list method's result. */
export const LIST_CHANGED: Readonly<Record<string, string>> = Object.freeze({
  'tools/list': 'notifications/tools/list_changed',
  'prompts/list': 'notifications/prompts/list_changed',
  'resources/list': 'notifications/resources/list_changed',
  'resources/templates/list': 'notifications/resources/list_changed',
});

/** Capabilities keys longer than this are kept as their SHA-256 digest (the cache holds many keys). */
const MAX_PLAIN_KEY_CHARS = 256;

/**
 * A key for a capabilities object that does not depend on key order: its canonical JSON (keys
 * sorted per object, so the cost grows with its size, not size × distinct keys), or that text's
 * SHA-256 digest when longer than {@link MAX_PLAIN_KEY_CHARS}.
 */
function capabilitiesKey(caps: JsonObject): string {
  if (Object.keys(caps).length === 0) return '';
  const text = canonicalJson(caps);
  return text.length <= MAX_PLAIN_KEY_CHARS ? text : `#${createHash('sha256').update(text).digest('base64url')}`;
}

/**
 * Creates a list cache. A list is served from the cache until its upstream announces a change
 * (`invalidate`, wired to the upstream's list-changed notifications) or, for upstreams that never
 * announce changes, until `ttlMs` passes, or the result's own `ttlMs` (a 2026-07-28 upstream)
 * when that is shorter (`ttlMs: 0`: not cached). The key is the upstream, the
 * method, the cursor and the client's capabilities (a server may list more tools to a client that
 * can elicit). Concurrent misses for one key go upstream once. Results are served as shallow
 * copies; a served timed entry says the time it has left in `ttlMs`.
 * @see 2026-07-28 server/utilities/caching; 2025-11-25 server/tools#list-changed-notification
 */
export function createListCache(opts: ListCacheOptions): ListCache {
  const now = opts.now ?? Date.now;
  // Bounded in bytes as well as in entries: the key holds the client's capabilities, which any
  // client picks, so entries alone let one client fill the cache with copies of a large list
  // (test/regressions/list-cache-bytes.test.ts).
  const entries = new LRUCache<string, Entry>(
    opts.maxBytes === undefined
      ? { max: opts.maxEntries }
      : { max: opts.maxEntries, maxSize: opts.maxBytes, sizeCalculation: (e, key) => Math.max(1, approxJsonBytes(e.result) + key.length) },
  );
  const inflight = new Map<string, Promise<JsonObject>>();
  const stats = { hits: 0, misses: 0 };
  /** Generation per upstream and method: a result fetched before an invalidation is not stored. */
  const generation = new Map<string, number>();
  const gen = (upstream: string, method: string) => generation.get(`${upstream}\0${method}`) ?? 0;

  // Other methods pass straight through, without an async frame of their own.
  const interceptor: Interceptor = (next) => (ctx) =>
    !Object.hasOwn(LIST_SHAPES, ctx.method) || ctx.upstream === undefined || opts.bypass?.(ctx.upstream) ? next(ctx) : cached(next, ctx, ctx.upstream);
  const cached = async (next: Dispatch, ctx: RequestContext, upstream: string): Promise<JsonObject> => {
    const announced = opts.announces(upstream, ctx.method);
    if (!announced && opts.ttlMs <= 0) return next(ctx);
    const cursor = typeof ctx.params.cursor === 'string' ? ctx.params.cursor : '';
    // What the upstream session the request travels on was opened with: the client's revision and
    // capabilities (a server lists more tools to a client that can elicit; an upstream session of
    // a 2024-11-05 client declares no elicitation).
    const key = `${upstream}\0${ctx.method}\0${cursor}\0${ctx.protocolVersion}\0${capabilitiesKey(ctx.clientCapabilities)}`;
    const t = now();
    const hit = entries.get(key);
    if (hit && hit.expiresAt > t) {
      stats.hits++;
      return hit.timed ? { ...hit.result, ttlMs: Math.max(0, hit.expiresAt - t) } : { ...hit.result };
    }
    const pending = inflight.get(key);
    if (pending) {
      stats.hits++;
      return { ...(await pending) };
    }
    stats.misses++;
    const before = gen(upstream, ctx.method);
    const fetch = next(ctx);
    inflight.set(key, fetch);
    let result: JsonObject;
    try {
      result = await fetch;
    } finally {
      inflight.delete(key);
    }
    // An upstream that announces its changes is trusted to: its list lives until it says so. For
    // one that does not, the configured TTL applies, capped by the result's own ttlMs.
    const own = typeof result.ttlMs === 'number' && result.ttlMs >= 0 ? result.ttlMs : undefined;
    const life = announced ? opts.maxAgeMs : Math.min(own ?? Infinity, opts.ttlMs);
    if (life > 0 && result.resultType !== 'input_required' && gen(upstream, ctx.method) === before) {
      entries.set(key, { result, expiresAt: now() + life, timed: !announced });
    }
    return { ...result };
  };

  return {
    interceptor,
    invalidate(upstream, method) {
      const methods = method === undefined ? Object.keys(LIST_SHAPES) : [method];
      for (const m of methods) generation.set(`${upstream}\0${m}`, gen(upstream, m) + 1);
      const prefixes = methods.map((m) => `${upstream}\0${m}\0`);
      for (const k of [...entries.keys()]) if (prefixes.some((p) => k.startsWith(p))) entries.delete(k);
    },
    get size() {
      return entries.size;
    },
    stats,
  };
}
