// Redis for replicas: a thin wrapper over node-redis that puts a timeout on every call, tracks
// up/down state, reconnects with bounded exponential backoff and jitter, fails at once while down,
// and keeps pub/sub on its own connection.

import { createHash } from 'node:crypto';
import { createClient, ErrorReply } from 'redis';
import { SwitchyardError } from '../core/errors.js';

/** The logger the cluster modules write to; pino's `Logger` fits it. Untrusted data is nested under keys. */
export interface ClusterLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** `up`: commands are answered; `down`: calls fail at once with `SWY_ERR_CLUSTER_UNAVAILABLE`. */
export type RedisState = 'up' | 'down';

/** Connection state as reported to `/readyz` and to listeners. */
export interface RedisStatus {
  /** `up` when both the command connection and the pub/sub connection are ready. */
  readonly state: RedisState;
  /** The last connection error or timeout seen, kept after recovery for diagnosis. */
  readonly lastError: Error | undefined;
  /** When `state` last changed, ms since the epoch. */
  readonly sinceMs: number;
  /**
   * Set while Redis answers but refuses writes (an `OOM` reply: `maxmemory` reached under
   * `noeviction`; a `READONLY` reply: a read-only replica, e.g. after a failover): the reply's
   * first sentence (its first word the reply's kind) and when the first refusal came, ms since the epoch.
   * Seen on the writes requests make anyway (no extra call); cleared by the next write Redis
   * accepts (a `SET` or `XADD`, or a script whose reply says it wrote: {@link RedisScript.wrote};
   * a script that succeeded without writing proves nothing), and by any change of `state` (a new
   * connection, maybe a new server).
   */
  readonly writesRefused?: { readonly error: string; readonly sinceMs: number };
}

/** What {@link createClusterRedis} takes. Every bound has a default. */
export interface ClusterRedisOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS. The password is never logged. */
  readonly url: string;
  readonly log: ClusterLog;
  /** Time a call may take before it fails with `SWY_ERR_CLUSTER_UNAVAILABLE`, ms (default 1,000). */
  readonly commandTimeoutMs?: number;
  /** Time a TCP connect may take, ms (default 2,000). */
  readonly connectTimeoutMs?: number;
  /** First reconnect delay, ms (default 100); doubles per failed attempt. */
  readonly reconnectBaseMs?: number;
  /** Longest reconnect delay, ms (default 5,000). */
  readonly reconnectMaxMs?: number;
  /** Consecutive call timeouts after which the connection counts as hung and is replaced (default 3). */
  readonly timeoutsBeforeDown?: number;
  /** Calls queued or awaiting a reply per connection (default 10,000); more fail with `SWY_ERR_CLUSTER_UNAVAILABLE`. */
  readonly maxQueuedCommands?: number;
  /** Source of jitter in [0, 1) (default `Math.random`). */
  readonly random?: () => number;
}

/** A Lua script with its SHA-1, run by {@link ClusterRedis.evalScript} (EVALSHA, then EVAL once the server lost it). */
export interface RedisScript {
  readonly source: string;
  readonly sha1: string;
  /**
   * Whether a reply of the script proves that Redis accepted a write (see
   * {@link RedisStatus.writesRefused}): true only for a reply the script gives after a command
   * that a full Redis (`OOM`) and a read-only replica (`READONLY`) both refuse, such as `SET`,
   * `HSET` or `XADD` (not `DEL`, which `OOM` allows). Undefined: no reply proves it.
   */
  readonly wrote?: (reply: unknown) => boolean;
}

/** The shared Redis connection of one replica. */
export interface ClusterRedis {
  /** The current state. */
  readonly status: RedisStatus;
  /** Calls `listener` on every change of `state`; returns a function that stops it. */
  onStatus(listener: (status: RedisStatus) => void): () => void;
  /** Resolves true once up, false if still down after `timeoutMs`. */
  waitUntilUp(timeoutMs: number): Promise<boolean>;
  /**
   * Resolves once each connection has made its first attempt (it is up, or its connect failed),
   * or after `connectTimeoutMs`, whichever comes first; never rejects. A replica that awaits this
   * before serving answers its first requests as soon as Redis is reachable, rather than 503 while
   * the connection it opened a moment ago is still being made; one whose Redis is down starts anyway.
   */
  firstAttempt(): Promise<void>;
  /**
   * Runs one Redis command (`['XADD', key, …]`), with the call timeout.
   * @returns the RESP3 reply as node-redis decodes it (strings, numbers, arrays, objects for maps, null).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (down, timed out, or a Redis busy/loading/OOM reply);
   *   `SWY_ERR_INTERNAL_FAULT` for any other Redis error reply (a bug in the command).
   */
  command(args: readonly string[]): Promise<unknown>;
  /**
   * Runs a Lua script atomically (EVALSHA; EVAL when the server does not have it, e.g. after a restart).
   * @throws as {@link ClusterRedis.command}.
   */
  evalScript(script: RedisScript, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  /**
   * Publishes on a channel (command connection).
   * @returns how many subscribers received it (0: no replica listens on that channel).
   * @throws as {@link ClusterRedis.command}.
   */
  publish(channel: string, message: string): Promise<number>;
  /**
   * Subscribes `listener` to a channel on the pub/sub connection. The
   * subscription outlives outages: it is renewed whenever that connection comes back. Resolves
   * once Redis confirmed it, or at once while down.
   * @throws SwitchyardError `SWY_ERR_INTERNAL_FAULT` past 64 channels (a programming error).
   */
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** Removes every listener of a channel. */
  unsubscribe(channel: string): Promise<void>;
  /** Lets calls in flight finish (up to the call timeout), then closes both connections. */
  close(): Promise<void>;
  /** Closes both connections now; calls in flight fail with `SWY_ERR_CLUSTER_UNAVAILABLE`. */
  destroy(): void;
}

/** Redis replies that mean "cannot serve now", not "bad command": they are retryable. */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|OOM|READONLY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;
const MAX_CHANNELS = 64;
/**
 * A reply that says Redis refuses every write while it still answers reads: `OOM` (full:
 * `maxmemory` under `noeviction`) or `READONLY` (a replica, such as a primary demoted by a
 * failover, with `replica-read-only yes`, the default). Either lasts while the connection does.
 */
const WRITES_REFUSED_REPLY = /^(OOM|READONLY)\b/;
/**
 * Commands whose success shows that Redis accepts writes again: those we send that it refuses
 * when full (COMMAND INFO flag `denyoom`) and as a read-only replica (flag `write`). Not DEL: a
 * full Redis still accepts it. A script shows it only by a reply its {@link RedisScript.wrote}
 * names: one that took a branch without a write (a lease held by another replica, a revoked
 * session) succeeds under `OOM` too, and cleared the flag while every write was still refused.
 */
const WRITES = new Set(['SET', 'XADD']);

/**
 * The delay before reconnect attempt `attempt` (0-based), ms: exponential with "equal jitter",
 * uniformly in [cap/2, cap] where cap = min(maxMs, baseMs × 2^attempt), so replicas that lost
 * Redis together do not reconnect together, and no delay exceeds `maxMs`.
 */
export function reconnectDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(cap / 2 + random() * (cap / 2));
}

/**
 * Defines a Lua script for {@link ClusterRedis.evalScript}; `wrote` tells which of its replies
 * prove a write Redis accepted ({@link RedisScript.wrote}).
 */
export function defineRedisScript(source: string, wrote?: (reply: unknown) => boolean): RedisScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex'), ...(wrote ? { wrote } : {}) };
}

/**
 * The Redis key part for a caller's key (src/core/identity.ts): keys may hold session ids, which
 * are credentials, so they never appear in Redis in the clear.
 */
export { keyDigest } from '../core/identity.js';

/** `redis://user:secret@host:6379/0` → `redis://host:6379/0` for logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '[unparsable url]';
  }
}

/**
 * The text of a Redis connection failure, for the log and `/readyz`: the error's message
 * (`connect ECONNREFUSED 127.0.0.1:6379`, `Socket closed unexpectedly`, a `WRONGPASS` reply),
 * else the messages of the attempts it gathers (a host name with both an IPv4 and an IPv6 address
 * is tried on both, and both failing give an AggregateError with no message), else its code,
 * else its name. Logged as this text, not as the error: an object under `err` that is not an
 * Error was written `{"type":"Object","stack":""}` by pino's serializer (found by a trial).
 */
export function redisErrorText(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown; name?: unknown } | undefined;
  if (typeof e?.message === 'string' && e.message !== '') return e.message;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return [...new Set(e.errors.map((x) => redisErrorText(x)))].join('; ');
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.name === 'string' && e.name !== '') return e.name;
  return String(err);
}

/** The error a call fails with while Redis cannot serve; retryable (Retry-After: 1). */
function unavailable(cause: unknown, detail?: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_CLUSTER_UNAVAILABLE', { cause, detail, headers: { 'Retry-After': '1' } });
}

/** Maps what node-redis throws onto the catalogue. */
function toClusterError(err: unknown, what: string): SwitchyardError {
  if (err instanceof SwitchyardError) return err;
  if (err instanceof ErrorReply) {
    if (UNAVAILABLE_REPLY.test(err.message)) return unavailable(err);
    // The reply text names the command, never its arguments' values; it stays in `cause`, not on the wire.
    return new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: `redis ${what} failed`, cause: err });
  }
  return unavailable(err);
}

type NodeRedisClient = ReturnType<typeof createClient>;

/** A call that got no reply within the call timeout. */
class CallTimeout extends Error {
  override readonly name = 'CallTimeout';
}

/** One node-redis connection and its readiness; replaced whole when it hangs. */
class Link {
  client: NodeRedisClient | undefined;
  up = false;
  lastError: Error | undefined;
  private timeouts = 0;
  private closed = false;
  /** The current client failed and has not been ready since: it waits in its reconnect backoff, or retries. */
  private failing = false;
  /** Channels Redis confirmed on the current client (node-redis renews these itself on reconnect). */
  readonly active = new Set<string>();

  constructor(
    private readonly name: 'command' | 'subscriber',
    private readonly make: () => NodeRedisClient,
    private readonly changed: (link: Link) => void,
    private readonly log: ClusterLog,
    private readonly timeoutsBeforeDown: number,
  ) {}

  start(): void {
    const client = this.make();
    this.client = client;
    this.active.clear();
    this.failing = false;
    const sync = () => {
      if (this.client !== client) return;
      const up = client.isReady;
      if (up !== this.up) {
        this.up = up;
        if (up) {
          this.timeouts = 0;
          this.failing = false;
        }
        this.changed(this);
      }
    };
    // node-redis 6.3 does not look at its own state once a socket connects: a client destroyed
    // while its connect was pending (replaced by retryNow or noteTimeout, or closed with the
    // gateway) connects anyway, renews its subscriptions and stays open, unowned. Every message
    // on its channels would then be delivered twice, and the socket would hold the process open.
    // Its socket exists once it emits `connect`: destroying it then ends it for good.
    client.on('connect', () => {
      if (this.client !== client) client.destroy();
    });
    client.on('ready', sync);
    client.on('end', sync);
    client.on('reconnecting', sync);
    client.on('error', (err: Error) => {
      if (this.client !== client) return;
      const prev = this.lastError;
      this.lastError = err;
      this.failing = true;
      const text = redisErrorText(err);
      this.log.debug({ link: this.name, err: text }, 'cluster redis connection error');
      const before = this.up;
      sync();
      // No change of state (a server never reached, or still down): the status still takes the
      // error when it says something new (a refused password, then nothing listening), so that
      // /readyz names the present cause, not the first; a retry failing alike changes nothing.
      if (this.up === before && (prev === undefined || redisErrorText(prev) !== text)) this.changed(this);
    });
    // connect() settles only when the reconnect strategy gives up (never) or the client closes.
    client.connect().catch(() => {});
  }

  /** A call on this link timed out: after `timeoutsBeforeDown` in a row the server counts as hung and the connection is replaced. */
  noteTimeout(err: Error): void {
    this.lastError = err;
    if (++this.timeouts < this.timeoutsBeforeDown || this.closed) return;
    this.log.warn({ link: this.name, timeouts: this.timeouts }, 'cluster redis connection hung, replacing it');
    const old = this.client;
    this.client = undefined;
    if (this.up) {
      this.up = false;
      this.changed(this);
    }
    old?.destroy();
    this.start();
  }

  noteSuccess(): void {
    this.timeouts = 0;
  }

  /**
   * The other connection to the same server just came back: reconnect now rather than at the end
   * of this one's own backoff (up to `reconnectMaxMs` later, drawn independently), so that the
   * replica is `up` when its first connection is, not seconds after. A client that has not
   * failed (still making its first connection) is left alone.
   */
  retryNow(): void {
    if (this.closed || this.up || !this.failing) return;
    this.log.debug({ link: this.name }, 'cluster redis reconnecting now');
    const old = this.client;
    this.client = undefined;
    try {
      old?.destroy();
    } catch {
      // already closed
    }
    this.start();
  }

  async close(graceMs: number): Promise<void> {
    this.closed = true;
    const c = this.client;
    if (!c) return;
    if (c.isReady) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([c.close().catch(() => {}), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    this.destroy();
  }

  destroy(): void {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    this.up = false;
    try {
      c?.destroy();
    } catch {
      // already closed
    }
  }
}

/**
 * Creates the replica's Redis connection and starts connecting in the background (it never
 * throws for an unreachable Redis: the state stays `down` and calls fail at once until it is up).
 * @throws SwitchyardError `SWY_ERR_CONFIG_INVALID` for a URL that is not `redis://` or `rediss://`.
 * @see https://redis.io/docs/latest/develop/reference/clients/ (client timeouts and reconnection)
 */
export function createClusterRedis(options: ClusterRedisOptions): ClusterRedis {
  const commandTimeoutMs = options.commandTimeoutMs ?? 1_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
  const baseMs = options.reconnectBaseMs ?? 100;
  const maxMs = options.reconnectMaxMs ?? 5_000;
  const random = options.random ?? Math.random;
  const log = options.log;
  let scheme: string;
  try {
    scheme = new URL(options.url).protocol;
  } catch {
    scheme = '';
  }
  if (scheme !== 'redis:' && scheme !== 'rediss:')
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'cluster.redis must be a redis:// or rediss:// URL' });
  const where = redactUrl(options.url);

  const make = (): NodeRedisClient =>
    createClient({
      url: options.url,
      // Fail fast while reconnecting instead of queueing without bound.
      disableOfflineQueue: true,
      commandsQueueMaxLength: options.maxQueuedCommands ?? 10_000,
      // node-redis times out only commands not yet written; the wrapper times every call itself.
      commandOptions: { timeout: commandTimeoutMs },
      socket: {
        connectTimeout: connectTimeoutMs,
        reconnectStrategy: (retries: number) => reconnectDelayMs(retries, baseMs, maxMs, random),
      },
    });

  const listeners = new Set<(s: RedisStatus) => void>();
  let status: RedisStatus = { state: 'down', lastError: undefined, sinceMs: Date.now() };
  const registry = new Map<string, Set<(message: string) => void>>();
  let closed = false;

  /** Waiters of {@link ClusterRedis.firstAttempt}, told of every change (at most one per caller, removed when settled). */
  const attemptWaiters = new Set<() => void>();
  const recompute = (link?: Link) => {
    for (const w of attemptWaiters) w();
    if (link === sub && sub.up) void renewSubscriptions(sub);
    // Redis answers again: the other connection need not wait out its own backoff.
    if (link?.up && !closed) (link === cmd ? sub : cmd).retryNow();
    const up = cmd.up && sub.up;
    const lastError = (!sub.up ? sub.lastError : undefined) ?? cmd.lastError ?? sub.lastError;
    const state: RedisState = up ? 'up' : 'down';
    if (state === status.state) {
      // Down from the start: said once, with the first error (a wrong password, nothing listening),
      // as a change to down is; the retries that follow stay at debug.
      if (state === 'down' && status.lastError === undefined && lastError !== undefined && !closed)
        log.warn({ redis: where, err: redisErrorText(lastError) }, 'cluster redis down');
      status = { ...status, lastError };
      return;
    }
    // A new connection (maybe to a restarted server) says nothing about writes yet.
    status = { state, lastError, sinceMs: Date.now() };
    if (state === 'up') log.info({ redis: where }, 'cluster redis up');
    else if (!closed) log.warn({ redis: where, err: lastError && redisErrorText(lastError) }, 'cluster redis down');
    for (const l of listeners) l(status);
  };

  /** Records what a write's outcome says of Redis accepting writes; logs only a change. */
  const noteWrites = (refused: ErrorReply | undefined) => {
    if (refused === undefined) {
      if (status.writesRefused === undefined) return;
      status = { state: status.state, lastError: status.lastError, sinceMs: status.sinceMs };
      log.info({ redis: where }, 'cluster redis accepts writes');
      return;
    }
    if (status.writesRefused !== undefined || status.state !== 'up') return;
    // The first sentence only: inside a script the reply goes on with the script's SHA and line.
    const error = (/^[^.]*\./.exec(refused.message)?.[0] ?? refused.message).slice(0, 200);
    status = { ...status, writesRefused: { error, sinceMs: Date.now() } };
    log.warn({ redis: where, err: error }, 'cluster redis refuses writes');
  };

  const cmd = new Link('command', make, recompute, log, options.timeoutsBeforeDown ?? 3);
  const sub = new Link('subscriber', make, recompute, log, options.timeoutsBeforeDown ?? 3);

  /**
   * Runs `fn` on a link with the call timeout, mapping every failure onto the catalogue. `wrote`
   * says whether its reply proves a write Redis accepted (which clears `writesRefused`).
   */
  async function call<T>(link: Link, what: string, fn: (c: NodeRedisClient) => Promise<T>, wrote?: (reply: T) => boolean): Promise<T> {
    const client = link.client;
    if (closed || !link.up || !client) throw unavailable(link.lastError, closed ? 'closed' : undefined);
    let timer: NodeJS.Timeout | undefined;
    const pending = fn(client);
    // A reply that arrives after the timeout (or a rejection after the connection is replaced) is dropped.
    pending.catch(() => {});
    try {
      const out = await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new CallTimeout(`redis ${what} timed out after ${commandTimeoutMs} ms`)), commandTimeoutMs);
        }),
      ]);
      link.noteSuccess();
      if (wrote?.(out)) noteWrites(undefined);
      return out;
    } catch (err) {
      if (err instanceof CallTimeout) {
        link.noteTimeout(err);
        throw unavailable(err, `redis ${what} timed out`);
      }
      if (err instanceof ErrorReply && WRITES_REFUSED_REPLY.test(err.message)) noteWrites(err);
      throw toClusterError(err, what);
    } finally {
      clearTimeout(timer);
    }
  }

  // One listener per channel, handed to node-redis every time: it keeps a SUBSCRIBE's listener once
  // the reply comes, even after the call timed out here, and a Set of one function cannot hold it twice.
  const dispatchers = new Map<string, (message: string) => void>();
  const dispatch = (channel: string) => {
    let d = dispatchers.get(channel);
    if (!d) {
      d = (message: string) => {
        for (const l of registry.get(channel) ?? []) {
          try {
            l(message);
          } catch (err) {
            log.error({ err, channel }, 'cluster redis subscriber threw');
          }
        }
      };
      dispatchers.set(channel, d);
    }
    return d;
  };

  async function activate(link: Link, channel: string): Promise<void> {
    if (link.active.has(channel)) return;
    await call(link, 'SUBSCRIBE', (c) => c.subscribe(channel, dispatch(channel)));
    link.active.add(channel);
  }

  async function renewSubscriptions(link: Link): Promise<void> {
    for (const channel of registry.keys()) {
      try {
        await activate(link, channel);
      } catch (err) {
        log.warn({ channel, err: redisErrorText(err) }, 'cluster redis subscribe failed');
      }
    }
  }

  cmd.start();
  sub.start();

  return {
    get status() {
      return status;
    },
    onStatus(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    waitUntilUp(timeoutMs) {
      if (status.state === 'up') return Promise.resolve(true);
      return new Promise((resolve) => {
        const off = this.onStatus((s) => {
          if (s.state !== 'up') return;
          clearTimeout(timer);
          off();
          resolve(true);
        });
        const timer = setTimeout(() => {
          off();
          resolve(status.state === 'up');
        }, timeoutMs);
      });
    },
    firstAttempt() {
      const attempted = () => closed || ((cmd.up || cmd.lastError !== undefined) && (sub.up || sub.lastError !== undefined));
      if (attempted()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          attemptWaiters.delete(check);
          resolve();
        };
        const check = () => {
          if (attempted()) done();
        };
        const timer = setTimeout(done, connectTimeoutMs);
        attemptWaiters.add(check);
      });
    },
    command(args) {
      const what = args[0] ?? '';
      return call(cmd, what, (c) => c.sendCommand([...args]), WRITES.has(what) ? () => true : undefined);
    },
    async evalScript(script, keys, args) {
      const rest = [String(keys.length), ...keys, ...args];
      try {
        return await call(cmd, 'EVALSHA', (c) => c.sendCommand(['EVALSHA', script.sha1, ...rest]), script.wrote);
      } catch (err) {
        if (!(err instanceof SwitchyardError && err.cause instanceof ErrorReply && err.cause.message.startsWith('NOSCRIPT'))) throw err;
        return call(cmd, 'EVAL', (c) => c.sendCommand(['EVAL', script.source, ...rest]), script.wrote);
      }
    },
    async publish(channel, message) {
      return Number(await call(cmd, 'PUBLISH', (c) => c.publish(channel, message)));
    },
    async subscribe(channel, listener) {
      let set = registry.get(channel);
      if (!set) {
        if (registry.size >= MAX_CHANNELS) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: `more than ${MAX_CHANNELS} redis channels` });
        registry.set(channel, (set = new Set()));
      }
      set.add(listener);
      if (sub.up) await activate(sub, channel);
    },
    async unsubscribe(channel) {
      registry.delete(channel);
      dispatchers.delete(channel);
      sub.active.delete(channel);
      // Also when the channel is not active: a SUBSCRIBE that timed out here may have gone through
      // since, and its listener (this channel's dispatcher, now forgotten) must not stay with node-redis.
      if (sub.up) await call(sub, 'UNSUBSCRIBE', (c) => c.unsubscribe(channel)).catch(() => {});
    },
    async close() {
      closed = true;
      await Promise.all([cmd.close(commandTimeoutMs), sub.close(commandTimeoutMs)]);
      recompute();
      listeners.clear();
    },
    destroy() {
      closed = true;
      cmd.destroy();
      sub.destroy();
      recompute();
      listeners.clear();
    },
  };
}
