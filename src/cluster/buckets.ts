// Token buckets in Redis for rate limits shared by every replica: one atomic Lua step per take.

import { SwitchyardError } from '../core/errors.js';
import { defineRedisScript, keyDigest, type ClusterRedis } from './redis.js';

/**
 * A store of token buckets (the rate-limit interceptor's storage). A bucket holds up to `burst`
 * tokens and refills at `ratePerSec`; a take of `cost` tokens succeeds when that many are there.
 */
export interface BucketStore {
  /**
   * Takes `cost` tokens from bucket `key` at time `nowMs` (ms since the epoch).
   * @returns `ok` true and `retryAfterMs` 0 when taken; otherwise `ok` false and the ms until
   *   `cost` tokens will be there (for `Retry-After`).
   */
  take(key: string, cost: number, ratePerSec: number, burst: number, nowMs: number): Promise<{ ok: boolean; retryAfterMs: number }>;
}

/** What {@link createRedisBucketStore} takes. */
export interface RedisBucketStoreOptions {
  readonly redis: ClusterRedis;
  /** Key prefix (default `swy:`); keys are `<prefix>tb:<digest of key>`. */
  readonly keyPrefix?: string;
}

/**
 * KEYS[1] bucket (hash: t = tokens, ts = time of t in ms); ARGV cost, rate per s, burst, now ms.
 * A replica whose clock is behind the last writer's adds no tokens and does not move `ts` back.
 * The key expires once the bucket would be full again (then a missing key means the same).
 */
const TAKE = defineRedisScript(
  `local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
if now > ts then
  tokens = tokens + (now - ts) * rate / 1000
  ts = now
end
if tokens > burst then tokens = burst end
local ok = 0
local retry = 0
if tokens >= cost then
  tokens = tokens - cost
  ok = 1
else
  retry = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'ts', string.format('%.17g', ts))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {ok, retry}`,
  () => true,
);

const finite = (n: number) => typeof n === 'number' && Number.isFinite(n);

/**
 * Creates a token bucket store in Redis: every take is one `EVALSHA` of a script that refills,
 * takes and stores atomically, so replicas share one bucket per key without races. Keys are
 * digests of the caller's key (they may name principals or addresses).
 * @throws SwitchyardError from `take`: `SWY_ERR_CLUSTER_UNAVAILABLE` while Redis is down (the
 *   caller chooses to fail open or closed); `SWY_ERR_INTERNAL_FAULT` for arguments no bucket can
 *   serve (cost negative or above burst, rate or burst not positive, non-finite numbers).
 * @see https://redis.io/docs/latest/develop/interact/programmability/eval-intro/ (scripts run atomically)
 */
export function createRedisBucketStore(options: RedisBucketStoreOptions): BucketStore {
  const { redis } = options;
  const prefix = `${options.keyPrefix ?? 'swy:'}tb:`;
  return {
    async take(key, cost, ratePerSec, burst, nowMs) {
      if (!finite(cost) || !finite(ratePerSec) || !finite(burst) || !finite(nowMs) || cost < 0 || ratePerSec <= 0 || burst <= 0 || cost > burst)
        throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'token bucket: need 0 <= cost <= burst, rate > 0, finite numbers' });
      const [ok, retry] = (await redis.evalScript(
        TAKE,
        [prefix + keyDigest(key)],
        [String(cost), String(ratePerSec), String(burst), String(Math.floor(nowMs))],
      )) as [number, number];
      return ok === 1 ? { ok: true, retryAfterMs: 0 } : { ok: false, retryAfterMs: Number(retry) };
    },
  };
}
