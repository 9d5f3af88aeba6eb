// Session revocation and idle expiry that every replica sees: a sealed session id carries its own
// absolute expiry, but a DELETE or an idle timeout must end it on all replicas at once.

import { LRUCache } from 'lru-cache';
import { SwitchyardError } from '../core/errors.js';
import { defineRedisScript, keyDigest, type ClusterRedis } from './redis.js';

/** What {@link SessionLiveness.admit} found. */
export type Admission = 'live' | 'revoked' | 'idle';

/**
 * Revoked sessions and last activity, by session id. Session ids are credentials: both stores
 * keep only a SHA-256 digest of them.
 * @see 2025-11-25 basic/transports#session-management (after the server ends a session, requests with its id get 404)
 */
export interface SessionLiveness {
  /**
   * Ends a session everywhere until `untilMs` (its sealed expiry; after that the token does not
   * open anyway, so the entry can go). Also forgets its last activity.
   * @param untilMs ms since the epoch; in the past: only the activity is forgotten. Capped at one year ahead.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_REVOCATION_LIMIT` (memory store full of live revocations),
   *   `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  revoke(sessionId: string, untilMs: number): Promise<void>;
  /**
   * True when the session was revoked and the revocation has not lapsed.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  isRevoked(sessionId: string): Promise<boolean>;
  /**
   * Records activity now; the session counts as idle once more than `idleMs` pass without another touch (as Redis expires keys).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  touch(sessionId: string, idleMs: number): Promise<void>;
  /**
   * The last activity, ms since the epoch; undefined when never touched, idle for longer than its
   * `idleMs`, revoked, or (memory store) dropped at the bound as the least recently active.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  lastSeen(sessionId: string): Promise<number | undefined>;
  /**
   * One step per request (one Redis round trip): `revoked` or `idle` (then answer 404), or `live`,
   * and then the activity is recorded as by `touch`. A session must be touched once when it is created.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  admit(sessionId: string, idleMs: number): Promise<Admission>;
  /**
   * As {@link SessionLiveness.admit}, and for a `live` session also the state last stored by
   * {@link SessionLiveness.setState} (its expiry renewed with the activity), in the same round trip.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  admitState(sessionId: string, idleMs: number): Promise<{ admission: Admission; state: string | undefined }>;
  /**
   * Stores a session's changeable state (JSON text, at most `maxStateBytes`) until the session
   * idles out, is revoked, or the state is stored again.
   * @throws SwitchyardError `SWY_ERR_SESSION_STATE_TOO_LARGE` over the bound; `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store, Redis down).
   */
  setState(sessionId: string, state: string, idleMs: number): Promise<void>;
}

/** Largest changeable state of one session, UTF-8 bytes (log level and up to 1,024 subscribed URIs fit). */
export const MAX_STATE_BYTES = 256 * 1024;

function checkState(state: string): void {
  const bytes = Buffer.byteLength(state, 'utf8');
  if (bytes > MAX_STATE_BYTES)
    throw new SwitchyardError('SWY_ERR_SESSION_STATE_TOO_LARGE', { detail: `${bytes} bytes of session state, limit ${MAX_STATE_BYTES}` });
}

/** What {@link createMemorySessionLiveness} takes. */
export interface MemorySessionLivenessOptions {
  /** Live revocations held (default 100,000); one more is refused with `SWY_ERR_CLUSTER_REVOCATION_LIMIT`. */
  readonly maxRevoked?: number;
  /** Sessions whose activity is tracked (default 100,000); past it the least recently active is forgotten (it counts as idle). */
  readonly maxTracked?: number;
  /** The clock, ms since the epoch (default `Date.now`). */
  readonly now?: () => number;
}

/** What {@link createRedisSessionLiveness} takes. */
export interface RedisSessionLivenessOptions {
  readonly redis: ClusterRedis;
  /** Key prefix (default `swy:`); keys are `<prefix>rev:<digest>` and `<prefix>seen:<digest>`. */
  readonly keyPrefix?: string;
  /** The clock for the recorded activity time, ms since the epoch (default `Date.now`); expiry itself runs on Redis's clock. */
  readonly now?: () => number;
}

const MAX_AHEAD_MS = 366 * 24 * 3_600_000;

function checkIdle(idleMs: number): void {
  if (!Number.isSafeInteger(idleMs) || idleMs < 1 || idleMs > MAX_AHEAD_MS)
    throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'idleMs must be an integer from 1 ms to one year' });
}

/**
 * Creates the in-memory store for one replica. Revocations are never evicted (that would revive
 * a session): past `maxRevoked` live ones, revoking is refused. Activity is a cache: past
 * `maxTracked` the least recently active session is forgotten, which ends it early as idle.
 */
export function createMemorySessionLiveness(options: MemorySessionLivenessOptions = {}): SessionLiveness {
  const now = options.now ?? Date.now;
  const maxRevoked = options.maxRevoked ?? 100_000;
  const revoked = new Map<string, number>();
  const seen = new LRUCache<string, number>({ max: options.maxTracked ?? 100_000, ttlResolution: 0, perf: { now } });
  // Changeable state lives as long as the activity it belongs to: same bound, same TTL.
  const states = new LRUCache<string, string>({ max: options.maxTracked ?? 100_000, ttlResolution: 0, perf: { now } });

  const revokedNow = (d: string): boolean => {
    const until = revoked.get(d);
    if (until === undefined) return false;
    if (until > now()) return true;
    revoked.delete(d);
    return false;
  };

  return {
    async revoke(sessionId, untilMs) {
      const d = keyDigest(sessionId);
      seen.delete(d);
      states.delete(d);
      const t = now();
      const until = Math.min(untilMs, t + MAX_AHEAD_MS);
      if (!(until > t)) return;
      if (!revoked.has(d) && revoked.size >= maxRevoked) {
        for (const [k, u] of revoked) if (u <= t) revoked.delete(k);
        if (revoked.size >= maxRevoked) throw new SwitchyardError('SWY_ERR_CLUSTER_REVOCATION_LIMIT');
      }
      revoked.set(d, Math.max(until, revoked.get(d) ?? 0));
    },
    async isRevoked(sessionId) {
      return revokedNow(keyDigest(sessionId));
    },
    async touch(sessionId, idleMs) {
      checkIdle(idleMs);
      seen.set(keyDigest(sessionId), now(), { ttl: idleMs });
    },
    async lastSeen(sessionId) {
      const d = keyDigest(sessionId);
      return revokedNow(d) ? undefined : seen.get(d);
    },
    async admit(sessionId, idleMs) {
      return (await this.admitState(sessionId, idleMs)).admission;
    },
    async admitState(sessionId, idleMs) {
      checkIdle(idleMs);
      const d = keyDigest(sessionId);
      if (revokedNow(d)) return { admission: 'revoked', state: undefined };
      if (seen.get(d) === undefined) return { admission: 'idle', state: undefined };
      seen.set(d, now(), { ttl: idleMs });
      const state = states.get(d);
      if (state !== undefined) states.set(d, state, { ttl: idleMs });
      return { admission: 'live', state };
    },
    async setState(sessionId, state, idleMs) {
      checkIdle(idleMs);
      checkState(state);
      states.set(keyDigest(sessionId), state, { ttl: idleMs });
    },
  };
}

/** KEYS[1] revocation, KEYS[2] activity; ARGV[1] now (ms), ARGV[2] idle (ms). */
const ADMIT = defineRedisScript(
  `if redis.call('EXISTS', KEYS[1]) == 1 then return 'revoked' end
if redis.call('EXISTS', KEYS[2]) == 0 then return 'idle' end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 'live'`,
  (reply) => reply === 'live',
);

/** KEYS[1] revocation, KEYS[2] activity, KEYS[3] state; ARGV[1] now (ms), ARGV[2] idle (ms). */
const ADMIT_STATE = defineRedisScript(
  `if redis.call('EXISTS', KEYS[1]) == 1 then return {'revoked'} end
if redis.call('EXISTS', KEYS[2]) == 0 then return {'idle'} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
local st = redis.call('GET', KEYS[3])
if st then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  return {'live', st}
end
return {'live'}`,
  (reply) => Array.isArray(reply) && reply[0] === 'live',
);

/** KEYS[1] revocation, KEYS[2] activity, KEYS[3] state; ARGV[1] until (ms since the epoch, in the future). */
const REVOKE = defineRedisScript(`redis.call('DEL', KEYS[2], KEYS[3])
local cur = redis.call('PEXPIRETIME', KEYS[1])
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PXAT', ARGV[1]) end
return 1`);

/**
 * Creates the Redis store: a revocation is a key that expires with the session (`SET … PXAT`),
 * activity a key that expires `idleMs` after the last touch (`SET … PX`), and the changeable
 * state a key that expires with the activity, so Redis itself bounds all three and idle expiry
 * needs no sweeper. Keys: `<prefix>rev:`, `<prefix>seen:`, `<prefix>sst:` and the session digest.
 * @see https://redis.io/docs/latest/commands/set/ (PX, PXAT)
 */
export function createRedisSessionLiveness(options: RedisSessionLivenessOptions): SessionLiveness {
  const { redis } = options;
  const now = options.now ?? Date.now;
  const prefix = options.keyPrefix ?? 'swy:';
  const keys = (sessionId: string) => {
    const d = keyDigest(sessionId);
    return [`${prefix}rev:${d}`, `${prefix}seen:${d}`, `${prefix}sst:${d}`];
  };

  return {
    async revoke(sessionId, untilMs) {
      const [rev, seen, st] = keys(sessionId);
      const t = now();
      const until = Math.min(Math.floor(untilMs), t + MAX_AHEAD_MS);
      if (!(until > t)) {
        await redis.command(['DEL', seen, st]);
        return;
      }
      await redis.evalScript(REVOKE, [rev, seen, st], [String(until)]);
    },
    async isRevoked(sessionId) {
      return Number(await redis.command(['EXISTS', keys(sessionId)[0]])) === 1;
    },
    async touch(sessionId, idleMs) {
      checkIdle(idleMs);
      await redis.command(['SET', keys(sessionId)[1], String(now()), 'PX', String(idleMs)]);
    },
    async lastSeen(sessionId) {
      const [rev, seen] = keys(sessionId);
      const [revoked, at] = (await redis.command(['MGET', rev, seen])) as Array<string | null>;
      return revoked === null && at !== null ? Number(at) : undefined;
    },
    async admit(sessionId, idleMs) {
      checkIdle(idleMs);
      return (await redis.evalScript(ADMIT, keys(sessionId).slice(0, 2), [String(now()), String(idleMs)])) as Admission;
    },
    async admitState(sessionId, idleMs) {
      checkIdle(idleMs);
      const [admission, state] = (await redis.evalScript(ADMIT_STATE, keys(sessionId), [String(now()), String(idleMs)])) as [Admission, string?];
      return { admission, state: typeof state === 'string' ? state : undefined };
    },
    async setState(sessionId, state, idleMs) {
      checkIdle(idleMs);
      checkState(state);
      await redis.command(['SET', keys(sessionId)[2], state, 'PX', String(idleMs)]);
    },
  };
}
