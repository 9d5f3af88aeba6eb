// The cluster building blocks in one place, and createCluster, which turns the `cluster` config
// section into the stores one replica uses (Redis-backed when `cluster.redis` is set, in memory otherwise).

import { randomBytes } from 'node:crypto';
import { SwitchyardError } from '../core/errors.js';
import { createClusterBus, defaultReplicaId, type ClusterBus, type ClusterBusOptions } from './bus.js';
import { createMemoryEventStore, createRedisEventStore, type EventStore } from './event-store.js';
import {
  createClusterRedis,
  redisErrorText,
  type ClusterLog,
  type ClusterRedis,
  type ClusterRedisOptions,
  type RedisState,
  type RedisStatus,
} from './redis.js';
import { createMemorySessionLiveness, createRedisSessionLiveness, type SessionLiveness } from './revocation.js';
import { createRedisBucketStore, type BucketStore } from './buckets.js';
import { createSealer, parseClusterKeys, type Sealer } from './seal.js';

export * from './seal.js';
export * from './redis.js';
export * from './event-store.js';
export * from './bus.js';
export * from './revocation.js';
export * from './buckets.js';

/** What {@link createCluster} takes: the `cluster` config section, resolved, plus the logger. */
export interface ClusterOptions {
  /** `cluster.redis` (or `--redis URL`); absent: one replica, every store in memory, no bus. */
  readonly redis?: string;
  /**
   * `cluster.key` (`${SWITCHYARD_CLUSTER_KEY}`): base64 32-byte keys, current first. Required with
   * `redis`; absent without it, a random key is made (sealed state then does not survive a restart).
   */
  readonly key?: string;
  /** This replica's id (default {@link defaultReplicaId}). */
  readonly replicaId?: string;
  readonly log: ClusterLog;
  /** Events kept per SSE stream (`limits.resumeBufferEvents`, default 256). */
  readonly resumeBufferEvents?: number;
  /** Time a stream buffer outlives its last event, ms (`limits.sessionIdleMs`, default 30 minutes). */
  readonly streamTtlMs?: number;
  /** Redis wrapper options beyond the URL (timeouts, backoff). */
  readonly redisOptions?: Omit<ClusterRedisOptions, 'url' | 'log'>;
  /** Bus options beyond Redis, replica id and log (timeout, bounds). */
  readonly busOptions?: Omit<ClusterBusOptions, 'redis' | 'replicaId' | 'log'>;
}

/** One replica's view of the cluster. */
export interface Cluster {
  readonly replicaId: string;
  /** Seals session ids, requestState and task handles. */
  readonly sealer: Sealer;
  /** The current key's 32 secret bytes, for keys derived from it (never logged). */
  readonly currentSecret: Uint8Array;
  /** Resumption buffers for `Last-Event-ID`. */
  readonly events: EventStore;
  /** Revocation (DELETE) and idle expiry of sessions. */
  readonly liveness: SessionLiveness;
  /** Shared token buckets; undefined without Redis (the rate-limit interceptor then uses its in-memory store). */
  readonly buckets: BucketStore | undefined;
  /** Stream ownership and forwarding; undefined without Redis (one replica owns everything). */
  readonly bus: ClusterBus | undefined;
  /** The Redis connection; undefined without Redis. */
  readonly redis: ClusterRedis | undefined;
  /** For `/readyz`: `off` without Redis, else its state and last error message (never the URL). */
  status(): { redis: RedisState | 'off'; lastError?: string; writesRefused?: RedisStatus['writesRefused'] };
  /** Closes the bus, then Redis. */
  close(): Promise<void>;
}

/** How often a replica says that sealed ids name a key it lacks, ms: the mismatch repeats on every such request. */
const UNKNOWN_KEY_WARN_INTERVAL_MS = 60_000;

/**
 * A warning for ids sealed with a key this replica does not hold, at most once a minute (any key id
 * a client sends would otherwise write a line): a replica deployed with another
 * SWITCHYARD_CLUSTER_KEY answers 404 to every session the others opened, which without it looks
 * like ordinary unknown sessions. Fields: that key id, this replica's current one, every one it holds.
 */
function unknownKeyWarning(log: ClusterLog, currentKeyId: string, keyIds: readonly string[]): (keyId: string) => void {
  let lastMs = -Infinity;
  return (keyId) => {
    const now = Date.now();
    if (now - lastMs < UNKNOWN_KEY_WARN_INTERVAL_MS) return;
    lastMs = now;
    log.warn({ keyId, currentKeyId, keyIds }, 'cluster token sealed with a key this replica does not hold');
  };
}

/**
 * Builds the cluster stores for one replica. With `redis`, it waits for the first connection
 * attempt (up, or failed, bounded by the connect timeout: {@link ClusterRedis.firstAttempt}) and
 * no longer: a Redis that is down stays down in the background (calls fail with
 * `SWY_ERR_CLUSTER_UNAVAILABLE` until it is up; `status()` says when it is).
 * @throws SwitchyardError `SWY_ERR_CONFIG_INVALID` for a bad key, a missing key with `redis`, a bad URL or replica id.
 */
export async function createCluster(options: ClusterOptions): Promise<Cluster> {
  const { log } = options;
  if (options.redis !== undefined && !options.key)
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
      detail: 'cluster.key is required with cluster.redis (every replica must open the same sealed state)',
    });
  const keyText = options.key ?? randomBytes(32).toString('base64');
  const keys = parseClusterKeys(keyText);
  const sealer = createSealer({
    keys,
    onUnknownKey: unknownKeyWarning(
      log,
      keys[0].id,
      keys.map((k) => k.id),
    ),
  });
  const currentSecret = keys[0].secret;
  const replicaId = options.replicaId ?? defaultReplicaId();
  const limits = { maxEventsPerStream: options.resumeBufferEvents, ttlMs: options.streamTtlMs };

  if (options.redis === undefined) {
    return {
      replicaId,
      sealer,
      currentSecret,
      events: createMemoryEventStore(limits),
      liveness: createMemorySessionLiveness(),
      buckets: undefined,
      bus: undefined,
      redis: undefined,
      status: () => ({ redis: 'off' }),
      close: async () => {},
    };
  }

  const redis = createClusterRedis({ ...options.redisOptions, url: options.redis, log });
  let bus: ClusterBus;
  try {
    // Else the first requests race the connection opened just now, and lose: a library gateway
    // assembles on its first request, which was answered 503 SWY_ERR_CLUSTER_UNAVAILABLE.
    await redis.firstAttempt();
    bus = await createClusterBus({ ...options.busOptions, redis, replicaId, log });
  } catch (err) {
    redis.destroy();
    throw err;
  }
  return {
    replicaId,
    sealer,
    currentSecret,
    events: createRedisEventStore({ redis, ...limits }),
    liveness: createRedisSessionLiveness({ redis }),
    buckets: createRedisBucketStore({ redis }),
    bus,
    redis,
    status() {
      const s = redis.status;
      if (s.lastError && s.state === 'down') return { redis: s.state, lastError: redisErrorText(s.lastError) };
      return s.writesRefused ? { redis: s.state, writesRefused: s.writesRefused } : { redis: s.state };
    },
    async close() {
      await bus.close().catch(() => {});
      await redis.close();
    },
  };
}
