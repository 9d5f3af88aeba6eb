// Upstream sessions of the stateful HTTP eras (2025 Streamable HTTP, 2024-11-05 HTTP+SSE): one
// keying, one bounded pool, and the subscribers each client session keeps across re-initialized
// upstream sessions.

import { LRUCache } from 'lru-cache';
import { SwitchyardError } from '../../core/errors.js';
import { principalKey, sessionLogId } from '../../core/identity.js';
import type { CoreNotification, RequestContext, SubscriptionFilter } from '../../core/request.js';
import { NotificationHub, type SessionReach, type SessionRef, type Subscription } from '../../core/upstream.js';

/** Who an upstream session is for: the parts of a request (or of a client session) that choose and open it. */
export type PoolRef = Pick<RequestContext, 'sessionKey' | 'clientCapabilities' | 'clientInfo' | 'protocolVersion' | 'identity' | 'authorization'>;

/** How client sessions map to upstream sessions. */
export type Isolation = 'per-session' | 'shared';

/**
 * The pool key of the upstream session `ref` uses: `shared` for everyone, `s:<session>` per
 * client session, and for sessionless (2026-07-28) clients one per principal and capability
 * set, since a session's capabilities are fixed at its handshake (spec digest, translation
 * table: pool sessions by capability set) and one principal's upstream state must not serve another.
 */
export function sessionKeyOf(ref: PoolRef, isolation: Isolation): string {
  if (isolation === 'shared') return 'shared';
  if (ref.sessionKey !== undefined) return `s:${ref.sessionKey}`;
  return `caps:${principalKey(ref.identity ?? null)}:${JSON.stringify(ref.clientCapabilities ?? {})}`;
}

/**
 * A pool key as the log names it: a client session's (`s:<session id>`) by the id's log name
 * (`sessionLogId`, as every line naming that session does), since a session id works as a bearer
 * (a sealed one across replicas); the other keys (`shared`, `control`, `caps:<principal digest>:…`)
 * as they are.
 */
export function poolKeyForLog(key: string): string {
  return isClientSessionKey(key) ? `s:${sessionLogId(key.slice(2))}` : key;
}

/**
 * True when pool key `key` is one client session's own upstream session (`per-session`, a client
 * with an `Mcp-Session-Id` or an HTTP+SSE session): whatever that session is sent outside a
 * request can only be for that client.
 */
export function isClientSessionKey(key: string): boolean {
  return key.startsWith('s:');
}

/**
 * A bounded pool of upstream sessions, opened on first use. Past `max` keys the least recently
 * used session without subscribers is ended to make room; one with subscribers is
 * never ended by that pressure, since nothing would tell its subscribers (a 2026-07-28 listen, a
 * 2025 GET stream's subscriptions) that it went. When every session in the pool has
 * subscribers, a new key is refused instead (SWY_ERR_SESSION_LIMIT).
 */
export class SessionPool<S> {
  private readonly cache: LRUCache<string, Promise<S>>;
  private readonly open: (key: string, ref: PoolRef) => Promise<S>;
  private readonly subscribers: SessionSubscribers;
  private readonly isolation: Isolation;
  private readonly max: number;

  /**
   * @param max sessions kept (`maxSessions`).
   * @param open opens the session for `key` (its handshake done).
   * @param end ends a session that leaves the pool (DELETE, stream closed).
   * @param subscribers the connector's subscribers: a key that {@link SessionSubscribers.has} is held, not ended to make room.
   */
  constructor(o: { max: number; isolation: Isolation; open: (key: string, ref: PoolRef) => Promise<S>; end: (s: S) => void; subscribers: SessionSubscribers }) {
    this.open = o.open;
    this.subscribers = o.subscribers;
    this.isolation = o.isolation;
    this.max = o.max;
    this.cache = new LRUCache<string, Promise<S>>({
      max: o.max,
      dispose: (p) =>
        void p.then(
          (s) => o.end(s),
          () => {},
        ),
    });
  }

  /**
   * The session for `ref`, opened when there is none; a session that fails to open is forgotten.
   * A new key in a full pool first ends the least recently used session without subscribers.
   * @throws SwitchyardError SWY_ERR_SESSION_LIMIT (503) when the pool is full and every session in it has subscribers
   */
  get(ref: PoolRef): { key: string; session: Promise<S> } {
    const key = sessionKeyOf(ref, this.isolation);
    let session = this.cache.get(key);
    if (!session) {
      this.makeRoom();
      const opening = this.open(key, ref);
      session = opening;
      opening.catch(() => {
        if (this.cache.peek(key) === opening) this.cache.delete(key);
      });
      this.cache.set(key, opening);
    }
    return { key, session };
  }

  /**
   * Below `max` keys, nothing; at `max`, ends the least recently used session whose key is not
   * held by subscribers (the cache's own eviction would take the least recently used one whatever it holds).
   * @throws SwitchyardError SWY_ERR_SESSION_LIMIT when every key has subscribers
   */
  private makeRoom(): void {
    if (this.cache.size < this.max) return;
    // rkeys(): least recently used first.
    for (const k of this.cache.rkeys()) {
      if (this.subscribers.has(k)) continue;
      this.cache.delete(k);
      return;
    }
    throw new SwitchyardError('SWY_ERR_SESSION_LIMIT', {
      detail: `all ${this.max} upstream sessions (maxSessions) have subscribers`,
    });
  }

  /** The session under `key` if open or opening, without touching its recency. */
  peek(key: string): Promise<S> | undefined {
    return this.cache.peek(key);
  }

  /**
   * Runs `use` with client session `sessionKey`'s own upstream session once it is open, when one
   * is open or opening now; opens none. Nothing under `isolation: shared` (no upstream session is
   * one client's own), nor when the session fails to open.
   */
  withOwnSession(sessionKey: string, use: (s: S) => void): void {
    if (this.isolation === 'shared') return;
    void this.cache.peek(`s:${sessionKey}`)?.then(use, () => {});
  }

  /** Ends and forgets the session under `key` (it answered 404, or its stream was lost). */
  drop(key: string, which?: Promise<S>): void {
    if (which === undefined || this.cache.peek(key) === which) this.cache.delete(key);
  }

  /** Ends client session `sessionKey`'s upstream session. */
  release(sessionKey: string): void {
    if (this.isolation !== 'shared') this.cache.delete(`s:${sessionKey}`);
  }

  /** Ends every session. */
  clear(): void {
    this.cache.clear();
  }
}

/**
 * The subscribers of each client session's upstream session, by pool key, with the resource
 * URIs they want. Kept apart from the session itself, so that a session re-initialized after
 * a 404 or a lost stream subscribes again to what its clients asked for. Bounded: one entry per
 * pool key, at most `max` keys.
 */
export class SessionSubscribers {
  private readonly byKey = new Map<string, { hub: NotificationHub; uris: Map<string, number>; reaches?: SessionReach[] }>();
  private readonly max: number;

  /** @param max keys with subscribers (`maxSessions`); one more is refused with SWY_ERR_SUBSCRIPTION_LIMIT. */
  constructor(max: number) {
    this.max = max;
  }

  /** True while `key` has subscribers (its pooled session is then never ended to make room: {@link SessionPool}). */
  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** The hub of `key`'s subscribers, if it has any. */
  hubOf(key: string): NotificationHub | undefined {
    return this.byKey.get(key)?.hub;
  }

  /**
   * How to reach `key`'s client session outside any call: the `ask` (and `notifyClient`) of its
   * latest subscriber that brought one (its notification stream; a stream re-subscribing opens
   * the new subscription before it closes the old one); undefined when none is open.
   */
  reachOf(key: string): SessionReach | undefined {
    return this.byKey.get(key)?.reaches?.at(-1);
  }

  /** The resource URIs `key`'s subscribers want. */
  uris(key: string): string[] {
    return [...(this.byKey.get(key)?.uris.keys() ?? [])];
  }

  /** True while one of `key`'s subscribers wants resource `uri`. */
  wants(key: string, uri: string): boolean {
    return this.byKey.get(key)?.uris.has(uri) ?? false;
  }

  /**
   * Refuses a subscriber of a new key when `max` keys have subscribers. Checked before the
   * subscriber's upstream session is opened, so that a refused subscription ends no other
   * session to make room for its own.
   * @throws SwitchyardError SWY_ERR_SUBSCRIPTION_LIMIT
   */
  admit(key: string): void {
    if (!this.byKey.has(key) && this.byKey.size >= this.max) throw new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT');
  }

  /**
   * Adds a subscriber of `key`. `onFirst(uri)` runs when `key` gains interest in a URI,
   * `onLast(uri)` when the last subscriber wanting it leaves. `ref.ask`, when present, is how the
   * subscriber's client session takes a server request outside any call ({@link reachOf}) while
   * the subscription is open.
   * @throws SwitchyardError SWY_ERR_SUBSCRIPTION_LIMIT past `max` keys
   */
  add(
    key: string,
    filter: SubscriptionFilter,
    sink: (n: CoreNotification) => void,
    onFirst: (uri: string) => void,
    onLast: (uri: string) => void,
    ref?: Pick<SessionRef, 'sessionKey' | 'ask' | 'notifyClient'>,
  ): Subscription {
    let entry = this.byKey.get(key);
    if (!entry) {
      this.admit(key);
      entry = { hub: new NotificationHub(), uris: new Map() };
      this.byKey.set(key, entry);
    }
    const e = entry;
    const sub = e.hub.add(filter, sink);
    const reach = ref?.ask ? (ref as SessionReach) : undefined;
    if (reach) (e.reaches ??= []).push(reach);
    const uris = [...new Set(filter.resourceSubscriptions ?? [])];
    for (const u of uris) {
      const n = e.uris.get(u) ?? 0;
      e.uris.set(u, n + 1);
      if (n === 0) onFirst(u);
    }
    let open = true;
    return {
      close: () => {
        if (!open) return;
        open = false;
        sub.close();
        if (reach && e.reaches) {
          const i = e.reaches.lastIndexOf(reach);
          if (i >= 0) e.reaches.splice(i, 1);
          if (e.reaches.length === 0) e.reaches = undefined;
        }
        for (const u of uris) {
          const n = (e.uris.get(u) ?? 1) - 1;
          if (n > 0) e.uris.set(u, n);
          else {
            e.uris.delete(u);
            onLast(u);
          }
        }
        if (e.hub.size === 0 && this.byKey.get(key) === e) this.byKey.delete(key);
      },
    };
  }

  /** Forgets `key`'s subscribers (its client session ended). */
  drop(key: string): void {
    this.byKey.delete(key);
  }
}
