// The replica bus: which replica holds a live stream or call (ownership leases in Redis), and
// request/answer messages to that replica over Redis pub/sub, so no load balancer stickiness is needed.

import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Catalogue, SwitchyardError, type ErrorCode } from '../core/errors.js';
import { defineRedisScript, keyDigest, redisErrorText, type ClusterLog, type ClusterRedis } from './redis.js';

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A message between replicas. `kind` says what it is (the session code defines the kinds, e.g.
 * `sse.write` or `call.answer`); the other members are the kind's own.
 */
export interface BusMessage {
  readonly kind: string;
  readonly [member: string]: Json;
}

/** Answers a message forwarded by replica `from`; what it returns (or throws) goes back to the sender. */
export type ForwardHandler = (message: BusMessage, from: string) => Json | Promise<Json>;

/** What {@link createClusterBus} takes. */
export interface ClusterBusOptions {
  readonly redis: ClusterRedis;
  /** This replica's id, unique in the cluster, 1–64 of `[A-Za-z0-9._-]` (see {@link defaultReplicaId}). */
  readonly replicaId: string;
  readonly log: ClusterLog;
  /** Time `forward` waits for the answer, ms (default 5,000). */
  readonly forwardTimeoutMs?: number;
  /** Largest message or answer as JSON, UTF-8 bytes (default 4 MiB; Redis cuts pub/sub clients past 32 MiB of backlog). */
  readonly maxMessageBytes?: number;
  /**
   * How long a forward may go unanswered before this replica asks Redis whether its target still
   * listens, ms (default 250, at most `forwardTimeoutMs`); later checks come every `forwardTimeoutMs`.
   * One shared sweep runs every `ownerCheckMs` while forwards wait (see `createClusterBus`).
   */
  readonly ownerCheckMs?: number;
  /** Forwards awaiting answers, and forwarded messages being handled, each (default 1,024). */
  readonly maxPendingForwards?: number;
  /** Key and channel prefix (default `swy:`). */
  readonly keyPrefix?: string;
}

/** Ownership of streams and held calls across replicas, and messages to their owners. */
export interface ClusterBus {
  readonly replicaId: string;
  /**
   * Takes or renews the lease on `ownerKey` (a live HTTP+SSE stream, a 2025 GET stream, a held
   * upstream call) for `ttlMs`; renew it before it lapses while the stream lives.
   * @param from take the lease over from this holder (one found gone); absent: only a free lease or our own.
   * @returns true when this replica holds it now; false when another replica does.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` while Redis is down.
   */
  claim(ownerKey: string, ttlMs: number, from?: string): Promise<boolean>;
  /**
   * Gives up the lease, if this replica holds it.
   * @returns true when it did.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` while Redis is down.
   */
  release(ownerKey: string): Promise<boolean>;
  /**
   * The replica holding `ownerKey`, or undefined when no lease is live.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` while Redis is down.
   */
  ownerOf(ownerKey: string): Promise<string | undefined>;
  /**
   * Sends `message` to replica `replicaId` and waits for its handler's answer. A message to this
   * replica itself goes straight to the local handler.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_OWNER_GONE` (no replica listens on that id, or it has no
   *   handler, or it stopped listening before it answered: checked `ownerCheckMs` after sending, then
   *   every `forwardTimeoutMs`),
   *   `SWY_ERR_CLUSTER_FORWARD_TIMEOUT` (no answer within `forwardTimeoutMs`),
   *   `SWY_ERR_CLUSTER_MESSAGE_TOO_LARGE`, `SWY_ERR_CLUSTER_FORWARD_LIMIT`, `SWY_ERR_CLUSTER_UNAVAILABLE`,
   *   `SWY_ERR_ADMISSION_SHUTTING_DOWN` (this bus closed first), or the error the handler threw
   *   (same catalogue code; anything else as `SWY_ERR_INTERNAL_FAULT`).
   * @param timeoutMs time to wait for the answer, ms (default `forwardTimeoutMs`), for messages
   *   whose work takes longer (a held call resumed on its replica runs up to the request deadline).
   */
  forward(replicaId: string, message: BusMessage, timeoutMs?: number): Promise<Json>;
  /**
   * Sends `message` to replica `replicaId` without an answer (its handler's result is dropped).
   * Messages from one replica arrive in the order they were sent.
   * @returns true when a replica listens on that id; false otherwise, or when the message could
   *   not be sent (Redis down, too large, closed). Never throws.
   */
  notify(replicaId: string, message: BusMessage): Promise<boolean>;
  /**
   * Sends `message` to every other replica (channel `<prefix>all`). Never throws (a broadcast
   * that cannot be sent is logged).
   * @param waitMs wait up to this long, ms, until every replica that received it has handled it
   *   (each acknowledges after its handler ran); absent: do not wait.
   * @returns how many other replicas acknowledged it (0 when not waiting, or when not sent).
   */
  broadcast(message: BusMessage, waitMs?: number): Promise<number>;
  /**
   * Sets the handler for messages sent to this replica: forwarded ones (its answer goes back),
   * notes and broadcasts (its result is dropped). One handler; a later call replaces it.
   */
  onForward(handler: ForwardHandler): void;
  /** Stops listening; forwards still waiting fail with `SWY_ERR_ADMISSION_SHUTTING_DOWN`. */
  close(): Promise<void>;
}

const REPLICA_ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_LEASE_MS = 24 * 3_600_000;

/** A lease script's reply 1 follows its `SET` (a write Redis accepted); 0 wrote nothing. */
const leaseSet = (reply: unknown) => Number(reply) === 1;

/** KEYS[1] lease; ARGV[1] replica, ARGV[2] TTL ms. Takes a free lease or renews our own. */
const CLAIM = defineRedisScript(
  `local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`,
  leaseSet,
);

/** KEYS[1] lease; ARGV[1] replica, ARGV[2] TTL ms, ARGV[3] the holder to take it from. */
const TAKE_OVER = defineRedisScript(
  `local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] or cur == ARGV[3] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`,
  leaseSet,
);

/** KEYS[1] lease; ARGV[1] replica. Deletes the lease only if we hold it. */
const RELEASE = defineRedisScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);

/**
 * A replica id from the host name (the pod name under Kubernetes) and 4 random bytes, so two
 * processes on one host never share an id.
 */
export function defaultReplicaId(): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 48) || 'replica';
  return `${host}-${randomBytes(4).toString('hex')}`;
}

type Envelope =
  | { t: 'req'; id: string; from: string; msg: BusMessage }
  | { t: 'note'; from: string; msg: BusMessage; ack?: string }
  | { t: 'ack'; id: string }
  | { t: 'res'; id: string; ok: true; value: Json }
  | { t: 'res'; id: string; ok: false; code: string; message: string; data?: Record<string, unknown>; headers?: Record<string, string> };

/** A forward awaiting its answer (see `pending` in {@link createClusterBus}). */
interface PendingForward {
  resolve: (v: Json) => void;
  reject: (e: unknown) => void;
  /** Its `forwardTimeoutMs` (or caller's) timer. */
  timer: NodeJS.Timeout;
  /** The replica asked. */
  target: string;
  /** performance.now() ms when the owner sweep next asks whether `target` listens. */
  checkAt: number;
}

function isBusMessage(v: unknown): v is BusMessage {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { kind?: unknown }).kind === 'string';
}

/** Turns an error answer back into the error the handler threw (same code), or an internal fault. */
function errorFrom(env: Extract<Envelope, { ok: false }>): SwitchyardError {
  if (typeof env.code === 'string' && Object.hasOwn(Catalogue, env.code) && typeof env.message === 'string')
    return new SwitchyardError(env.code as ErrorCode, { message: env.message, data: env.data, headers: env.headers });
  return new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'malformed answer from another replica' });
}

/**
 * Creates this replica's bus and subscribes its channel (`<prefix>bus:<replicaId>`); while Redis
 * is down the subscription starts when it comes up.
 * @throws SwitchyardError `SWY_ERR_CONFIG_INVALID` for a malformed replica id.
 */
export async function createClusterBus(options: ClusterBusOptions): Promise<ClusterBus> {
  const { redis, replicaId, log } = options;
  if (!REPLICA_ID.test(replicaId))
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'cluster replica id must be 1-64 characters of A-Z a-z 0-9 . _ -' });
  const prefix = options.keyPrefix ?? 'swy:';
  const timeoutMs = options.forwardTimeoutMs ?? 5_000;
  const maxBytes = options.maxMessageBytes ?? 4 * 1024 * 1024;
  const maxPending = options.maxPendingForwards ?? 1_024;
  const channelOf = (id: string) => `${prefix}bus:${id}`;
  const everyone = `${prefix}all`;
  const leaseKey = (ownerKey: string) => `${prefix}own:${keyDigest(ownerKey)}`;

  const ownerCheckMs = Math.max(1, Math.min(options.ownerCheckMs ?? 250, timeoutMs));

  /** Forwards awaiting answers, by id (at most `maxPending`); `checkAt` is Infinity until PUBLISH returned. */
  const pending = new Map<string, PendingForward>();
  /** Broadcasts waiting for acknowledgements, by id (bounded as forwards are). */
  const acks = new Map<string, { got: number; want: number; done: (n: number) => void }>();
  let handling = 0;
  let handler: ForwardHandler | undefined;
  let closed = false;
  let nextId = 0;
  const idBase = randomBytes(6).toString('base64url');

  /**
   * The owner sweep. PUBLISH counts a replica SIGKILLed a moment before (until Redis has read the
   * close of its sockets: tens of ms in a trial) as a receiver, and the message is lost: the
   * forward would wait its whole timeout. One timer, armed while forwards wait, runs every
   * `ownerCheckMs`; it groups the forwards due for a check by target and asks Redis once per
   * target (`PUBSUB NUMSUB`: at most one command per target per sweep, so never more than
   * `maxPendingForwards`; one sweep at a time, each command under the Redis command timeout). No subscriber: those forwards fail with SWY_ERR_CLUSTER_OWNER_GONE.
   * A target that still listens is asked again `forwardTimeoutMs` later, so a slow owner still
   * gets SWY_ERR_CLUSTER_FORWARD_TIMEOUT and a held call resumed elsewhere (which may wait up to
   * the request deadline) learns of its owner's death. While Redis is down forwards keep waiting.
   * A forward answered within `ownerCheckMs` costs no timer and no command of its own.
   * @see Redis PUBSUB NUMSUB (subscribers of a channel, pattern subscribers not counted)
   */
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping = false;
  const armSweep = (): void => {
    if (sweepTimer !== undefined || sweeping || closed || pending.size === 0) return;
    sweepTimer = setTimeout(() => {
      sweepTimer = undefined;
      sweeping = true;
      void sweepOwners().finally(() => {
        sweeping = false;
        armSweep();
      });
    }, ownerCheckMs);
    sweepTimer.unref();
  };
  async function sweepOwners(): Promise<void> {
    const now = performance.now();
    const due = new Map<string, Array<[string, PendingForward]>>();
    for (const [id, p] of pending) {
      if (p.checkAt > now) continue;
      p.checkAt = now + timeoutMs;
      const list = due.get(p.target);
      if (list) list.push([id, p]);
      else due.set(p.target, [[id, p]]);
    }
    await Promise.all(
      [...due].map(async ([target, list]) => {
        let listeners: number;
        try {
          listeners = Number(((await redis.command(['PUBSUB', 'NUMSUB', channelOf(target)])) as unknown[])[1]);
        } catch {
          return;
        }
        if (listeners !== 0) return;
        for (const [id, p] of list) {
          if (pending.get(id) !== p) continue;
          clearTimeout(p.timer);
          pending.delete(id);
          p.reject(new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: `replica ${target} stopped listening before it answered` }));
        }
      }),
    );
  }

  const tooLarge = (bytes: number) => new SwitchyardError('SWY_ERR_CLUSTER_MESSAGE_TOO_LARGE', { detail: `${bytes} bytes, limit ${maxBytes}` });

  async function answer(to: string, id: string, run: () => Promise<Json>): Promise<void> {
    let env: Envelope;
    try {
      env = { t: 'res', id, ok: true, value: await run() };
    } catch (err) {
      if (!(err instanceof SwitchyardError)) log.error({ err, from: to }, 'cluster forward handler failed');
      const e = err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_INTERNAL_FAULT');
      env = {
        t: 'res',
        id,
        ok: false,
        code: e.code,
        message: e.message,
        ...(e.data ? { data: e.data } : {}),
        ...(e.headers ? { headers: { ...e.headers } } : {}),
      };
    }
    let text: string | undefined;
    try {
      text = JSON.stringify(env);
    } catch (err) {
      log.error({ err, from: to }, 'cluster forward answer is not JSON');
    }
    if (text === undefined)
      text = JSON.stringify({ t: 'res', id, ok: false, code: 'SWY_ERR_INTERNAL_FAULT', message: Catalogue.SWY_ERR_INTERNAL_FAULT.message });
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) {
      const e = tooLarge(bytes);
      text = JSON.stringify({ t: 'res', id, ok: false, code: e.code, message: e.message });
    }
    try {
      await redis.publish(channelOf(to), text);
    } catch (err) {
      log.warn({ to, err: redisErrorText(err) }, 'cluster forward answer not sent');
    }
  }

  function onMessage(text: string): void {
    if (Buffer.byteLength(text, 'utf8') > maxBytes) {
      log.warn({ bytes: Buffer.byteLength(text, 'utf8') }, 'cluster bus message over the limit dropped');
      return;
    }
    let env: Envelope;
    try {
      env = JSON.parse(text) as Envelope;
    } catch {
      log.warn({}, 'cluster bus message not JSON dropped');
      return;
    }
    if (env === null || typeof env !== 'object') return;
    if (env.t === 'note') return onNote(env);
    if (typeof env.id !== 'string') return;
    if (env.t === 'ack') {
      const a = acks.get(env.id);
      if (a && ++a.got >= a.want) a.done(a.got);
      return;
    }
    if (env.t === 'res') {
      const p = pending.get(env.id);
      if (!p) return; // answered after its timeout
      pending.delete(env.id);
      clearTimeout(p.timer);
      if (env.ok === true) p.resolve(env.value ?? null);
      else p.reject(errorFrom(env));
      return;
    }
    if (env.t !== 'req' || typeof env.from !== 'string' || !REPLICA_ID.test(env.from) || !isBusMessage(env.msg)) return;
    const { from, id, msg } = env;
    if (closed || !handler) {
      void answer(from, id, async () => {
        throw new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: 'that replica handles no forwarded messages' });
      });
      return;
    }
    if (handling >= maxPending) {
      void answer(from, id, async () => {
        throw new SwitchyardError('SWY_ERR_CLUSTER_FORWARD_LIMIT');
      });
      return;
    }
    handling++;
    const h = handler;
    void answer(from, id, async () => h(msg, from)).finally(() => handling--);
  }

  /** A message without an answer: handled within the same bound as forwards; its result is dropped. */
  function onNote(env: Extract<Envelope, { t: 'note' }>): void {
    if (typeof env.from !== 'string' || !REPLICA_ID.test(env.from) || env.from === replicaId || !isBusMessage(env.msg)) return;
    const h = handler;
    if (closed || !h) return;
    if (handling >= maxPending) {
      log.warn({ kind: env.msg.kind, from: env.from }, 'cluster bus note dropped at the bound');
      return;
    }
    handling++;
    const ack = typeof env.ack === 'string' ? env.ack : undefined;
    void runNote(h, env.msg, env.from).finally(() => {
      handling--;
      if (ack !== undefined)
        redis.publish(channelOf(env.from), JSON.stringify({ t: 'ack', id: ack } satisfies Envelope)).catch((err: unknown) => {
          log.warn({ to: env.from, err: redisErrorText(err) }, 'cluster broadcast acknowledgement not sent');
        });
    });
  }

  async function runNote(h: ForwardHandler, msg: BusMessage, from: string): Promise<void> {
    try {
      await h(msg, from);
    } catch (err) {
      if (!(err instanceof SwitchyardError)) log.error({ err, from }, 'cluster forward handler failed');
    }
  }

  /** Publishes a note (asking for acknowledgements as `ack`); resolves with the number of receivers (0 when it could not be sent). */
  async function publishNote(channel: string, message: BusMessage, ack?: string): Promise<number> {
    if (closed || !isBusMessage(message)) return 0;
    const text = JSON.stringify({ t: 'note', from: replicaId, msg: message, ...(ack !== undefined ? { ack } : {}) } satisfies Envelope);
    if (Buffer.byteLength(text, 'utf8') > maxBytes) {
      log.warn({ kind: message.kind, bytes: Buffer.byteLength(text, 'utf8') }, 'cluster bus note over the limit not sent');
      return 0;
    }
    try {
      return await redis.publish(channel, text);
    } catch (err) {
      log.warn({ kind: message.kind, err: redisErrorText(err) }, 'cluster bus note not sent');
      return 0;
    }
  }

  // Another replica already listening on this id's channel (a `cluster.replicaId` copied into
  // every replica's config) would take this one's messages, and this one its: every forward then
  // goes to whichever answers first (an HTTP+SSE client could not even connect: 404). Said once,
  // at error; not refused, since a replica killed a moment ago may still be counted as listening.
  // A Redis that is down cannot say: nothing is logged then.
  // The reply is [channel, count]; anything else (a Redis-compatible proxy's null) counts as none.
  const others = await redis
    .command(['PUBSUB', 'NUMSUB', channelOf(replicaId)])
    .then((reply) => (Array.isArray(reply) ? Number(reply[1]) || 0 : 0))
    .catch(() => 0);
  if (others > 0) log.error({ replicaId, listeners: others }, 'cluster replica id in use by another replica');
  await redis.subscribe(channelOf(replicaId), onMessage);
  await redis.subscribe(everyone, onMessage);

  return {
    replicaId,
    async claim(ownerKey, ttlMs, from) {
      if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_LEASE_MS)
        throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'claim: ttlMs must be an integer from 1 ms to 24 h' });
      if (from !== undefined) return Number(await redis.evalScript(TAKE_OVER, [leaseKey(ownerKey)], [replicaId, String(ttlMs), from])) === 1;
      return Number(await redis.evalScript(CLAIM, [leaseKey(ownerKey)], [replicaId, String(ttlMs)])) === 1;
    },
    async release(ownerKey) {
      return Number(await redis.evalScript(RELEASE, [leaseKey(ownerKey)], [replicaId])) === 1;
    },
    async ownerOf(ownerKey) {
      const v = await redis.command(['GET', leaseKey(ownerKey)]);
      return typeof v === 'string' ? v : undefined;
    },
    async forward(target, message, waitMs = timeoutMs) {
      if (closed) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
      if (!isBusMessage(message)) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'forward: a message is an object with a string kind' });
      if (!REPLICA_ID.test(target)) throw new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: 'no such replica' });
      if (pending.size >= maxPending) throw new SwitchyardError('SWY_ERR_CLUSTER_FORWARD_LIMIT');
      const id = `${idBase}.${++nextId}`;
      const text = JSON.stringify({ t: 'req', id, from: replicaId, msg: message } satisfies Envelope);
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes > maxBytes) throw tooLarge(bytes);
      if (target === replicaId) {
        if (!handler) throw new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: 'that replica handles no forwarded messages' });
        // Same semantics as a remote answer: the handler sees a copy, and only catalogue errors keep their code.
        try {
          return await handler((JSON.parse(text) as { msg: BusMessage }).msg, replicaId);
        } catch (err) {
          if (err instanceof SwitchyardError) throw err;
          log.error({ err, from: replicaId }, 'cluster forward handler failed');
          throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err });
        }
      }
      const answered = new Promise<Json>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new SwitchyardError('SWY_ERR_CLUSTER_FORWARD_TIMEOUT', { detail: `no answer from ${target} within ${waitMs} ms` }));
        }, waitMs);
        pending.set(id, { resolve, reject, timer, target, checkAt: Number.POSITIVE_INFINITY });
      });
      // The answer may arrive before PUBLISH returns; it is registered first.
      answered.catch(() => {});
      let receivers: number;
      try {
        receivers = await redis.publish(channelOf(target), text);
      } catch (err) {
        const p = pending.get(id);
        if (p) clearTimeout(p.timer);
        pending.delete(id);
        throw err;
      }
      if (receivers === 0) {
        const p = pending.get(id);
        if (p) {
          clearTimeout(p.timer);
          pending.delete(id);
          throw new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: `no replica ${target} is listening` });
        }
      }
      const p = pending.get(id);
      if (p) {
        p.checkAt = performance.now() + ownerCheckMs;
        armSweep();
      }
      return answered;
    },
    async notify(target, message) {
      if (!REPLICA_ID.test(target)) return false;
      if (target !== replicaId) return (await publishNote(channelOf(target), message)) > 0;
      const h = handler;
      if (closed || !h || !isBusMessage(message)) return false;
      // The same copy semantics as a remote note.
      await runNote(h, (JSON.parse(JSON.stringify({ msg: message })) as { msg: BusMessage }).msg, replicaId);
      return true;
    },
    async broadcast(message, waitMs) {
      if (waitMs === undefined || acks.size >= maxPending) {
        await publishNote(everyone, message);
        return 0;
      }
      const id = `${idBase}.${++nextId}`;
      let done!: (n: number) => void;
      const acknowledged = new Promise<number>((resolve) => (done = resolve));
      const entry = { got: 0, want: Number.POSITIVE_INFINITY, done };
      // Acknowledgements may come back before PUBLISH returns: the entry is registered first.
      acks.set(id, entry);
      const timer = setTimeout(() => done(entry.got), waitMs);
      try {
        // Every replica, this one included, listens on the broadcast channel; this one does not answer.
        entry.want = (await publishNote(everyone, message, id)) - 1;
        if (entry.got >= entry.want) done(entry.got);
        return await acknowledged;
      } finally {
        clearTimeout(timer);
        acks.delete(id);
      }
    },
    onForward(h) {
      handler = h;
    },
    async close() {
      closed = true;
      clearTimeout(sweepTimer);
      sweepTimer = undefined;
      for (const a of acks.values()) a.done(a.got);
      await redis.unsubscribe(everyone);
      await redis.unsubscribe(channelOf(replicaId));
      for (const [id, p] of pending) {
        clearTimeout(p.timer);
        pending.delete(id);
        p.reject(new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN'));
      }
    },
  };
}
