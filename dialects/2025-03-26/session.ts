// One initialize-era client session (2024-11-05 … 2025-11-25) on any transport: the state this
// era keeps so that the core can stay self-describing per request, and the shim that turns
// `input_required` results into real server-to-client requests.

import { randomUUID } from 'node:crypto';
import { Cancellation, watchAbort } from '../../src/core/cancel.js';
import type { CoreLog, Sink } from '../../src/core/exchange.js';
import { logFailure, PeerRpcError, SwitchyardError } from '../../src/core/errors.js';
import { ServerCancelled } from '../../src/core/calls.js';
import type { TraceContext } from '../../src/core/trace.js';
import type { Executor, SubscriptionInit } from '../../src/core/executor.js';
import { principalKey, sessionLogId, type Identity } from '../../src/core/identity.js';
import { capabilityNames, INPUT_METHODS, missingCapabilities, capabilitiesForUpstreams } from '../../src/core/gate.js';
import {
  errorResponse,
  idKey,
  resultResponse,
  type JsonObject,
  type RequestId,
  type RpcMessage,
  type RpcRequest,
  type RpcResponse,
} from '../../src/core/message.js';
import { LOG_LEVELS, levelAdmits, type CoreNotification, type Implementation, type SubscriptionFilter } from '../../src/core/request.js';
import { checkedSink, strictRejection, type MessageValidator } from '../../src/core/strict.js';
import { MAX_SUBSCRIBED_URI_CHARS, MAX_SUBSCRIBED_URIS, MAX_SUBSCRIPTION_URI_CHARS, type Subscription } from '../../src/core/upstream.js';
import type { SubscriberContext } from '../../src/core/interceptor.js';
import {
  encodeError,
  encodeResult,
  encodeServerRequest,
  eraHasServerNotification,
  eraClientCapabilities,
  eraHasServerRequest,
  initializeResult,
  negotiate,
  replyStatusOf,
  serverRequestUnfit,
} from './codec.js';

/**
 * Requests a session answers itself (its lifecycle and its own state), never sent upstream: each
 * is still observed as a request (`Executor.answerLocally`). `initialize` here is one inside an
 * open session, which is refused (SWY_ERR_SESSION_ALREADY_INITIALIZED).
 */
const LOCAL_METHODS: ReadonlySet<string> = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

/** Session bounds (from limits.ts). */
export interface SessionLimits {
  maxInputRounds: number;
  clientRequestTimeoutMs: number;
  /** Server-to-client requests awaiting answers per session. */
  maxPendingClientRequests: number;
  /** Client requests in flight per session. */
  maxInFlightPerSession: number;
}

/** Fixed per-session bounds (docs/config.md, "Fixed bounds"). */
const MAX_PENDING_CLIENT_REQUESTS = 64;
const MAX_INFLIGHT_PER_SESSION = 256;
/**
 * Characters of a session's client info and capabilities together (their JSON): what a session
 * keeps for its whole life, 10,000 sessions at most (with `cluster`, the sealed id bounds them lower).
 */
const MAX_CLIENT_STATE_CHARS = 16 * 1024;

/**
 * The session bounds for the configured limits: input rounds and client answer time from
 * `limits`, pending server requests and in-flight requests fixed (64, 256).
 */
export function sessionLimits(limits: { maxInputRounds: number; clientRequestTimeoutMs: number }): SessionLimits {
  return {
    maxInputRounds: limits.maxInputRounds,
    clientRequestTimeoutMs: limits.clientRequestTimeoutMs,
    maxPendingClientRequests: MAX_PENDING_CLIENT_REQUESTS,
    maxInFlightPerSession: MAX_INFLIGHT_PER_SESSION,
  };
}

/** What a session is built with. */
export interface SessionDeps {
  executor: Executor;
  limits: SessionLimits;
  log: CoreLog;
  /** The client dialect id put on request contexts (`2025-03-26`, `2024-11-05`, `stdio`). */
  dialect: string;
  /** Strict mode: validates this session's messages against its era's schema. */
  strict?: MessageValidator;
  /**
   * Appended to the ids of server-to-client requests (`swy-<n><suffix>`), so that the client's
   * response, wherever it lands, names the replica waiting for it.
   */
  serverIdSuffix?: string;
  /** The name a session id has in logs (an id is a credential; default: its digest, `sessionLogId`). */
  logId?: (sessionId: string) => string;
  /**
   * Persists what changed after the session id was issued (log level, resource subscriptions);
   * awaited before the request that changed it is answered.
   * @throws SwitchyardError (the request then fails with it)
   */
  onChange?: (session: ClientSession) => Promise<void>;
}

/**
 * The serializable part of a session, fixed at `initialize`: what a sealed session id carries.
 * Short member names keep the id small (it travels in a header).
 */
export interface SessionState {
  /** The negotiated revision. */
  v: string;
  /** The client's Implementation, when it sent one. */
  ci?: Implementation;
  /** The client's declared capabilities. */
  cc: JsonObject;
  /** The principal the session is bound to ({@link principalKey}). */
  p: string;
  /** The mount it was opened on. */
  m: string;
  /** The dialect that opened it (`2025-03-26`). */
  d: string;
  /** Created, ms since the epoch. */
  c: number;
}

/** The part of a session that changes after its id was issued (kept outside the id). */
export interface SessionChanges {
  /** The requested log level. */
  l?: string;
  /** Subscribed resource URIs. */
  s?: string[];
}

/**
 * The state `initialize` fixes for a new session: the revision negotiated among `revisions`,
 * the client's info and capabilities, the principal, mount and dialect.
 * @see 2025-11-25 basic/lifecycle#initialization
 */
export function initialState(
  params: JsonObject,
  revisions: readonly string[],
  identity: Identity | null,
  mount: string,
  dialect: string,
  nowMs: number,
): SessionState {
  // Outside strict mode a malformed initialize still opens a session (docs/strict.md): what is
  // not an object is kept as nothing, so that the state stays a SessionState (sealed ids included).
  const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
  const ci = isObject(params.clientInfo) ? (params.clientInfo as unknown as Implementation) : undefined;
  return {
    v: negotiate(params.protocolVersion, revisions),
    ...(ci !== undefined ? { ci } : {}),
    cc: isObject(params.capabilities) ? params.capabilities : {},
    p: principalKey(identity),
    m: mount,
    d: dialect,
    c: nowMs,
  };
}

/** True when `v` has the shape of a {@link SessionState} (a sealed value is trusted, but may be of an older format). */
export function isSessionState(v: unknown): v is SessionState {
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.v === 'string' &&
    typeof o.p === 'string' &&
    typeof o.m === 'string' &&
    typeof o.d === 'string' &&
    typeof o.c === 'number' &&
    o.cc !== null &&
    typeof o.cc === 'object'
  );
}

/**
 * Why a request whose `signal` aborted ends: its reason when that is a catalogue error (a session
 * that ended under it), else SWY_ERR_REQ_CANCELLED, which the session answers with nothing
 * (an AbortController's default reason is a DOMException, which would read as an internal fault).
 * @see 2025-11-25 basic/utilities/cancellation (no response for a cancelled request)
 */
function cancelledBy(signal: AbortSignal): SwitchyardError {
  const r: unknown = signal.reason;
  return r instanceof SwitchyardError ? r : new SwitchyardError('SWY_ERR_REQ_CANCELLED');
}

/** A server-to-client request awaiting the client's answer. */
interface PendingAsk {
  resolve: (r: JsonObject) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * The capabilities a session of revision `version` carries on every request and upstream session,
 * from what its client declared: those of its revision (codec.ts), without tasks, which are not
 * served, and with `roots.listChanged` as declared, since the session forwards its roots changes
 * to its own upstream sessions (gate.ts). The same at `initialize` and for a session rebuilt from
 * its sealed state on another replica.
 */
function sessionCapabilities(version: string, declared: JsonObject): JsonObject {
  return capabilitiesForUpstreams(eraClientCapabilities(version, declared), { rootsListChanged: true });
}

/** True when `caps` (a session's capabilities) declare `roots.listChanged`. */
function rootsListChanged(caps: JsonObject): boolean {
  const roots = caps.roots;
  return roots !== null && typeof roots === 'object' && !Array.isArray(roots) && (roots as JsonObject).listChanged === true;
}

/** A client notification's params as an upstream gets them: its `_meta` is the client's, not ours. */
function withoutMeta(params: JsonObject | undefined): JsonObject {
  if (params === undefined) return {};
  const { _meta: _m, ...rest } = params;
  return rest;
}

/** The subscriptions of a session that has none. */
const NO_URIS: ReadonlySet<string> = new Set();

/**
 * The filter of a session's notification stream that subscribes to no resource: list changes and
 * log messages. Shared by every such session (an idle HTTP+SSE session holds its filter for its
 * whole life, and tens of thousands may be open); frozen, since every session reads it.
 */
const LISTS_AND_LOGS: Readonly<SubscriptionFilter> = Object.freeze({
  toolsListChanged: true,
  promptsListChanged: true,
  resourcesListChanged: true,
  logMessages: true,
});

/** The subscriber context of the sessions of one `SessionDeps` without an identity: one per dialect and mount, not one per session. */
const anonymousSubscribers = new WeakMap<SessionDeps, Readonly<SubscriberContext>>();

/**
 * Who a session's notification subscription is for (what notification filters decide on): its
 * identity, mount and dialect. Sessions without an identity share one frozen context per `deps`.
 */
function subscriberOf(deps: SessionDeps, identity: Identity | null): SubscriberContext {
  if (identity !== null) return { identity, mount: deps.executor.mount, dialect: deps.dialect };
  let s = anonymousSubscribers.get(deps);
  if (!s) anonymousSubscribers.set(deps, (s = Object.freeze({ identity: null, mount: deps.executor.mount, dialect: deps.dialect })));
  return s;
}

/** A sink for messages that carry no reply (responses and notifications from the client). */
export const NO_SINK: Sink = { send: () => false, finish: () => {}, streaming: false };

/**
 * One initialize-era session: negotiated revision, client identity and capabilities, the
 * principal it is bound to, log level, in-flight requests (for `notifications/cancelled`),
 * pending server-to-client requests, and resource subscriptions.
 * @see 2025-11-25 basic/lifecycle; basic/utilities/cancellation; server/utilities/logging;
 *   basic/security_best_practices#session-hijacking (bind sessions to the user)
 */
export class ClientSession {
  /**
   * The session id (Mcp-Session-Id or the HTTP+SSE `sessionId`): a random UUID, or the sealed
   * session state; never guessable.
   */
  readonly id: string;
  /** The id as logs show it. */
  readonly logId: string;
  /** Created, ms since the epoch. */
  readonly createdAtMs: number;
  /** Negotiated revision. */
  version: string;
  clientInfo: Implementation | undefined;
  clientCapabilities: JsonObject = {};
  logLevel: string | undefined;
  initialized = false;
  /** True once `initialize` was answered. */
  negotiated = false;
  /**
   * The identity that opened the session, or the one it follows since ({@link follow}): the same
   * principal, whose view its notification subscription is filtered for.
   */
  private who: Identity | null;
  /** Key of that identity: every later message must come from the same principal. */
  readonly principal: string;
  // The collections below are made with their first entry and dropped with their last: an idle
  // session (most of them, and 100,000 may be open) holds none of them.
  /** Subscribed resource URIs. */
  private uris: Set<string> | undefined;
  /** Client requests in flight, by id key. */
  private inflight: Map<string, Cancellation> | undefined;
  /** Server-to-client requests awaiting the client's answer, by id key. */
  private pending: Map<string, PendingAsk> | undefined;
  /** Messages being handled now (bounded by the requests the transports admit at once). */
  private handling: Set<Promise<void>> | undefined;
  private nextServerId = 0;
  private closed = false;
  private readonly deps: SessionDeps;
  private notifySub: Subscription | undefined;
  /** The `Authorization` of the latest request, for upstreams allowed to receive it (its subscriptions use it). */
  private authorization: string | undefined;
  private notifySink: ((msg: RpcMessage) => void) | undefined;
  /** True when `notifySink` gets the notifications unfiltered and decides at delivery ({@link shown}). */
  private decidesAtDelivery = false;

  /** @param id the session id (default: a random UUID). */
  constructor(deps: SessionDeps, version: string, identity: Identity | null, id: string = randomUUID(), createdAtMs = Date.now()) {
    this.deps = deps;
    this.version = version;
    this.who = identity;
    this.principal = principalKey(identity);
    this.id = id;
    this.logId = deps.logId ? deps.logId(id) : sessionLogId(id);
    this.createdAtMs = createdAtMs;
  }

  /**
   * A session rebuilt on this replica from its sealed state, for a request of `identity` (the
   * caller checked it is the state's principal).
   */
  static restore(deps: SessionDeps, id: string, state: SessionState, identity: Identity | null): ClientSession {
    const s = new ClientSession(deps, state.v, identity, id, state.c);
    s.negotiated = true;
    s.initialized = true;
    s.clientInfo = state.ci;
    // The sealed state keeps what the client declared; the session carries what `initialize` made of it.
    s.clientCapabilities = sessionCapabilities(state.v, state.cc);
    return s;
  }

  /** The subscribed resource URIs (`resources/subscribe`), at most {@link MAX_SUBSCRIBED_URIS}. */
  get resourceUris(): ReadonlySet<string> {
    return this.uris ?? NO_URIS;
  }

  /** Characters of the subscribed URIs together. */
  private uriChars(): number {
    let n = 0;
    for (const u of this.resourceUris) n += u.length;
    return n;
  }

  /** What changed since `initialize` (log level, subscriptions). */
  changes(): SessionChanges {
    const out: SessionChanges = {};
    if (this.logLevel !== undefined) out.l = this.logLevel;
    if (this.resourceUris.size > 0) out.s = [...this.resourceUris];
    return out;
  }

  /** Takes the changes another replica stored (they are authoritative), resubscribing when the subscriptions differ. */
  applyChanges(ch: SessionChanges): void {
    this.logLevel = typeof ch.l === 'string' && (LOG_LEVELS as readonly string[]).includes(ch.l) ? ch.l : undefined;
    const want = Array.isArray(ch.s) ? ch.s.filter((u): u is string => typeof u === 'string').slice(0, MAX_SUBSCRIBED_URIS) : [];
    const same = want.length === this.resourceUris.size && want.every((u) => this.resourceUris.has(u));
    if (same) return;
    this.uris = want.length > 0 ? new Set(want) : undefined;
    this.resubscribe();
  }

  /** Records the `Authorization` of the request that opened the session's stream (HTTP+SSE). */
  rememberAuthorization(authorization: string | undefined): void {
    if (authorization !== undefined) this.authorization = authorization;
  }

  /** True when the session has a notification stream attached here. */
  get notifying(): boolean {
    return this.notifySink !== undefined;
  }

  /** True once closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Client requests of this session in flight now. */
  get inFlight(): number {
    return this.inflight?.size ?? 0;
  }

  /** The identity the session's notifications are filtered for: the one that opened it, or the one it follows since. */
  get identity(): Identity | null {
    return this.who;
  }

  /**
   * Filters the session's notifications for `identity` from now on: the same principal, whose
   * credential a reload made prove other scopes or claims (`OpenStreams`), or whose GET stream
   * was (re)opened with a credential proving them (`carryGet` in http.ts). The subscription is opened again with it before the old one closes, in this turn: nothing is
   * delivered in between. Requests are judged with their own identity as before.
   * @throws SwitchyardError SWY_ERR_INTERNAL_FAULT when `identity` is another principal (the binding must be checked first)
   * @see docs/security.md ("Revoking a key (or changing `auth`)")
   */
  follow(identity: Identity | null): void {
    if (principalKey(identity) !== this.principal) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'a session follows its own principal only' });
    this.who = identity;
    this.resubscribeOrLog();
  }

  /** True when `identity` is the principal this session is bound to. */
  belongsTo(identity: Identity | null): boolean {
    return principalKey(identity) === this.principal;
  }

  /**
   * Answers `initialize`: negotiates the revision among `revisions` and records the client's
   * info and capabilities. `traceContext` is the transport's (HTTP headers), where `_meta` has none.
   * @see 2025-11-25 basic/lifecycle#initialization
   */
  initialize(params: JsonObject, revisions: readonly string[], traceContext?: TraceContext, rpcId?: RequestId): JsonObject {
    const version = negotiate(params.protocolVersion, revisions);
    const init = {
      ...this.localInit('initialize', params, version, this.identity, rpcId),
      clientInfo: params.clientInfo as Implementation | undefined,
      traceContext,
    };
    return this.deps.executor.answerLocally(init, () => {
      const chars = (JSON.stringify(init.clientInfo) ?? '').length + (JSON.stringify(params.capabilities) ?? '').length;
      if (chars > MAX_CLIENT_STATE_CHARS)
        throw new SwitchyardError('SWY_ERR_SESSION_STATE_TOO_LARGE', {
          detail: `client info and capabilities of ${chars} characters, limit ${MAX_CLIENT_STATE_CHARS}`,
        });
      this.version = version;
      this.negotiated = true;
      this.clientInfo = init.clientInfo;
      this.clientCapabilities = sessionCapabilities(version, (params.capabilities as JsonObject | undefined) ?? {});
      // An HTTP+SSE stream attached before initialize subscribes now, with what the client
      // declared: an upstream session opened for it carries the client's capabilities and info.
      if (this.notifySink) this.resubscribeOrLog();
      return initializeResult(this.version, this.deps.executor.describe());
    });
  }

  private resubscribeOrLog(): void {
    try {
      this.resubscribe();
    } catch (err) {
      this.deps.log.warn({ err, sessionId: this.logId }, 'notifications not attached');
    }
  }

  /**
   * Delivers the session's unsolicited notifications (list changes, resource updates) to `sink`
   * until `detachNotifications`. Bounded by the session count, not `maxSubscriptions` (one
   * notification stream per session).
   * @param opts.decideAtDelivery `sink` gets every notification, the mount's notification filters
   *   not applied, and passes each through {@link shown} when it delivers it (live or replayed): a
   *   2025 GET stream keeps them for a `Last-Event-ID` resumption, which must obey the identity
   *   and policy in force when it is replayed, not those of their arrival. Without it, `sink`
   *   gets only what the session's identity may see as each arrives.
   * @throws SwitchyardError SWY_ERR_ADMISSION_SHUTTING_DOWN
   * @see 2025-11-25 basic/transports#resumability-and-redelivery; docs/security.md ("Subscriptions")
   */
  attachNotifications(sink: (msg: RpcMessage) => void, opts: { decideAtDelivery?: boolean } = {}): void {
    this.detachNotifications();
    this.notifySink = sink;
    this.decidesAtDelivery = opts.decideAtDelivery === true;
    this.resubscribe();
  }

  /**
   * What the session's identity in force now (the one it opened with, or follows since) may see
   * of `msg`, a message kept for its notification stream: a notification passes the mount's
   * notification filters as the config in force has them (a `resources/updated` of a resource
   * its principal may no longer read, or that curation hides now, gives null); requests and
   * responses pass as they are. Synchronous and without I/O.
   * @returns `msg`, what a filter made of it, or null (the client gets nothing).
   * @see docs/security.md ("Subscriptions")
   */
  shown(msg: RpcMessage): RpcMessage | null {
    if (!('method' in msg) || 'id' in msg) return msg;
    const n: CoreNotification = { method: msg.method, params: msg.params ?? {} };
    const out = this.deps.executor.filterFor(subscriberOf(this.deps, this.identity), n);
    if (out === n) return msg;
    return out === null ? null : { jsonrpc: '2.0', method: out.method, params: out.params };
  }

  /** Stops unsolicited notification delivery. */
  detachNotifications(): void {
    this.notifySub?.close();
    this.notifySub = undefined;
    this.notifySink = undefined;
    this.decidesAtDelivery = false;
  }

  /**
   * (Re)subscribes the attached notification stream. Not before `initialize`: the subscription
   * may open this session's upstream session (per-session isolation), which must carry the
   * client's declared capabilities and info (an HTTP+SSE stream is attached at its GET, before).
   */
  private resubscribe(): void {
    const sink = this.notifySink;
    if (!sink || !this.negotiated) return;
    // The new subscription opens before the old one closes, so that the resources both name keep
    // a subscriber throughout: the upstream is asked only for what changed, not to unsubscribe
    // and subscribe again every resource the session had (n² requests for n resources, and an
    // update lost in between). Nothing is delivered in between: both happen in this one turn.
    const old = this.notifySub;
    this.notifySub = undefined;
    try {
      this.notifySub = this.subscribeNotifications(sink);
    } finally {
      old?.close();
    }
  }

  /** Opens the session's notification subscription into `sink` (`resubscribe`). */
  private subscribeNotifications(sink: (msg: RpcMessage) => void): Subscription {
    // Most sessions subscribe to no resource: they share one filter (nothing changes a filter).
    const filter: SubscriptionFilter = this.resourceUris.size === 0 ? LISTS_AND_LOGS : { ...LISTS_AND_LOGS, resourceSubscriptions: [...this.resourceUris] };
    const deliver = (n: CoreNotification) => {
      // A log message outside any request (the upstream session is this client's alone) passes
      // the same level filter as one inside a request: none before `logging/setLevel`.
      // @see 2025-11-25 server/utilities/logging#log-levels
      if (n.method === 'notifications/message' && !levelAdmits(this.logLevel, String(n.params.level))) return;
      sink({ jsonrpc: '2.0', method: n.method, params: n.params });
    };
    return this.deps.executor.subscribe(filter, deliver, {
      subscriber: subscriberOf(this.deps, this.identity),
      counted: false,
      unfiltered: this.decidesAtDelivery,
      session: {
        sessionKey: this.id,
        clientCapabilities: this.clientCapabilities,
        clientInfo: this.clientInfo,
        protocolVersion: this.version,
        identity: this.identity,
        authorization: this.authorization,
        // A server request outside any call (from the session's own upstream session: `roots/list`,
        // `sampling/createMessage`, `elicitation/create`) goes where the notifications go: this
        // stream, the one the session has for messages that belong to no request, and so does a
        // URL elicitation's completion (2025-11-25 basic/transports#listening-for-messages-from-the-server).
        ask: (method, params, signal) => this.ask(this.streamSink(), method, params, signal),
        notifyClient: (method, params) => this.notifyClient(this.streamSink(), method, params),
      },
    });
  }

  /** The session's notification stream as a request's sink, made when a request outside any call needs it (an idle session keeps none). */
  private streamSink(): Sink {
    return { send: (msg) => this.sendOnStream(msg), finish: () => {}, streaming: true };
  }

  /** Sends `msg` on the session's notification stream; false while none is attached here. */
  private sendOnStream(msg: RpcMessage): boolean {
    const sink = this.notifySink;
    if (!sink) return false;
    sink(msg);
    return true;
  }

  /**
   * Handles one client message of this session. Requests are answered through `out`; responses
   * resolve pending server-to-client requests; notifications are applied. Never throws: every
   * failure becomes a JSON-RPC error on `out`.
   * @param authorization the HTTP request's `Authorization`, for upstreams allowed to receive it.
   * @param identity the verified caller of this message (the binding checked it is the session's principal).
   * @param traceContext the HTTP request's W3C trace context: a request whose `_meta` carries none
   *   gets it there, where the executor and the upstream read it.
   */
  async handle(
    msg: RpcMessage,
    kind: 'request' | 'notification' | 'response',
    out: Sink,
    authorization?: string,
    identity?: Identity | null,
    traceContext?: TraceContext,
  ): Promise<void> {
    const work = this.handleOne(msg, kind, out, authorization, identity, traceContext);
    const handling = (this.handling ??= new Set<Promise<void>>());
    handling.add(work);
    try {
      await work;
    } finally {
      handling.delete(work);
      if (handling.size === 0 && this.handling === handling) this.handling = undefined;
    }
  }

  /**
   * Resolves once every message being handled now has been answered, or after `maxWaitMs`.
   * After `close(why)` that is prompt: each request in flight gets `why` as its answer. A
   * transport closes its streams only after this, so those answers still have a way out.
   */
  async settled(maxWaitMs: number): Promise<void> {
    if (this.handling === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxWaitMs);
      timer.unref();
    });
    try {
      while (this.handling !== undefined && this.handling.size > 0) {
        const all = Promise.allSettled([...this.handling]).then(() => true);
        if (!(await Promise.race([all, expired.then(() => false)]))) return;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  private async handleOne(
    msg: RpcMessage,
    kind: 'request' | 'notification' | 'response',
    out: Sink,
    authorization?: string,
    identity?: Identity | null,
    traceContext?: TraceContext,
  ): Promise<void> {
    const v = this.deps.strict;
    if (v) {
      const bad = kind === 'response' ? [] : v.check('in', this.version, msg);
      if (bad.length > 0 && v.mode === 'reject') {
        const e = strictRejection(bad[0]);
        this.deps.executor.refused(e, this.deps.dialect);
        if (kind === 'request') out.finish(errorResponse((msg as RpcRequest).id, e.toRpcError()));
        return;
      }
      const method = kind === 'request' ? (msg as RpcRequest).method : undefined;
      out = checkedSink(out, v, this.version, method, false);
    }
    if (kind === 'response') return this.onResponse(msg as RpcResponse);
    if (kind === 'notification') return this.onNotification(msg as { method: string; params?: JsonObject });
    let req = msg as RpcRequest;
    const meta = req.params?._meta as JsonObject | undefined;
    if (traceContext && meta?.traceparent === undefined) req = { ...req, params: { ...req.params, _meta: { ...meta, ...traceContext } } };
    if (authorization !== undefined) this.authorization = authorization;
    try {
      const result = await this.request(req, out, authorization, identity === undefined ? this.identity : identity);
      out.finish(resultResponse(req.id, encodeResult(result, this.version, req.method)));
    } catch (err) {
      if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_CANCELLED') return out.finish(null);
      if (err instanceof SwitchyardError && err.entry.fault !== 'client')
        logFailure(this.deps.log, err, { rpcId: req.id, sessionId: this.logId, ...this.deps.executor.failureFields(err) });
      else if (!(err instanceof SwitchyardError) && !(err instanceof PeerRpcError))
        this.deps.log.error({ err, rpcId: req.id, ...this.deps.executor.failureFields(err) }, 'internal error');
      out.finish(
        errorResponse(req.id, encodeError(err, this.negotiated ? this.version : undefined)),
        replyStatusOf(err),
        err instanceof SwitchyardError ? err.headers : undefined,
      );
    }
  }

  private async request(req: RpcRequest, out: Sink, authorization: string | undefined, identity: Identity | null): Promise<JsonObject> {
    // 2024-11-05 basic/lifecycle: initialization first; only ping may come before it. The refusal
    // is an answer of the session's own, observed like the others.
    if (!this.negotiated && req.method !== 'ping' && req.method !== 'initialize')
      return this.deps.executor.answerLocally(this.localInit(req.method, req.params ?? {}, this.version, identity, req.id), () => {
        throw new SwitchyardError('SWY_ERR_SESSION_NOT_INITIALIZED');
      });
    if (!LOCAL_METHODS.has(req.method)) return this.route(req, out, authorization, identity);
    // basic/messages: an id in use by a request of the session still running is refused for the
    // session's own answers too (ping, logging/setLevel, …), as `route` refuses it: two answers
    // under one id could not be told apart.
    if (this.inflight?.has(idKey(req.id))) throw new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID');
    const init = this.localInit(req.method, req.params ?? {}, this.version, identity, req.id);
    return this.deps.executor.answerLocally(init, () => this.answer(req, { ...init, authorization }));
  }

  /** What the request channels see of a request this session answers itself. */
  private localInit(method: string, params: JsonObject, protocolVersion: string, identity: Identity | null, rpcId: RequestId | undefined) {
    return {
      method,
      rpcId,
      params,
      protocolVersion,
      dialect: this.deps.dialect,
      sessionKey: this.id,
      identity,
      clientInfo: this.clientInfo,
      clientCapabilities: this.clientCapabilities,
      logLevel: this.logLevel,
    };
  }

  /** Answers one of {@link LOCAL_METHODS}; `init` is the request as the chain sees a subscription decision. */
  private async answer(req: RpcRequest, init: SubscriptionInit): Promise<JsonObject> {
    const params = req.params ?? {};
    switch (req.method) {
      case 'initialize':
        throw new SwitchyardError('SWY_ERR_SESSION_ALREADY_INITIALIZED');
      case 'ping':
        // 2024-11-05 basic/utilities/ping: answer promptly with an empty result.
        return {};
      case 'logging/setLevel': {
        // server/utilities/logging#capabilities: a server that sends log messages declares
        // `logging`; the session tells its client the upstream's capabilities, so one without
        // it has no such method here (as resources/subscribe without `subscribe`).
        if (!(this.deps.executor.describe().capabilities as { logging?: unknown }).logging)
          throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: req.method });
        const level = params.level;
        if (!(LOG_LEVELS as readonly unknown[]).includes(level)) throw new SwitchyardError('SWY_ERR_REQ_LOG_LEVEL');
        this.logLevel = level as string;
        await this.deps.onChange?.(this);
        return {};
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const caps = this.deps.executor.describe().capabilities as { resources?: { subscribe?: boolean } };
        if (!caps.resources?.subscribe) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: req.method });
        if (typeof params.uri !== 'string') throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'uri must be a string' });
        if (req.method === 'resources/subscribe') {
          if (this.resourceUris.size >= MAX_SUBSCRIBED_URIS && !this.resourceUris.has(params.uri)) throw new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT');
          if (params.uri.length > MAX_SUBSCRIPTION_URI_CHARS)
            throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `uri longer than ${MAX_SUBSCRIPTION_URI_CHARS} characters` });
          if (!this.resourceUris.has(params.uri) && this.uriChars() + params.uri.length > MAX_SUBSCRIBED_URI_CHARS)
            throw new SwitchyardError('SWY_ERR_SESSION_STATE_TOO_LARGE', { detail: `subscribed URIs over ${MAX_SUBSCRIBED_URI_CHARS} characters` });
          // Decided by the interceptor chain, as every invocation is (curation, policy, its audit line).
          await this.deps.executor.admitSubscription(init);
          (this.uris ??= new Set<string>()).add(params.uri);
        } else if (this.uris?.delete(params.uri) && this.uris.size === 0) this.uris = undefined;
        this.resubscribe();
        await this.deps.onChange?.(this);
        return {};
      }
      default:
        throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: `${req.method} is not answered by the session` });
    }
  }

  private async route(req: RpcRequest, out: Sink, authorization: string | undefined, identity: Identity | null): Promise<JsonObject> {
    const key = idKey(req.id);
    // basic/messages: an id MUST NOT be reused within the session while its request runs.
    const inflight = (this.inflight ??= new Map<string, Cancellation>());
    if (inflight.has(key)) throw new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID');
    // This session's own doing, not the gateway's load: 429, counted as a refusal (RFC 6585 §4).
    if (inflight.size >= this.deps.limits.maxInFlightPerSession) {
      const e = new SwitchyardError('SWY_ERR_ADMISSION_SESSION_BUSY', { detail: `limit ${this.deps.limits.maxInFlightPerSession}` });
      this.deps.executor.refused(e, this.deps.dialect);
      throw e;
    }
    // A Cancellation, not an AbortController: the executor needs no real signal, and one is made
    // only if the request asks the client something (`ask` below).
    const ac = new Cancellation();
    inflight.set(key, ac);
    const meta = req.params?._meta as JsonObject | undefined;
    const token = meta?.progressToken as RequestId | undefined;
    let params: JsonObject = { ...(req.params ?? {}) };
    try {
      for (let round = 0; ; round++) {
        const result = await this.deps.executor.run(
          {
            method: req.method,
            params,
            protocolVersion: this.version,
            clientInfo: this.clientInfo,
            clientCapabilities: this.clientCapabilities,
            logLevel: this.logLevel,
            identity,
            dialect: this.deps.dialect,
            sessionKey: this.id,
            authorization,
            progressToken: token,
            rpcId: req.id,
            onProgress: (p) => {
              if (token !== undefined) out.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: token } });
            },
            onLog: (m) => {
              if (levelAdmits(this.logLevel, m.level)) out.send({ jsonrpc: '2.0', method: 'notifications/message', params: { ...m } });
            },
            ask: (method, p, signal) => this.ask(out, method, p, signal),
            notifyClient: (method, p) => this.notifyClient(out, method, p),
          },
          ac,
          true,
          encodeError,
        );
        if (result.resultType !== 'input_required' || !INPUT_METHODS.has(req.method)) return result;
        if (round + 1 >= this.deps.limits.maxInputRounds) throw new SwitchyardError('SWY_ERR_REQ_INPUT_ROUNDS');
        // The shim: issue each input request as a real server-to-client request, then retry
        // with inputResponses and requestState (2026-07-28 basic/patterns/mrtr).
        const asks = (result.inputRequests ?? {}) as Record<string, { method: string; params?: JsonObject }>;
        const answers: JsonObject = {};
        await Promise.all(
          Object.entries(asks).map(async ([k, r]) => {
            try {
              answers[k] = await this.ask(out, r.method, r.params ?? {}, ac.signal);
            } catch (err) {
              // A method the client's era lacks: for the client, its request cannot be completed here.
              if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_METHOD_NOT_FOUND')
                throw new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: `${r.method} does not exist in ${this.version}` });
              throw err;
            }
          }),
        );
        params = { ...(req.params ?? {}), inputResponses: answers };
        if (typeof result.requestState === 'string') params.requestState = result.requestState;
      }
    } finally {
      if (inflight.get(key) === ac) inflight.delete(key);
      if (inflight.size === 0 && this.inflight === inflight) this.inflight = undefined;
    }
  }

  /**
   * Sends a server-to-client request on `out` and waits for the client's response. A method the
   * session's revision does not define (elicitation before 2025-06-18) is never sent.
   * @throws SwitchyardError SWY_ERR_REQ_METHOD_NOT_FOUND (method not in the client's era),
   *   SWY_ERR_REQ_INPUT_UNSUPPORTED (capability not declared, or no channel), SWY_ERR_REQ_DEADLINE
   *   (no answer within `clientRequestTimeoutMs`), SWY_ERR_SESSION_PENDING_LIMIT (429: `maxPendingClientRequests`
   *   of the session's server requests await the client's answers; counted as a refusal); PeerRpcError
   */
  ask(out: Sink, method: string, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    if (!eraHasServerRequest(this.version, method)) {
      return Promise.reject(new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: `${method} does not exist in ${this.version}` }));
    }
    // A request this revision cannot express (a multi-select form before 2025-11-25).
    const unfit = serverRequestUnfit(this.version, method, params);
    if (unfit !== undefined) return Promise.reject(new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: unfit }));
    // A capability, or the sub-capability of a mode (URL elicitation, tool-enabled sampling), the client did not declare.
    const missing = missingCapabilities([{ method, params }], this.clientCapabilities);
    if (missing) return Promise.reject(new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: `client did not declare ${capabilityNames(missing)}` }));
    if (this.closed) return Promise.reject(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
    // The session's own bound (its client has not answered that many), not the gateway's load:
    // its own code, naming the bound, counted as a refusal.
    if (this.pendingAsks >= this.deps.limits.maxPendingClientRequests) {
      const e = new SwitchyardError('SWY_ERR_SESSION_PENDING_LIMIT', { detail: `limit ${this.deps.limits.maxPendingClientRequests}` });
      this.deps.executor.refused(e, this.deps.dialect);
      return Promise.reject(e);
    }
    const id = `swy-${++this.nextServerId}${this.deps.serverIdSuffix ?? ''}`;
    params = encodeServerRequest(this.version, method, params);
    return new Promise<JsonObject>((resolve, reject) => {
      const key = idKey(id);
      const cleanup = () => {
        clearTimeout(timer);
        unwatch();
        if (this.pending?.delete(key) && this.pending.size === 0) this.pending = undefined;
      };
      const onAbort = () => {
        cleanup();
        // Tell the client to stop, with the id it saw (basic/utilities/cancellation): the call was
        // cancelled, or the upstream cancelled this request of its own (driveCall aborts `signal`
        // with the reason it gave).
        const why = signal.reason instanceof ServerCancelled && signal.reason.reason !== undefined ? signal.reason.reason : 'request cancelled';
        this.sendRelated(out, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: why } });
        reject(cancelledBy(signal));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `client did not answer ${method}` }));
      }, this.deps.limits.clientRequestTimeoutMs);
      timer.unref();
      if (signal.aborted) {
        clearTimeout(timer);
        return reject(cancelledBy(signal));
      }
      // One listener on the call's signal for all its pending asks (up to maxPendingClientRequests), not one each.
      const unwatch = watchAbort(signal, onAbort);
      (this.pending ??= new Map<string, PendingAsk>()).set(key, {
        resolve: (r) => {
          cleanup();
          resolve(r);
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
        timer,
      });
      if (!out.send({ jsonrpc: '2.0', id, method, params })) {
        cleanup();
        reject(new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: 'no stream to carry the request' }));
      }
    });
  }

  /**
   * Sends a server notification that concerns a server request this session was sent (a URL-mode
   * elicitation's completion): on `out`, the stream of the request that asked, while it is open,
   * else on the session's notification stream (the GET stream; HTTP+SSE and stdio have one
   * stream). Not sent to a revision that lacks it, nor after the session ended.
   * @returns false when nothing carried it.
   * @see 2025-11-25 client/elicitation#url-mode; basic/transports#listening-for-messages-from-the-server
   */
  notifyClient(out: Sink, method: string, params: JsonObject): boolean {
    if (this.closed || !eraHasServerNotification(this.version, method)) return false;
    return this.sendRelated(out, { jsonrpc: '2.0', method, params });
  }

  /** Sends `msg` on `out` while it is open, else on the session's notification stream; false when neither carried it. */
  private sendRelated(out: Sink, msg: RpcMessage): boolean {
    if (out.send(msg)) return true;
    if (!this.notifySink) return false;
    this.notifySink(msg);
    return true;
  }

  /** Server-to-client requests awaiting the client's answer. */
  get pendingAsks(): number {
    return this.pending?.size ?? 0;
  }

  /** Fails every pending server-to-client request with `err` (the client can no longer answer). */
  failPending(err: unknown): void {
    if (this.pending) for (const p of [...this.pending.values()]) p.reject(err);
  }

  private onResponse(res: RpcResponse): void {
    if (res.id === null) return;
    const p = this.pending?.get(idKey(res.id));
    if (!p) return;
    if ('error' in res) p.reject(new PeerRpcError(res.error));
    else p.resolve(res.result ?? {});
  }

  private onNotification(n: { method: string; params?: JsonObject }): void {
    if (n.method === 'notifications/initialized') this.initialized = true;
    else if (n.method === 'notifications/roots/list_changed') {
      // client/roots#root-list-changes: to the upstream sessions opened for this session alone,
      // which were told `roots.listChanged` as the client declared it; a shared upstream session
      // was told no roots at all. Without the declaration upstreams were not told it would come.
      if (this.negotiated && rootsListChanged(this.clientCapabilities))
        this.deps.executor.forwardNotification(this.id, { method: n.method, params: withoutMeta(n.params) });
    } else if (n.method === 'notifications/cancelled') {
      // basic/utilities/cancellation: stop the work; send no response for it.
      const rid = n.params?.requestId;
      if (typeof rid === 'string' || typeof rid === 'number' || typeof rid === 'bigint')
        this.inflight?.get(idKey(rid))?.abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
    }
  }

  /**
   * Ends the session: notifications stop, pending server requests fail, and every request in
   * flight is answered with `why` (a session that ends under a running request never leaves it
   * without a response; pass nothing to cancel them silently, as for a lost connection).
   */
  close(why?: SwitchyardError): void {
    if (this.closed) return;
    this.closed = true;
    this.detachNotifications();
    this.deps.executor.releaseSession(this.id);
    const inflight = this.inflight;
    this.inflight = undefined;
    if (inflight) for (const ac of inflight.values()) ac.abort(why);
    const pending = this.pending;
    this.pending = undefined;
    if (pending) for (const p of [...pending.values()]) p.reject(why ?? new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
  }
}
