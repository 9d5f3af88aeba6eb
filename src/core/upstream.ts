// The contract every upstream (embedded demo, stdio child, HTTP server) fulfils for the core.

import type { JsonObject } from './message.js';
import type { CoreNotification, Implementation, RequestContext, SubscriptionFilter } from './request.js';

/** What an upstream says about itself, in era-neutral terms. */
export interface ServerDescription {
  /** Name and version of the upstream server. */
  serverInfo: Implementation;
  /** ServerCapabilities (tools, resources, prompts, logging, completions, …). */
  capabilities: JsonObject;
  /** Optional usage instructions. */
  instructions?: string;
  /** The revision the upstream itself speaks (its era), e.g. `2025-11-25` or `2026-07-28`. */
  upstreamRevision: string;
}

/**
 * The client session a subscription belongs to, and what opens its upstream session where the
 * upstream keeps one per client session (its capabilities, Implementation and revision, the
 * verified caller, and the `Authorization` that mount may forward). A sessionless 2026-07-28
 * client has no `sessionKey`: its subscription goes where its requests go (the upstream session
 * of its principal and capability set).
 */
export type SessionRef = Pick<RequestContext, 'clientCapabilities' | 'clientInfo' | 'protocolVersion' | 'identity' | 'authorization'> & {
  sessionKey: string | undefined;
  /**
   * Sends a server-to-client request to this client session outside any call, on the session's
   * own stream (the 2025 GET stream, the 2024-11-05 SSE stream, stdio), and resolves with the
   * client's result. Present only on a client session's own notification subscription (never for
   * a sessionless 2026-07-28 client, which has no such stream); an upstream session that serves
   * this client session alone (`isolation: per-session`) routes a server `roots/list`,
   * `sampling/createMessage` or `elicitation/create` no call owns through it (docs/upstreams.md,
   * the routing table). Rejects as `RequestContext.ask` does.
   * @throws SwitchyardError SWY_ERR_REQ_INPUT_UNSUPPORTED (capability or mode not declared, a form
   *   the revision cannot express, no stream open), SWY_ERR_REQ_DEADLINE (no answer within
   *   `clientRequestTimeoutMs`), SWY_ERR_SESSION_PENDING_LIMIT (64 server requests of the session
   *   await answers), SWY_ERR_REQ_METHOD_NOT_FOUND (not in the client's revision: elicitation
   *   before 2025-06-18); PeerRpcError (the client's own error)
   * @see 2025-11-25 basic/transports#listening-for-messages-from-the-server; client/roots;
   *   client/sampling; client/elicitation
   */
  ask?: SessionAsk;
  /**
   * Sends this client session a server notification that concerns a request sent with `ask` (a
   * URL-mode elicitation's `notifications/elicitation/complete`) on the same stream; false when
   * nothing carried it (the session ended, no stream open, a revision without it). Present where
   * `ask` is.
   * @see 2025-11-25 client/elicitation#url-mode
   */
  notifyClient?: (method: string, params: JsonObject) => boolean;
};

/** A server-to-client request sent outside any call: method, params, and what takes it back (the upstream's cancellation, its session's end). */
export type SessionAsk = (method: string, params: JsonObject, signal: AbortSignal) => Promise<JsonObject>;

/**
 * How one client session is reached outside any call: the `ask` and `notifyClient` of its own
 * notification subscription (its {@link SessionRef}), and the session's key.
 */
export type SessionReach = Pick<SessionRef, 'sessionKey' | 'notifyClient'> & { ask: SessionAsk };

/** A live subscription: `close()` ends it and releases its upstream interest. */
export interface Subscription {
  close(): void;
}

/**
 * An MCP server the core routes to. Implementations own their outbound I/O.
 * Results are 2026-07-28-shaped: `resultType` is `complete` (or absent, meaning complete) or
 * `input_required`.
 */
export interface Upstream {
  /** Name used in logs and config. */
  readonly name: string;
  /** Starts the upstream (spawns, probes). Resolves when it can serve. @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE */
  start(): Promise<void>;
  /** The upstream's identity and capabilities (available after `start`). */
  describe(): ServerDescription;
  /**
   * Runs one request. Rejects with SwitchyardError (catalogue) or PeerRpcError (the upstream's
   * own JSON-RPC error). Must stop work and reject promptly when `ctx.signal` aborts.
   */
  request(ctx: RequestContext): Promise<JsonObject>;
  /** Delivers matching notifications to `sink` until closed (gateway-wide: not bound to a client session). */
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  /**
   * Delivers matching notifications of client session `ref.sessionKey`'s own upstream session (for
   * a sessionless client, the upstream session its requests use) to `sink` until closed: resource
   * subscriptions are made on that session, and only its updates reach `sink`. Present where the
   * upstream keeps state per client session (stateful HTTP eras with `isolation: per-session`);
   * elsewhere callers use `subscribe`.
   * @throws SwitchyardError SWY_ERR_SUBSCRIPTION_LIMIT (more client sessions with subscribers than `maxSessions`)
   */
  subscribeSession?(ref: SessionRef, filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  /** Stops the upstream: in-flight requests fail with SWY_ERR_UPSTREAM_UNAVAILABLE. */
  close(opts?: UpstreamCloseOptions): Promise<void>;
  /** Forgets what the upstream keeps for client session `sessionKey` (its upstream session). */
  release?(sessionKey: string): void;
  /**
   * Sends a client notification that concerns its own upstream session(s) upstream: those open
   * (or opening) for client session `sessionKey` alone (stateful HTTP eras, `isolation:
   * per-session`); none is opened for it, and nothing is sent where no upstream session is the
   * client's own. Used for `notifications/roots/list_changed` (2025-11-25 client/roots#root-list-changes).
   * @param n the notification, params as the client's era carries them (`{}` for a roots change).
   */
  forwardNotification?(sessionKey: string, n: CoreNotification): void;
}

/** How an upstream is stopped; every member has a default. */
export interface UpstreamCloseOptions {
  /**
   * Each step of a child process's ordered stop (stdin closed, SIGTERM after one step, SIGKILL
   * after two), ms; default `upstreamStopTimeoutMs`. Upstreams without a child ignore it.
   */
  stopStepMs?: number;
}

/** True when a notification matches a subscription filter. */
export function filterMatches(filter: SubscriptionFilter, n: CoreNotification): boolean {
  switch (n.method) {
    case 'notifications/tools/list_changed':
      return !!filter.toolsListChanged;
    case 'notifications/prompts/list_changed':
      return !!filter.promptsListChanged;
    case 'notifications/resources/list_changed':
      return !!filter.resourcesListChanged;
    case 'notifications/resources/updated':
      return !!filter.resourceSubscriptions?.includes(String(n.params.uri));
    case 'notifications/message':
      return !!filter.logMessages;
    default:
      return false;
  }
}

/**
 * One listener of a hub, which is also its Subscription: an object, not a closure over an entry
 * (an idle session holds one for its whole life; tens of thousands may be open).
 */
class HubListener implements Subscription {
  constructor(
    private readonly listeners: Set<HubListener>,
    readonly filter: SubscriptionFilter,
    readonly sink: (n: CoreNotification) => void,
  ) {}

  close(): void {
    this.listeners.delete(this);
  }
}

/** A small fan-out of notifications to filtered sinks, bounded by `max` listeners. */
export class NotificationHub {
  private readonly listeners = new Set<HubListener>();

  /** Adds a listener; returns its Subscription. */
  add(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription {
    const entry = new HubListener(this.listeners, filter, sink);
    this.listeners.add(entry);
    return entry;
  }

  /** Delivers `n` to every listener whose filter matches. */
  emit(n: CoreNotification): void {
    for (const l of this.listeners) {
      if (filterMatches(l.filter, n)) {
        try {
          l.sink(n);
        } catch {
          // A failing sink must not stop delivery to the others.
        }
      }
    }
  }

  /** Every resource URI some listener wants updates for. */
  resourceUris(): Set<string> {
    const out = new Set<string>();
    for (const l of this.listeners) for (const u of l.filter.resourceSubscriptions ?? []) out.add(u);
    return out;
  }

  /** Number of listeners. */
  get size(): number {
    return this.listeners.size;
  }
}

/**
 * Reference-counted interest in resource URIs: the first subscriber of a URI triggers `onFirst`
 * (e.g. `resources/subscribe` upstream), the last one leaving triggers `onLast`.
 */
export class ResourceInterest {
  private readonly counts = new Map<string, number>();
  private readonly onFirst: (uri: string) => void;
  private readonly onLast: (uri: string) => void;

  constructor(onFirst: (uri: string) => void, onLast: (uri: string) => void) {
    this.onFirst = onFirst;
    this.onLast = onLast;
  }

  /** Counts `uris` in; returns the function that counts them out again. */
  add(uris: readonly string[]): () => void {
    for (const u of uris) {
      const n = this.counts.get(u) ?? 0;
      this.counts.set(u, n + 1);
      if (n === 0) this.onFirst(u);
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      for (const u of uris) {
        const n = (this.counts.get(u) ?? 1) - 1;
        if (n > 0) this.counts.set(u, n);
        else {
          this.counts.delete(u);
          this.onLast(u);
        }
      }
    };
  }

  /** True while someone is interested in `uri`. */
  has(uri: string): boolean {
    return this.counts.has(uri);
  }

  /** Every URI someone is interested in. */
  uris(): string[] {
    return [...this.counts.keys()];
  }
}

/**
 * The part of a requested subscription filter a server with `capabilities` can honour: list
 * changes only where it advertises `listChanged`, resource URIs only with `resources.subscribe`
 * (at most {@link MAX_SUBSCRIBED_URIS}, each of at most {@link MAX_SUBSCRIPTION_URI_CHARS} characters,
 * {@link MAX_SUBSCRIBED_URI_CHARS} together; the rest are not honoured). @see 2026-07-28 basic/patterns/subscriptions (acknowledge the honoured subset)
 */
export function honouredFilter(want: SubscriptionFilter, capabilities: Record<string, unknown>): SubscriptionFilter {
  const caps = capabilities as Record<string, { listChanged?: boolean; subscribe?: boolean } | undefined>;
  const out: SubscriptionFilter = {};
  // Only `true` asks (a boolean in the schema): `"yes"` or `1` is not honoured, so not acknowledged.
  if (want.toolsListChanged === true && caps.tools?.listChanged) out.toolsListChanged = true;
  if (want.promptsListChanged === true && caps.prompts?.listChanged) out.promptsListChanged = true;
  if (want.resourcesListChanged === true && caps.resources?.listChanged) out.resourcesListChanged = true;
  if (Array.isArray(want.resourceSubscriptions) && caps.resources?.subscribe) {
    const uris: string[] = [];
    let chars = 0;
    for (const u of want.resourceSubscriptions) {
      if (uris.length >= MAX_SUBSCRIBED_URIS) break;
      if (typeof u !== 'string' || u.length > MAX_SUBSCRIPTION_URI_CHARS || chars + u.length > MAX_SUBSCRIBED_URI_CHARS) continue;
      uris.push(u);
      chars += u.length;
    }
    out.resourceSubscriptions = uris;
  }
  return out;
}

/** Resource URIs one subscriber (a 2025 session, a 2026-07-28 listen) may subscribe to. */
export const MAX_SUBSCRIBED_URIS = 1024;
/** Longest resource URI a subscription takes, characters; a longer one is not honoured (2026-07-28) or refused (2025). */
export const MAX_SUBSCRIPTION_URI_CHARS = 8 * 1024;
/** Characters of all the resource URIs of one subscriber together; past them, no more are taken. */
export const MAX_SUBSCRIBED_URI_CHARS = 64 * 1024;

/**
 * True when every name prefixed `name` + `separator` splits back to `name` where the aggregate
 * splits it (at the first occurrence of `separator`, `splitPrefixed` in src/upstreams/aggregate.ts):
 * the separator's first occurrence in `name + separator` is the one put there. False for an empty
 * name, a name that contains the separator (`a__b`), and one whose end overlaps its start (`x_`
 * with `__`: `x___t` splits as `x` and `_t`, a tool of `x`). A start that overlaps is harmless (`_x__t`).
 */
export function prefixSplitsBack(name: string, separator: string): boolean {
  return name.length > 0 && (name + separator).indexOf(separator) === name.length;
}

/** A list kind whose changes a subscription may ask for. */
export type ListKind = 'tools' | 'prompts' | 'resources';

/** Each list kind, the filter switch that asks for its changes, and the notification that announces one. */
const LIST_CHANGES = [
  ['tools', 'toolsListChanged', 'notifications/tools/list_changed'],
  ['prompts', 'promptsListChanged', 'notifications/prompts/list_changed'],
  ['resources', 'resourcesListChanged', 'notifications/resources/list_changed'],
] as const;

/**
 * Tells every subscriber that asked for them (`filter.toolsListChanged`, …) that the lists of the
 * kinds `changed` names may have changed: `notifications/{kind}/list_changed` with `{}`. A sink
 * that throws is passed over; the others still hear. Used where the gateway itself changes what
 * a list holds (an aggregate's members come or go; a reload changes policy or curation).
 * @see 2025-11-25 server/tools#list-changed-notification (and the prompts and resources equivalents)
 */
export function announceListChanges(
  subscribers: Iterable<{ readonly filter: SubscriptionFilter; readonly sink: (n: CoreNotification) => void }>,
  changed: (kind: ListKind) => boolean,
): void {
  for (const sub of [...subscribers])
    for (const [kind, key, method] of LIST_CHANGES)
      if (changed(kind) && sub.filter[key]) {
        try {
          sub.sink({ method, params: {} });
        } catch {
          // a failing sink must not stop delivery to the others
        }
      }
}
