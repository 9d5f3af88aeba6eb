// One replica's part in the gateway: the `cluster` config section becomes the held-call table
// (requestState sealed and routed to the replica holding the call), per-mount ReplicaServices for
// the era modules, the shared rate-limit buckets and the state `/readyz` reports (docs/scaling.md).

import { hkdfSync, randomBytes } from 'node:crypto';
import { bindingOf, HeldCalls, progressOf, resumeCall } from '../core/calls.js';
import { Deadline } from '../core/cancel.js';
import { SwitchyardError } from '../core/errors.js';
import type { Identity } from '../core/identity.js';
import { parseBody, serialize, textOf, type JsonObject, type ParseLimits } from '../core/message.js';
import type { ReplicaHandler, ReplicaLink, ReplicaMessage, ReplicaServices } from '../core/replica.js';
import type { Implementation, LogMessage, ProgressUpdate, RequestContext } from '../core/request.js';
import type { BucketStore } from './buckets.js';
import type { BusMessage, ClusterBus, ClusterBusOptions } from './bus.js';
import { createCluster, type Cluster } from './index.js';
import { createLocalCluster } from './local.js';
import { sessionLogId } from '../core/identity.js';
import { type ClusterLog, type ClusterRedisOptions, type RedisState, type RedisStatus } from './redis.js';

/** The `cluster` config section (src/config/schema.json), resolved. */
export interface ClusterSection {
  /** `redis://…` or `rediss://…`; absent: one replica, the ledger in memory, no bus. */
  readonly redis?: string;
  /** Base64 32-byte keys, current first (`${SWITCHYARD_CLUSTER_KEY}`); required with `redis`. */
  readonly key?: string;
  /** This replica's id (default: host name and 4 random bytes). */
  readonly replicaId?: string;
  /** Longest life of a sealed session id, ms. */
  readonly sessionMaxAgeMs: number;
  /** Redis down makes this replica not ready (`notReady`) rather than `degraded`; default false. */
  readonly readinessRequiresRedis?: boolean;
}

/** What {@link createReplicas} takes. */
export interface ReplicasOptions {
  /** The `cluster` section; absent: no cluster (random session ids in memory, HMAC requestState), as before. */
  readonly cluster?: ClusterSection;
  /** `requestStateKey`: the HMAC key of held-call states without a cluster (absent: random). */
  readonly requestStateKey?: string;
  /** The bounds used here (top-level `limits`). */
  readonly limits: ParseLimits & {
    readonly clientRequestTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly resumeBufferEvents: number;
    readonly sessionIdleMs: number;
  };
  /**
   * The request deadline of mount `mount`, ms (its `limits.requestTimeoutMs`, over the top-level
   * one); absent: the top-level `limits.requestTimeoutMs` for every mount. Bounds a 2026-07-28 held
   * call resumed on another replica, at both ends, as the mount's executor bounds it locally.
   */
  readonly requestTimeoutOf?: (mount: string) => number;
  readonly log: ClusterLog;
  /** Redis wrapper options beyond the URL (tests shorten the backoff). */
  readonly redisOptions?: Omit<ClusterRedisOptions, 'url' | 'log'>;
  /** Bus options beyond Redis, replica id and log. */
  readonly busOptions?: Omit<ClusterBusOptions, 'redis' | 'replicaId' | 'log'>;
}

/** The gateway's view of its cluster; everything is in place (and inert) without a `cluster` section. */
export interface GatewayCluster {
  /** This replica's id; undefined without a `cluster` section. */
  readonly replicaId: string | undefined;
  /** The id of the key it seals with (derived from the key, docs/scaling.md); undefined without a `cluster` section. */
  readonly keyId: string | undefined;
  /** Held calls of every upstream (sealed and routed between replicas when clustered). */
  readonly held: HeldCalls;
  /** Shared token buckets for the rate limiter; undefined without `cluster.redis` (use the in-memory store). */
  readonly buckets: BucketStore | undefined;
  /** What the era modules of mount `mount` use; undefined without a `cluster` section. */
  forMount(mount: string): ReplicaServices | undefined;
  /**
   * Redis state for `/readyz` and `/status.json`: `off` without Redis; the error message when down
   * (never the URL); `writesRefused` while it is up but refuses writes (full: an `OOM` reply; a read-only replica: `READONLY`).
   */
  status(): { redis: RedisState | 'off'; lastError?: string; writesRefused?: RedisStatus['writesRefused'] };
  /**
   * Why this replica is not ready on the cluster's account: empty, unless `readinessRequiresRedis`
   * is set and Redis is down or refuses writes (then the one reason {@link GatewayCluster.degraded} would give).
   */
  notReady(): string[];
  /**
   * What this replica serves without, on the cluster's account: one reason while Redis is down
   * (`cluster: redis down (<message>)`) or refuses writes (`cluster: redis refuses writes
   * (<first sentence of its reply>)`: sessions cannot be opened or kept), unless `readinessRequiresRedis` made it a `notReady` reason.
   * Redis is shared by every replica: failing readiness for it would take them all out of rotation
   * at once, stateless 2026-07-28 traffic included (docs/scaling.md, "Readiness").
   */
  degraded(): string[];
  /**
   * A 32-byte key derived from the current cluster key for `purpose` (HKDF-SHA-256), the same on
   * every replica: for state an upstream inside the gateway seals itself (the embedded demo's
   * requestState). Without a `cluster` section, derived from `requestStateKey`, or from a random
   * secret per process when that is unset (src/cluster/local.ts); undefined where none can be made.
   */
  derivedKey(purpose: string): Buffer | undefined;
  /** Closes the bus, then Redis (after the dialects closed). */
  close(): Promise<void>;
}

/**
 * Builds the cluster of one gateway process: without `cluster`, held calls as before and nothing
 * else; with it, the sealer, the ledger (Redis or memory), resumption buffers and the bus, and the
 * bus handlers that resume a 2026-07-28 held call for a retry that landed on another replica.
 * Redis connects in the background: until it is up, cross-replica work fails with
 * `SWY_ERR_CLUSTER_UNAVAILABLE` and {@link GatewayCluster.degraded} says so.
 * @throws SwitchyardError `SWY_ERR_CONFIG_INVALID` (a bad key, `redis` without `key`, a bad URL or replica id)
 */
export async function createReplicas(o: ReplicasOptions): Promise<GatewayCluster> {
  const { limits, log } = o;
  const section = o.cluster;
  if (!section) return createLocalCluster(o);
  const c: Cluster = await createCluster({
    redis: section.redis,
    key: section.key,
    replicaId: section.replicaId,
    log,
    resumeBufferEvents: limits.resumeBufferEvents,
    streamTtlMs: limits.sessionIdleMs,
    redisOptions: o.redisOptions,
    busOptions: o.busOptions,
  });
  const held = new HeldCalls(undefined, 1024, limits.clientRequestTimeoutMs, { seal: c.sealer, replicaId: c.replicaId });
  const bus = c.bus;
  const handlers = new Map<string, ReplicaHandler>();
  if (bus) {
    bus.onForward((msg, from) => {
      const h = handlers.get(`${typeof msg.m === 'string' ? msg.m : ''}\0${msg.kind}`);
      if (!h) throw new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: `replica ${c.replicaId} handles no ${msg.kind} here` });
      log.debug({ kind: msg.kind, from }, 'replica message handled');
      return h(msg, from) as never;
    });
    routeHeldCalls(bus, held, handlers, limits, o.requestTimeoutOf ?? (() => limits.requestTimeoutMs), log);
  }
  log.info({ replicaId: c.replicaId, keyId: c.sealer.currentKeyId, redis: c.redis ? 'on' : 'off' }, 'cluster replica');

  const ledger: ReplicaServices['ledger'] = {
    admit: (id, idleMs) => c.liveness.admitState(id, idleMs),
    touch: (id, idleMs) => c.liveness.touch(id, idleMs),
    setState: (id, state, idleMs) => c.liveness.setState(id, state, idleMs),
    revoke: (id, untilMs) => c.liveness.revoke(id, untilMs),
  };
  // In memory (one replica) the streams' own buffers serve resumption; only Redis is shared.
  const buffer: ReplicaServices['buffer'] = c.redis
    ? { put: (s, seq, d, ttl) => c.events.put(s, seq, d, ttl), replayAfter: (s, last, o) => c.events.replayAfter(s, last, o), drop: (s) => c.events.drop(s) }
    : undefined;
  const mounts = new Map<string, ReplicaServices>();
  const redisDown = (): string[] => {
    const s = c.status();
    if (s.redis === 'down') return [`cluster: redis down${s.lastError ? ` (${s.lastError})` : ''}`];
    return s.writesRefused ? [`cluster: redis refuses writes (${s.writesRefused.error})`] : [];
  };
  return {
    replicaId: c.replicaId,
    keyId: c.sealer.currentKeyId,
    held,
    buckets: c.buckets,
    forMount(mount) {
      let rs = mounts.get(mount);
      if (!rs) {
        rs = {
          replicaId: c.replicaId,
          seal: c.sealer,
          ledger,
          buffer,
          link: bus ? linkFor(bus, mount, handlers) : undefined,
          sessionMaxAgeMs: section.sessionMaxAgeMs,
          logId: sessionLogId,
        };
        mounts.set(mount, rs);
      }
      return rs;
    },
    status: () => c.status(),
    notReady: () => (section.readinessRequiresRedis === true ? redisDown() : []),
    degraded: () => (section.readinessRequiresRedis === true ? [] : redisDown()),
    derivedKey(purpose) {
      // The key createCluster sealed with: the configured one, or the random one it made.
      const secret = c.currentSecret;
      return Buffer.from(hkdfSync('sha256', secret, 'switchyard/derived/v1', purpose, 32));
    },
    close: () => c.close(),
  };
}

/** A mount's view of the bus: its messages carry the mount (`m`), and its handlers see only them. */
function linkFor(bus: ClusterBus, mount: string, handlers: Map<string, ReplicaHandler>): ReplicaLink {
  const tag = (message: ReplicaMessage): BusMessage => ({ ...(message as BusMessage), m: mount });
  return {
    replicaId: bus.replicaId,
    send: (to, message, timeoutMs) => bus.forward(to, tag(message), timeoutMs),
    notify: (to, message) => bus.notify(to, tag(message)),
    broadcast: (message, waitMs) => bus.broadcast(tag(message), waitMs),
    on(kind, handler) {
      handlers.set(`${mount}\0${kind}`, handler);
    },
    claim: (key, ttlMs, from) => bus.claim(`${mount}\0${key}`, ttlMs, from),
    ownerOf: (key) => bus.ownerOf(`${mount}\0${key}`),
    async release(key) {
      await bus.release(`${mount}\0${key}`).catch(() => false);
    },
  };
}

/**
 * The two sides of a 2026-07-28 retry whose held call lives on another replica: this replica
 * sends it to the holder (`call.resume`, answered with the call's next result) and relays the
 * progress and log messages the holder sends back (`call.event`) to the client's request; the
 * holder resumes the call as if the retry had come to it, and stops it on `call.cancel`.
 * @see 2026-07-28 basic/patterns/mrtr (the retry carries requestState and inputResponses)
 */
function routeHeldCalls(
  bus: ClusterBus,
  held: HeldCalls,
  handlers: Map<string, ReplicaHandler>,
  limits: ReplicasOptions['limits'],
  requestTimeoutOf: (mount: string) => number,
  log: ClusterLog,
): void {
  const refBase = randomBytes(6).toString('base64url');
  let nextRef = 0;
  /** Requests of this replica waiting on a call held elsewhere, by ref (bounded by the bus's pending forwards). */
  const waiting = new Map<string, RequestContext>();
  /** Calls held here that another replica's client resumed, by sender and ref (bounded by the bus's handling bound). */
  const running = new Map<string, Deadline>();
  const global = (kind: string, h: ReplicaHandler) => handlers.set(`\0${kind}`, h);

  held.resumeElsewhereWith(async (replica, state, ctx) => {
    const ref = `${refBase}.${++nextRef}`;
    waiting.set(ref, ctx);
    const onAbort = () => void bus.notify(replica, { kind: 'call.cancel', m: '', ref });
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const message: BusMessage = {
        kind: 'call.resume',
        m: '',
        ref,
        state,
        method: ctx.method,
        // As text: ids and arguments may hold integers beyond 2^53.
        params: serialize(ctx.params),
        mount: ctx.mount ?? '',
        identity: (ctx.identity ?? null) as never,
        protocolVersion: ctx.protocolVersion,
        clientCapabilities: ctx.clientCapabilities as never,
        ...(ctx.dialect ? { dialect: ctx.dialect } : {}),
      };
      if (ctx.clientInfo) (message as Record<string, unknown>).clientInfo = ctx.clientInfo;
      // As long as the request may run on its mount (the executor's deadline), not the top-level bound.
      const answer = await bus.forward(replica, message, requestTimeoutOf(message.mount as string));
      return parseBody(textOf(answer), limits).value as JsonObject;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      waiting.delete(ref);
    }
  });

  global('call.event', (m) => {
    const ctx = typeof m.ref === 'string' ? waiting.get(m.ref) : undefined;
    if (!ctx) return null;
    if (m.progress) ctx.onProgress(m.progress as ProgressUpdate);
    if (m.log) ctx.onLog(m.log as LogMessage);
    return null;
  });

  global('call.resume', async (m, from) => {
    const ref = String(m.ref);
    const mount = String(m.mount);
    const identity = (m.identity ?? null) as Identity | null;
    const method = String(m.method);
    const params = parseBody(String(m.params), limits).value as JsonObject;
    const call = held.take(String(m.state), method, params, bindingOf({ mount, identity }));
    if (!call) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'requestState is unknown, expired, or bound to another request' });
    // The call's own outcome answers (no race): past the mount's deadline its signal aborts with
    // SWY_ERR_REQ_DEADLINE, and a call.cancel aborts it with SWY_ERR_REQ_CANCELLED.
    const deadline = new Deadline();
    deadline.arm(requestTimeoutOf(mount));
    const key = `${from}\0${ref}`;
    running.set(key, deadline);
    const ctx: RequestContext = {
      method,
      params,
      protocolVersion: String(m.protocolVersion),
      clientInfo: m.clientInfo as Implementation | undefined,
      clientCapabilities: (m.clientCapabilities ?? {}) as JsonObject,
      logLevel: undefined,
      identity,
      mount,
      ...(typeof m.dialect === 'string' ? { dialect: m.dialect } : {}),
      signal: deadline.signal,
      progressToken: undefined,
      onProgress: (p) => void bus.notify(from, { kind: 'call.event', m: '', ref, progress: p as never }),
      onLog: (l) => void bus.notify(from, { kind: 'call.event', m: '', ref, log: l as never }),
      ask: undefined,
    };
    // Counted as held work (HeldCalls.busy): a drain of this replica waits for it within its grace,
    // and cuts it when the grace ends, with the error its own requests get (Executor.close); a
    // reload retiring its upstream instance likewise (HeldCalls.retireResumed).
    const cut = (err: SwitchyardError) => {
      log.info({ from, mount, reason: err.message }, 'held call resumed for another replica cut');
      deadline.abort(err);
    };
    try {
      return serialize(await held.track(resumeCall(call, ctx, held, progressOf), cut, call.owner, call.mount));
    } finally {
      deadline.disarm();
      running.delete(key);
    }
  });

  global('call.cancel', (m, from) => {
    running.get(`${from}\0${String(m.ref)}`)?.abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
    log.debug({ from }, 'held call cancelled by the replica of its client');
    return null;
  });
}
