// Token-bucket rate limits per principal (optionally per tool), behind a store interface another backend can implement.

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SwitchyardError } from '../core/errors.js';
import { principalKey } from '../core/identity.js';
import { isDecisionOnly, type Dispatch, type Interceptor } from '../core/interceptor.js';
import type { JsonObject } from '../core/message.js';
import type { RequestContext } from '../core/request.js';
import { checkFragment, configError, duplicateLimitNames, type RateLimitConfig } from './config.js';
import { compileGlobs, invokedComponent } from './components.js';

/** What one {@link BucketStore.take} answers: `retryAfterMs` is 0 when `ok`, else the ms until the tokens are back. */
export interface BucketTake {
  ok: boolean;
  retryAfterMs: number;
}

/**
 * Where token buckets live. `take` refills the bucket `key` to `nowMs` (at `ratePerSec` tokens
 * per second, capped at `burst`; a bucket seen for the first time is full), then takes `cost`
 * tokens if it holds that many. `retryAfterMs` is 0 when `ok`, else the ms until `cost` tokens
 * are back. An in-memory store answers at once (a {@link BucketTake}); one backed by a shared
 * store (Redis), which lets replicas share buckets, answers with a promise of it. The rate
 * limiter waits only for the latter.
 */
export interface BucketStore {
  take(key: string, cost: number, ratePerSec: number, burst: number, nowMs: number): BucketTake | Promise<BucketTake>;
}

/** Options of {@link createMemoryBucketStore}. */
export interface MemoryBucketStoreOptions {
  /** Buckets kept; the least recently used (the most idle) is evicted to make room, never grown past. */
  maxBuckets: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

/** Float slack: a token back to within this fraction counts as whole (1 ms of refill is not lost to rounding). */
const EPSILON = 1e-9;

const ANONYMOUS_KEY = principalKey(null);

/**
 * An in-memory {@link BucketStore} in a bounded LRU. Evicting a bucket forgets its debt (it
 * comes back full), so size `maxBuckets` above the number of principals active within a
 * refill period. A clock that goes back is treated as standing still.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when `maxBuckets` is not an integer >= 1
 * @see RFC 6585 §4 (what a refusal becomes)
 */
export function createMemoryBucketStore(opts: MemoryBucketStoreOptions): BucketStore {
  if (!Number.isInteger(opts.maxBuckets) || opts.maxBuckets < 1) throw configError([{ path: '/maxBuckets', message: 'must be an integer >= 1' }]);
  const buckets = new LRUCache<string, Bucket>({ max: opts.maxBuckets });
  return {
    take(key, cost, ratePerSec, burst, nowMs): BucketTake {
      let b = buckets.get(key);
      if (!b) b = { tokens: burst, atMs: nowMs };
      else if (nowMs > b.atMs) {
        b.tokens = Math.min(burst, b.tokens + ((nowMs - b.atMs) * ratePerSec) / 1000);
        b.atMs = nowMs;
      }
      buckets.set(key, b);
      if (b.tokens + EPSILON >= cost) {
        b.tokens = Math.max(0, b.tokens - cost);
        return { ok: true, retryAfterMs: 0 };
      }
      // The same slack as above: after exactly retryAfterMs the take succeeds, one ms earlier it does not.
      return { ok: false, retryAfterMs: Math.max(1, Math.ceil(((cost - b.tokens - EPSILON) * 1000) / ratePerSec)) };
    },
  };
}

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** The `rateLimits` config. */
  rateLimits: RateLimitConfig[];
  /** Where the buckets live. */
  store: BucketStore;
  /** Wall clock, ms since the epoch (default `Date.now`; shared stores need a clock replicas agree on). */
  now?: () => number;
  /** JSON Pointer of `rateLimits` in the config file, for error paths (default `/rateLimits`). */
  path?: string;
}

interface CompiledLimit {
  cfg: RateLimitConfig;
  tools: ((name: string) => boolean) | undefined;
  /** The bucket keys' first part: the name and its definition's {@link definitionTag}. */
  prefix: string;
}

/** Limiters made so far: each one's number keeps its entries in a request's `charged` record apart from another's (same limit names, other buckets). */
let limitersMade = 0;

/**
 * A short tag of what a limit counts and how (`per`, `ratePerSec`, `burst`, `tools`), put in its
 * bucket keys after the name: a config reload that keeps a limit as it was finds its buckets where
 * they were, with their tokens, and one that changes its numbers starts it on fresh buckets.
 */
function definitionTag(cfg: RateLimitConfig): string {
  const def = JSON.stringify([cfg.per, cfg.ratePerSec, cfg.burst, cfg.tools ?? null]);
  return createHash('sha256').update(def).digest('base64url').slice(0, 8);
}

/** A short, fixed-length key part for a client-supplied tool name (names can be long). */
function toolPart(upstream: string, tool: string): string {
  return createHash('sha256').update(upstream).update('\0').update(tool).digest('base64url').slice(0, 22);
}

/**
 * Creates the rate-limit interceptor. Each request takes one token from every limit that
 * applies, in config order, and stops at the first empty bucket:
 * - `per: 'principal'` without `tools`: every request (each upstream call) of the principal;
 *   a subscription decision (`resources/subscribe`, `isDecisionOnly`) calls no upstream and takes none;
 * - `per: 'principal'` with `tools`: `tools/call` of a matching tool, one bucket for all of them;
 * - `per: 'principal+tool'`: `tools/call`, one bucket per tool (restricted to `tools` if given).
 * Principals are keyed by `principalKey` (unauthenticated callers share one bucket); tools by
 * upstream and the upstream's own tool name. Bucket keys are `NAME@DEF:PRINCIPAL[:TOOL]`, `DEF` a
 * tag of the limit's definition: two limiters with the same limit (a config reload that left it as
 * it was) share its buckets, and a limit whose numbers changed starts on fresh ones.
 * One client request takes at most one token from each bucket: when the gateway makes several
 * calls for it (an aggregate mount's members and their list pages share `ctx.charged`), a bucket
 * paid on an earlier call is skipped on the later ones. Each limiter (the top-level one, an
 * upstream's own) keeps its own entries there, so a member's own limit is charged once per client
 * request that reaches that member.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (from the factory) for a bad config or duplicate
 *   names; SWY_ERR_RATE_LIMITED (per request): HTTP 429, `Retry-After` in whole seconds (at
 *   least 1), `data: { limit, retryAfterMs }`
 * @see RFC 6585 §4 (429 Too Many Requests); RFC 9110 §10.2.3 (Retry-After)
 */
export function createRateLimiter(opts: RateLimiterOptions): Interceptor {
  const base = opts.path ?? '/rateLimits';
  const cfgs = checkFragment<RateLimitConfig[]>('rateLimits', opts.rateLimits, base);
  const dupes = duplicateLimitNames(cfgs, base);
  if (dupes.length > 0) throw configError(dupes);
  const limits: CompiledLimit[] = cfgs.map((cfg) => ({ cfg, tools: compileGlobs(cfg.tools), prefix: `${cfg.name}@${definitionTag(cfg)}` }));
  const now = opts.now ?? Date.now;
  const { store } = opts;
  const self = ++limitersMade;
  // principalKey hashes; an identity object lives for its request or session, so remember its key weakly.
  const keys = new WeakMap<object, string>();
  const keyOf = (id: RequestContext['identity']): string => {
    if (id === null) return ANONYMOUS_KEY;
    let k = keys.get(id);
    if (k === undefined) keys.set(id, (k = principalKey(id)));
    return k;
  };
  /**
   * Takes a token from each limit that applies to the request, from `limits[from]` on, then calls
   * `next`. A store that answers at once is not waited for; at the first one that answers with a
   * promise, the rest follow when it settles.
   * @throws SwitchyardError SWY_ERR_RATE_LIMITED at the first empty bucket (synchronously when the store answered at once)
   */
  const chargeFrom = (
    next: Dispatch,
    ctx: RequestContext,
    who: string,
    tool: ReturnType<typeof invokedComponent>,
    nowMs: number,
    from: number,
  ): Promise<JsonObject> => {
    for (let i = from; i < limits.length; i++) {
      const { cfg, tools, prefix } = limits[i];
      const toolLimited = cfg.per === 'principal+tool' || tools !== undefined;
      if (toolLimited && (!tool || (tools && !tools(tool.name)))) continue;
      const key = cfg.per === 'principal+tool' && tool ? `${prefix}:${who}:${toolPart(tool.upstream, tool.name)}` : `${prefix}:${who}`;
      // Paid on an earlier call for the same client request (another member, another page).
      const paid = ctx.charged === undefined ? undefined : `${self}/${key}`;
      if (paid !== undefined && ctx.charged!.has(paid)) continue;
      const got = store.take(key, 1, cfg.ratePerSec, cfg.burst, nowMs);
      if (got instanceof Promise)
        return got.then((took) => {
          admit(took, cfg, ctx, paid);
          return chargeFrom(next, ctx, who, tool, nowMs, i + 1);
        });
      admit(got, cfg, ctx, paid);
    }
    return next(ctx);
  };
  return (next) => (ctx) => {
    // A subscription decision is no upstream call: it takes no token (a listen decides each of its
    // URIs); nor does what the gateway asks on a request's behalf (the request took its own).
    if (limits.length === 0 || isDecisionOnly(ctx.method) || ctx.onBehalf === true) return next(ctx);
    try {
      return chargeFrom(next, ctx, keyOf(ctx.identity), ctx.method === 'tools/call' ? invokedComponent(ctx) : undefined, now(), 0);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/**
 * Applies one take of `cfg`'s bucket: refused, it throws the 429; taken, it records the bucket as
 * paid for this client request (`paid`, in `ctx.charged`).
 * @throws SwitchyardError SWY_ERR_RATE_LIMITED: HTTP 429, `Retry-After` in whole seconds (at least 1), `data: { limit, retryAfterMs }`
 */
function admit(got: BucketTake, cfg: RateLimitConfig, ctx: RequestContext, paid: string | undefined): void {
  if (!got.ok) {
    const seconds = Math.max(1, Math.ceil(got.retryAfterMs / 1000));
    throw new SwitchyardError('SWY_ERR_RATE_LIMITED', {
      detail: `${cfg.name}; retry after ${seconds} s`,
      data: { limit: cfg.name, retryAfterMs: got.retryAfterMs },
      headers: { 'retry-after': String(seconds) },
    });
  }
  if (paid !== undefined) ctx.charged!.add(paid);
}
