// Bounded admission, per-request deadlines, cancellation, held-call resumption and the one
// interceptor chain in front of every upstream.

import { HeldCalls } from './calls.js';
import { ClientShares } from './client-share.js';
import { Deadline, type CancelSignal } from './cancel.js';
import { channels, type RequestEndMessage, type UpstreamCallMessage } from './diagnostics.js';
import { drainRefusal, PeerRpcError, SwitchyardError } from './errors.js';
import { drainThenCut, settledWithin, type Settling } from './drain.js';
import { principalKey } from './identity.js';
import { OpenStreams } from './open-streams.js';
import type { CoreLog } from './exchange.js';
import { advertisedDescription, checkCapability, isRouted, withoutTask, withoutTaskSupport } from './gate.js';
import { traceContextOfMeta } from './trace.js';
import {
  componentOf,
  compose,
  deriveContext,
  type Dispatch,
  ContextFields,
  isDecisionOnly,
  type Interceptor,
  type NotificationFilter,
  type SubscriberContext,
} from './interceptor.js';
import type { JsonObject } from './message.js';
import type { CoreNotification, RequestContext, SubscriptionFilter } from './request.js';
import type { ServerDescription, SessionRef, Subscription, Upstream } from './upstream.js';

/** Executor bounds (see limits.ts). */
export interface ExecutorLimits {
  /** Requests running at once. */
  maxConcurrent: number;
  /** Requests waiting for a slot; one more is refused with SWY_ERR_ADMISSION_BUSY. */
  maxQueued: number;
  /**
   * Requests one verified principal may have running or waiting at once (see {@link principalSlot});
   * one more is refused with SWY_ERR_ADMISSION_PRINCIPAL_BUSY. Absent: no bound per principal.
   */
  maxConcurrentPerPrincipal?: number;
  /** Deadline per request, ms. */
  requestTimeoutMs: number;
  /** Open subscriptions; one more is refused with SWY_ERR_SUBSCRIPTION_LIMIT. */
  maxSubscriptions: number;
  /**
   * Counted subscriptions one client ({@link SubscribeOptions.client}) may hold at once; one more is
   * refused with SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT. Absent: no bound per client.
   */
  maxSubscriptionsPerClient?: number;
}

/**
 * The part of a RequestContext the era module supplies; the executor adds the signal. One field
 * is the executor's alone and never reaches the context: `onBehalfOfState`, for a request made on
 * behalf of a 2026-07-28 retry (`onBehalf`, the x-mcp-header list read), that retry's
 * `requestState` as the client sent it. A shutdown's drain admits such a request as it admits the
 * retry, while the state names a call held here (docs/operations.md, "Held calls at shutdown and
 * reload"); undefined for every other request.
 * @see 2026-07-28 basic/patterns/mrtr (the retry carries requestState)
 */
export type RequestInit = Omit<RequestContext, 'signal'> & { onBehalfOfState?: unknown };

/**
 * Who asks for a subscription, and how (see {@link Executor.admitSubscription}): `params.uri` names
 * the resource; the rest is the subscriber's, as on its other requests.
 */
export type SubscriptionInit = Pick<
  RequestInit,
  'params' | 'protocolVersion' | 'dialect' | 'sessionKey' | 'identity' | 'clientInfo' | 'clientCapabilities' | 'logLevel' | 'authorization' | 'rpcId'
> &
  Partial<Pick<RequestInit, 'traceContext'>>;

/**
 * The refusals that mean "not this resource" (a denial; with `hideDenied`, or for a URI curation
 * hides, the unknown-resource error): a listen leaves such a URI out of what it honours.
 */
const REFUSED_RESOURCE: ReadonlySet<string> = new Set(['SWY_ERR_POLICY_DENIED', 'SWY_ERR_REQ_RESOURCE_NOT_FOUND']);

/**
 * Admission's refusals (the mount draining, a principal at `maxConcurrentPerPrincipal`, the queue
 * at `maxQueued`): besides the request's own end, each is counted on the `refusal` channel, as the
 * refusals made before the executor are.
 */
const ADMISSION_REFUSALS: ReadonlySet<string> = new Set(['SWY_ERR_ADMISSION_SHUTTING_DOWN', 'SWY_ERR_ADMISSION_PRINCIPAL_BUSY', 'SWY_ERR_ADMISSION_BUSY']);

/**
 * The refusals of a bound met below admission: the interceptor chain's (a rate limit's empty
 * bucket) and the upstream's (SWY_ERR_SESSION_LIMIT: an HTTP upstream with no room for the upstream
 * session the request needs, thrown before anything is sent upstream). Counted on the `refusal`
 * channel like admission's, once, as the request ends, so that every bound's refusals can be read
 * from one counter. A policy denial is a decision, not a bound, and is left to the audit line and
 * the request's own end.
 */
const CHAIN_REFUSALS: ReadonlySet<string> = new Set(['SWY_ERR_RATE_LIMITED', 'SWY_ERR_SESSION_LIMIT']);

/**
 * Entries of an executor's per-principal count at which those at zero (principals with nothing
 * running or waiting) are dropped, before a new principal is added.
 */
export const PRINCIPAL_SWEEP_AT = 1_024;

/** Refusals of a bound an upstream throws when a subscription opens on it (see {@link Executor.subscribe}). */
const SUBSCRIBE_REFUSALS: ReadonlySet<string> = new Set(['SWY_ERR_SESSION_LIMIT', 'SWY_ERR_SUBSCRIPTION_LIMIT']);

/**
 * Wraps an upstream so that every request to it passes the interceptor chain: the context gets
 * `upstream` and `component`, a 2026-07-28 retry carrying one of our `requestState`s resumes its
 * held call (once, here, above every upstream), a request the chain only decides
 * (`isDecisionOnly`: `resources/subscribe`) ends here with `{}`, and upstream-call diagnostics are
 * published for the others.
 * An aggregate mount's members are wrapped one by one, so interceptors see each member call with
 * the member's own names.
 * @param name the upstream's config name, put on contexts and diagnostics (default: its own name).
 * @throws SwitchyardError SWY_ERR_REQ_PARAMS (a requestState that is forged, expired, used, or bound elsewhere),
 *   SWY_ERR_CLUSTER_OWNER_GONE (a state held by a replica that cannot be reached)
 */
export function guardUpstream(upstream: Upstream, interceptors: readonly Interceptor[], held: HeldCalls, name: string = upstream.name): Upstream {
  // A retry naming a call held by another replica is carried out there (HeldCalls.resume).
  const call = (ctx: RequestContext): Promise<JsonObject> => {
    const state = ctx.params.requestState;
    // A state of our shape that another gateway made (a Switchyard upstream's) is that upstream's.
    if (HeldCalls.isOurs(state) && held.madeHere(state)) return held.resume(state, ctx);
    // Tools as clients are told of them: with no task support, as the capabilities say (gate.ts).
    // Here, below the list cache, so that a cached list was changed once, when it was fetched.
    return ctx.method === 'tools/list' ? upstream.request(ctx).then(withoutTaskSupport) : upstream.request(ctx);
  };
  const base: Dispatch = (ctx) => {
    // Decided on the way here; the subscription itself is the upstream's `subscribe`, not a call.
    if (isDecisionOnly(ctx.method)) return Promise.resolve({});
    if (channels.upstreamCallStart.hasSubscribers || channels.upstreamCallEnd.hasSubscribers) return observed(ctx);
    try {
      return call(ctx);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  // One shape whether the call succeeded or failed, as endOf's (no intermediate object on this path).
  const callEnd = (ctx: RequestContext, startedAt: number, err?: unknown): UpstreamCallMessage => {
    const e = err === undefined ? undefined : errorFields(err);
    return { ctx, upstream: name, startedAt, durationMs: performance.now() - startedAt, code: e?.code, rpcCode: e?.rpcCode, error: e?.error };
  };
  // Not an async function: the end is published from the call's own reactions (an async frame and
  // its await cost more per call); a call that throws synchronously is published and rejected, as before.
  const observed = (ctx: RequestContext): Promise<JsonObject> => {
    const startedAt = performance.now();
    let pending: Promise<JsonObject>;
    try {
      if (channels.upstreamCallStart.hasSubscribers) channels.upstreamCallStart.publish({ ctx, upstream: name, startedAt } satisfies UpstreamCallMessage);
      pending = call(ctx);
    } catch (err) {
      if (channels.upstreamCallEnd.hasSubscribers) channels.upstreamCallEnd.publish(callEnd(ctx, startedAt, err));
      return Promise.reject(err);
    }
    return pending.then(
      (result) => {
        if (channels.upstreamCallEnd.hasSubscribers) channels.upstreamCallEnd.publish(callEnd(ctx, startedAt));
        return result;
      },
      (err: unknown) => {
        if (channels.upstreamCallEnd.hasSubscribers) channels.upstreamCallEnd.publish(callEnd(ctx, startedAt, err));
        throw err;
      },
    );
  };
  const chain = compose(base, interceptors);
  return {
    name,
    start: () => upstream.start(),
    describe: () => upstream.describe(),
    request: (ctx) => {
      const component = componentOf(ctx.method, ctx.params, name);
      // The client request's own context learns its upstream too (the access line and the
      // metrics read it at requestEnd); an aggregate's member calls carry copies, not it.
      if (ctx.upstream === undefined) {
        ctx.upstream = name;
        ctx.component = component;
        // A single upstream's call is the client request itself: no copy to make.
        return chain(ctx);
      }
      return chain(deriveContext(ctx, { upstream: name, component }));
    },
    subscribe: (filter, sink) => upstream.subscribe(filter, sink),
    subscribeSession: upstream.subscribeSession ? (ref, filter, sink) => upstream.subscribeSession!(ref, filter, sink) : undefined,
    close: () => upstream.close(),
    release: upstream.release ? (key) => upstream.release?.(key) : undefined,
    forwardNotification: upstream.forwardNotification ? (key, n) => upstream.forwardNotification?.(key, n) : undefined,
  };
}

/** What a request answered locally has none of: no progress, no log, nothing to ask the client. */
const LOCAL_DEFAULTS: Pick<RequestInit, 'authorization' | 'progressToken' | 'onProgress' | 'onLog' | 'ask'> = {
  authorization: undefined,
  progressToken: undefined,
  onProgress: () => {},
  onLog: () => {},
  ask: undefined,
};

/**
 * The upstream signal and deadline of one request ({@link Deadline}): its controller once made,
 * and the first abort reason, always a catalogue error (see {@link reasonOf}).
 */
type CallState = Deadline<JsonObject>;

/**
 * The context a request runs with: `init` as the era module gave it, the mount's name, and a
 * signal made on first read from `call` (most calls to the embedded demo never read it; an
 * AbortController is one of the dearest objects of a request), already aborted when the request was.
 * The MCP-level trace context in `params._meta` wins over what the transport found (HTTP headers).
 */
function contextOf(init: RequestInit, mount: string, call: CallState): RequestContext {
  return new RunContext(init, mount, call);
}

/** The context of one run (see {@link contextOf}); its fields are copied, not spread (ContextFields). */
class RunContext extends ContextFields {
  readonly #call: CallState;

  constructor(init: RequestInit, mount: string, call: CallState) {
    super({
      method: init.method,
      params: init.params,
      protocolVersion: init.protocolVersion,
      clientInfo: init.clientInfo,
      clientCapabilities: init.clientCapabilities,
      logLevel: init.logLevel,
      identity: init.identity,
      mount,
      dialect: init.dialect,
      upstream: init.upstream,
      component: init.component,
      traceContext: traceContextOfMeta(init.params) ?? init.traceContext,
      sessionKey: init.sessionKey,
      authorization: init.authorization,
      progressToken: init.progressToken,
      rpcId: init.rpcId,
      onProgress: init.onProgress,
      onLog: init.onLog,
      ask: init.ask,
      notifyClient: init.notifyClient,
      onBehalf: init.onBehalf,
      charged: init.charged,
    });
    this.#call = call;
  }

  get signal(): AbortSignal {
    return this.#call.signal;
  }
}

/** The error an aborted client signal stands for: its reason when that is a catalogue error, else a cancellation. */
function reasonOf(signal: CancelSignal | undefined): SwitchyardError {
  const r: unknown = signal?.reason;
  return r instanceof SwitchyardError ? r : new SwitchyardError('SWY_ERR_REQ_CANCELLED');
}

/**
 * How a dialect writes an error answer for its clients (its codec's `encodeError`): only the
 * JSON-RPC `code` is read here. Eras differ on a few codes (resource not found is -32002 before
 * 2026-07-28 and -32602 from it), and the request-end publication records the code the client got.
 */
export type ErrorEncoder = (err: unknown) => { code: number };

function errorFields(err: unknown, encode?: ErrorEncoder): Pick<RequestEndMessage, 'code' | 'rpcCode' | 'fault' | 'error'> {
  if (err instanceof SwitchyardError) return { code: err.code, rpcCode: encode ? encode(err).code : err.rpcCode, fault: err.entry.fault, error: err };
  if (err instanceof PeerRpcError) return { rpcCode: encode ? encode(err).code : err.rpc.code, fault: 'upstream', error: err };
  return { rpcCode: -32603, fault: 'internal', error: err };
}

/**
 * The end of a request or upstream call as the channels carry it, in one object shape whether it
 * succeeded or failed (every outcome field present, undefined on success): observers read these
 * fields on every request, and one shape keeps those reads monomorphic.
 */
function endOf(ctx: RequestContext, startedAt: number, err?: unknown, encode?: ErrorEncoder): RequestEndMessage {
  const e = err === undefined ? undefined : errorFields(err, encode);
  return { ctx, startedAt, durationMs: performance.now() - startedAt, code: e?.code, rpcCode: e?.rpcCode, fault: e?.fault, error: e?.error };
}

/** How an Executor is built. */
export interface ExecutorOptions {
  /** The mount's name (config name; `default` for a flag-configured gateway). */
  mount: string;
  /** The mount's upstream: one upstream wrapped by {@link guardUpstream}, or an aggregate of wrapped members. */
  upstream: Upstream;
  limits: ExecutorLimits;
  /** Filters applied to every notification a subscriber receives (policy), in order. */
  notificationFilters?: readonly NotificationFilter[];
  /** Where the mount's open streams log the ones a reload ends ({@link Executor.streams}); none: silent. */
  log?: CoreLog;
  /**
   * The config name of the mount's one upstream; absent for the aggregate. A request refused by
   * that upstream before its call began (its description asked while it is down) still names it.
   */
  upstreamName?: string;
}

/** Options of one subscription. */
export interface SubscribeOptions {
  /** Who receives it (for notification filters). */
  subscriber: SubscriberContext;
  /**
   * Count it against `maxSubscriptions` (default true). A session's own notification stream is
   * bounded by `maxSessions` instead, and passes `false`.
   */
  counted?: boolean;
  /**
   * The client it is counted against under `maxSubscriptionsPerClient` (`clientKey`: principal or
   * remote address); absent, or not `counted`: no one.
   */
  client?: string;
  /**
   * The client session it belongs to: an upstream that keeps subscriptions per session subscribes
   * on that client's own upstream session (resource updates go only to the session that asked).
   */
  session?: SessionRef;
  /**
   * Deliver every notification, the notification filters not applied (default false): the
   * subscriber keeps them and decides each at delivery with {@link Executor.filterFor}, for the
   * identity in force then (a 2025 session's GET stream, whose notifications wait for a
   * `Last-Event-ID` resumption, possibly past a reload that changed what its principal may see).
   */
  unfiltered?: boolean;
}

/**
 * An upstream subscription the executor counts against `maxSubscriptions`: closing it gives the
 * slot back once. An object, not a closure (an idle session holds one for its whole life, and the
 * closure's context kept the subscriber and options alive with it).
 */
class CountedSubscription implements Subscription {
  private open = true;

  constructor(
    private readonly executor: Executor,
    private readonly sub: Subscription,
    private readonly counted: boolean,
    private readonly client: string | undefined,
  ) {}

  close(): void {
    if (!this.open) return;
    this.open = false;
    if (this.counted) this.executor.releaseSubscription(this.client);
    this.sub.close();
  }
}

/**
 * The upstream a failed client request had reached (its context's `upstream`, as the access line
 * gives it), by the error it failed with, for {@link Executor.failureFields}. Weak: an entry lives
 * no longer than its error.
 */
const failedAt = new WeakMap<object, string>();

/**
 * Records that the client request failing with `err` had reached upstream `name`, for
 * {@link Executor.failureFields}: the aggregate calls its members with copies of the request's
 * context, whose `upstream` the executor never sees. `name` is a config name.
 */
export function noteFailedUpstream(err: unknown, name: string): void {
  if (typeof err === 'object' && err !== null) failedAt.set(err, name);
}

/**
 * Runs the client requests of one mount with bounded admission (max concurrent, max queued, max per principal), a
 * deadline per request and cancellation that reaches the upstream through `ctx.signal`, then
 * checks the method against the upstream's capabilities and dispatches it. Publishes
 * `switchyard:request:start` / `switchyard:request:end` for each request.
 */
export class Executor {
  /** The mount's name. */
  readonly mount: string;
  /**
   * The mount's open long-lived streams (2025 GET streams, HTTP+SSE streams, 2026-07-28 listens)
   * with the credential each was opened with: a reload that changes the mount's `auth` checks
   * them again and ends those the new front door refuses.
   */
  readonly streams: OpenStreams;
  private readonly upstream: Upstream;
  private readonly limits: ExecutorLimits;
  private readonly filters: readonly NotificationFilter[];
  private active = 0;
  private readonly queue: Array<() => void> = [];
  /**
   * Requests running or waiting per counted principal ({@link principalSlot}). An entry whose count
   * falls to zero stays until the map reaches {@link PRINCIPAL_SWEEP_AT} entries, when every such
   * entry goes: deleting a key and adding it again on a principal's next request rehashed the map
   * (about 270 B a request on a one-client path). Entries above zero are at most
   * `maxConcurrent + maxQueued`, so the map holds at most that many or the sweep bound, whichever
   * is more.
   */
  private readonly perPrincipal = new Map<string, number>();
  private subscriptions = 0;
  /** Counted subscriptions per client (`maxSubscriptionsPerClient`); an entry lives while its client holds one. */
  private readonly clientSubscriptions: ClientShares;
  private closed = false;
  /**
   * While a shutdown's drain is within its grace: the gateway's held calls, whose retries are
   * still admitted (see {@link close}); undefined otherwise.
   */
  private drainHeld: HeldCalls | undefined;
  /** Settle listeners of the drains waiting on this executor (`close`), called when no request runs; each removed when its wait ends. */
  private readonly idle = new Set<() => void>();
  /** Aborts each running request with a reason (for shutdown past the grace period). */
  private readonly running = new Set<CallState>();
  /** The mount's one upstream's config name ({@link ExecutorOptions.upstreamName}). */
  private readonly upstreamName: string | undefined;
  /** The upstream's last description and what clients are told of it. */
  private described: { from: ServerDescription; advertised: ServerDescription } | undefined;

  constructor(opts: ExecutorOptions) {
    this.mount = opts.mount;
    this.streams = new OpenStreams(opts.mount, opts.log);
    this.upstream = opts.upstream;
    this.upstreamName = opts.upstreamName;
    this.limits = opts.limits;
    this.filters = opts.notificationFilters ?? [];
    this.clientSubscriptions = new ClientShares(opts.limits.maxSubscriptionsPerClient ?? Number.POSITIVE_INFINITY);
  }

  /** True once `close()` was called: new work is refused. */
  get closing(): boolean {
    return this.closed;
  }

  /** Requests running now. */
  get inFlight(): number {
    return this.active;
  }

  /** Principals the per-principal count holds an entry for now, those at zero included (see `maxConcurrentPerPrincipal`); for status and tests. */
  get principalsCounted(): number {
    return this.perPrincipal.size;
  }

  /** Requests waiting for a slot now. */
  get queued(): number {
    return this.queue.length;
  }

  /** Subscriptions and streams counted against `maxSubscriptions` now. */
  get openSubscriptions(): number {
    return this.subscriptions;
  }

  /**
   * The mount upstream's identity and capabilities as every era tells its clients (`initialize`,
   * `server/discover`): without the capabilities the gateway does not serve (`tasks`, gate.ts).
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE before it started
   */
  describe(): ServerDescription {
    const desc = this.upstream.describe();
    // Asked for on every request (the 2026-07-28 serverInfo): copied once per upstream description.
    if (this.described?.from !== desc) this.described = { from: desc, advertised: advertisedDescription(desc) };
    return this.described.advertised;
  }

  /**
   * The upstream's description for a request about to call it. A single upstream that refuses it
   * (down, stopping: SWY_ERR_UPSTREAM_DOWN) refuses the request before its call begins, where
   * `guardUpstream` names the upstream on the context: the request is named here instead, so that
   * the access line, `request failed` and the metrics' tool label count it under its upstream as
   * the same call refused a moment later by the breaker is (docs/operations.md, Metrics).
   * @throws what the upstream's `describe()` throws
   */
  private describedFor(ctx: RequestContext): ServerDescription {
    try {
      return this.upstream.describe();
    } catch (err) {
      this.attribute(ctx);
      throw err;
    }
  }

  /** Names this mount's one upstream (and the tool or prompt called) on a client request that has none yet. */
  private attribute(ctx: RequestContext): void {
    if (ctx.upstream !== undefined || this.upstreamName === undefined) return;
    ctx.upstream = this.upstreamName;
    ctx.component = componentOf(ctx.method, ctx.params, this.upstreamName);
  }

  /** True when `method` is routed to upstreams at all. */
  knows(method: string): boolean {
    return isRouted(method);
  }

  /**
   * Runs one request. `clientSignal` aborts when the client cancels or goes away; the request then
   * rejects with SWY_ERR_REQ_CANCELLED (send nothing for it). `publish` false runs a request the
   * gateway makes on a client request's behalf (the 2026-07-28 `tools/list` that reads
   * `x-mcp-header` annotations) without publishing it as a client request: its upstream call is
   * still observed, the client request it serves is counted once, as itself. `encodeError` is the
   * client dialect's error encoder: a failed request is published with the JSON-RPC code it gives
   * (the code the client receives), not the error's own.
   * @throws SwitchyardError SWY_ERR_ADMISSION_BUSY, SWY_ERR_ADMISSION_PRINCIPAL_BUSY, SWY_ERR_ADMISSION_SHUTTING_DOWN,
   *   SWY_ERR_REQ_DEADLINE, SWY_ERR_REQ_CANCELLED, SWY_ERR_REQ_METHOD_NOT_FOUND, interceptor refusals; upstream errors unchanged
   */
  async run(init: RequestInit, clientSignal: CancelSignal | undefined, publish = true, encodeError?: ErrorEncoder): Promise<JsonObject> {
    const startedAt = performance.now();
    const call: CallState = new Deadline();
    const ctxView = contextOf(withoutTask(init), this.mount, call);
    if (!publish)
      return this.execute(ctxView, clientSignal, call, false, init.onBehalfOfState).catch((err: unknown) => {
        // The client request it serves names this upstream when it fails with this error (answerLocally).
        if (ctxView.upstream !== undefined) noteFailedUpstream(err, ctxView.upstream);
        throw err;
      });
    if (channels.requestStart.hasSubscribers) channels.requestStart.publish({ ctx: ctxView, startedAt });
    try {
      const result = await this.execute(ctxView, clientSignal, call, false, init.onBehalfOfState);
      if (channels.requestEnd.hasSubscribers) channels.requestEnd.publish(endOf(ctxView, startedAt));
      return result;
    } catch (err) {
      if (ctxView.upstream !== undefined) noteFailedUpstream(err, ctxView.upstream);
      if (channels.requestEnd.hasSubscribers) channels.requestEnd.publish(endOf(ctxView, startedAt, err, encodeError));
      throw err;
    }
  }

  /**
   * The names a dialect's `request failed` line carries for a request of this mount that failed
   * with `err` (a rejection of {@link run}): `mount`, and `upstream` when the request had reached
   * one (as the access line names it: an aggregate's member). Config names only, never a client's
   * string; the same error thrown to requests of several upstreams names the last.
   */
  failureFields(err: unknown): { mount: string; upstream?: string } {
    const upstream = typeof err === 'object' && err !== null ? failedAt.get(err) : undefined;
    return upstream === undefined ? { mount: this.mount } : { mount: this.mount, upstream };
  }

  /**
   * Observes a request the dialect answers itself, without the upstream or the interceptor chain
   * (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe` of a session, whose decision
   * `answer` asks {@link admitSubscription} for): `answer` runs
   * between the same `requestStart` and `requestEnd` publications as {@link run}, so metrics,
   * traces, the access log and /status.json count it. Returns what `answer` returns (a promise
   * when it does); what it throws is published as the request's error and thrown on.
   * @see telemetry digest §8 (gateway-local answers get a server span too)
   */
  answerLocally<T>(
    init: Pick<
      RequestInit,
      'method' | 'params' | 'protocolVersion' | 'dialect' | 'sessionKey' | 'identity' | 'clientInfo' | 'clientCapabilities' | 'logLevel'
    > &
      Partial<Pick<RequestInit, 'traceContext'>>,
    answer: () => T,
  ): T {
    if (!channels.requestStart.hasSubscribers && !channels.requestEnd.hasSubscribers) return answer();
    const startedAt = performance.now();
    // The caller's trace context: `params._meta`'s first (contextOf), else what the transport found.
    const ctx = contextOf(
      { ...LOCAL_DEFAULTS, ...init, upstream: undefined, component: undefined, traceContext: init.traceContext },
      this.mount,
      new Deadline(),
    );
    channels.requestStart.publish({ ctx, startedAt });
    const end = (err?: unknown) => {
      // Failed with what this mount's one upstream refused on its behalf (the 2026-07-28 tools/call
      // whose x-mcp-header list the down upstream refused): named as a request that reached it.
      if (err !== undefined && this.upstreamName !== undefined && typeof err === 'object' && err !== null && failedAt.get(err) === this.upstreamName)
        this.attribute(ctx);
      if (channels.requestEnd.hasSubscribers) channels.requestEnd.publish(endOf(ctx, startedAt, err));
    };
    let out: T;
    try {
      out = answer();
    } catch (err) {
      end(err);
      throw err;
    }
    if (out instanceof Promise)
      return out.then(
        (v: unknown) => (end(), v),
        (err: unknown) => {
          end(err);
          throw err;
        },
      ) as T;
    end();
    return out;
  }

  /**
   * Decides a subscription to the resource `init.params.uri` the way every invocation is decided:
   * a `resources/subscribe` request runs through the interceptor chain of the upstream that serves
   * the URI (an aggregate's member, on its own URI): curation, policy and its audit line. Admitted
   * and bounded by the deadline like any request, it ends in the chain (`isDecisionOnly`): no
   * upstream sees it, and it is not published as a request (the client's own request, or its
   * listen, is what the channels see). The caller checks the upstream's `resources.subscribe`
   * capability, and opens the subscription with {@link subscribe} once this resolves.
   * @throws SwitchyardError SWY_ERR_POLICY_DENIED; SWY_ERR_REQ_RESOURCE_NOT_FOUND (a URI curation
   *   hides, or a denied one with `hideDenied`); SWY_ERR_ADMISSION_BUSY, SWY_ERR_ADMISSION_SHUTTING_DOWN,
   *   SWY_ERR_REQ_DEADLINE, SWY_ERR_REQ_CANCELLED; other interceptor refusals
   * @see docs/policy.md, What is decided
   */
  async admitSubscription(init: SubscriptionInit, clientSignal?: CancelSignal): Promise<void> {
    const call: CallState = new Deadline();
    const ctx = contextOf({ ...LOCAL_DEFAULTS, ...init, method: 'resources/subscribe', upstream: undefined, component: undefined }, this.mount, call);
    await this.execute(ctx, clientSignal, call, true);
  }

  /**
   * The URIs of `uris` the subscriber may subscribe to, in their order: each distinct URI decided
   * once by {@link admitSubscription}, and left out when refused as denied or unknown
   * (SWY_ERR_POLICY_DENIED, SWY_ERR_REQ_RESOURCE_NOT_FOUND). A 2026-07-28 listen acknowledges
   * exactly these.
   * @throws what {@link admitSubscription} throws, but those two refusals
   * @see 2026-07-28 basic/patterns/subscriptions (the acknowledgement carries the honoured subset)
   */
  async admitSubscriptions(init: Omit<SubscriptionInit, 'params'>, uris: readonly string[], clientSignal?: CancelSignal): Promise<string[]> {
    const decided = new Set<string>();
    const refused = new Set<string>();
    for (const uri of uris) {
      if (decided.has(uri)) continue;
      decided.add(uri);
      try {
        await this.admitSubscription({ ...init, params: { uri } }, clientSignal);
      } catch (err) {
        if (!(err instanceof SwitchyardError && REFUSED_RESOURCE.has(err.code))) throw err;
        refused.add(uri);
      }
    }
    return uris.filter((u) => !refused.has(u));
  }

  /**
   * Publishes a refusal of a request that never reached the executor (a dialect answered it with
   * `err`: a message that failed its era's checks, `--strict=reject`, a session limit, a stream
   * opened while the upstream is down …), on the `refusal` channel the metrics
   * (`switchyard_refusals_total`) and /status.json read, with this mount. Every dialect refuses
   * through here, admission through {@link refusedAtAdmission}, and the refusals of a bound below
   * admission ({@link CHAIN_REFUSALS}: a rate limit, an upstream's full session pool) as their request ends. `dialect` is the client's dialect id.
   */
  refused(err: SwitchyardError, dialect: string | undefined): void {
    if (channels.refusal.hasSubscribers) channels.refusal.publish({ code: err.code, status: err.status, mount: this.mount, dialect });
  }

  /**
   * Runs one request through admission, the deadline and the chain; `decision` for one the chain
   * only decides ({@link admitSubscription}). `behalfOfState` is the `requestState` of the retry an
   * on-behalf request serves (RequestInit.onBehalfOfState).
   */
  private async execute(
    ctxView: RequestContext,
    clientSignal: CancelSignal | undefined,
    call: CallState,
    decision = false,
    behalfOfState?: unknown,
  ): Promise<JsonObject> {
    // A drain still admits the retry of a call held here, and what runs on its behalf (its
    // x-mcp-header list read), until its grace ends (close()).
    if (this.closed && !(this.drainHeld?.heldHere(ctxView.params.requestState ?? behalfOfState) ?? false))
      throw this.refusedAtAdmission(drainRefusal(), ctxView.dialect);
    if (!(decision ? isDecisionOnly(ctxView.method) : isRouted(ctxView.method)))
      throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: ctxView.method });
    let principal: string | undefined;
    try {
      principal = this.principalSlot(ctxView.identity);
    } catch (err) {
      throw this.refusedAtAdmission(err, ctxView.dialect);
    }
    try {
      await this.admit(clientSignal);
    } catch (err) {
      if (principal !== undefined) this.leavePrincipal(principal);
      throw this.refusedAtAdmission(err, ctxView.dialect);
    }
    // One promise settles the request: the work's outcome, or the first abort reason (client,
    // deadline, shutdown: see Deadline). A client signal aborted with a catalogue error (a session
    // that ended under the request) answers the request with that error; any other abort is a
    // cancellation.
    const settled = call.outcome();
    call.arm(this.limits.requestTimeoutMs, clientSignal, reasonOf);
    this.running.add(call);
    try {
      if (!decision) checkCapability(this.describedFor(ctxView), ctxView.method);
      this.upstream.request(ctxView).then(call.resolve, call.reject);
    } catch (err) {
      call.reject(err);
    }
    try {
      return await settled;
    } catch (err) {
      const out = (call.why as SwitchyardError | undefined) ?? err;
      if (out instanceof SwitchyardError && CHAIN_REFUSALS.has(out.code)) this.refused(out, ctxView.dialect);
      throw out;
    } finally {
      call.disarm();
      this.running.delete(call);
      this.release();
      if (principal !== undefined) this.leavePrincipal(principal);
    }
  }

  /**
   * Counts `err` as a refusal ({@link refused}: `switchyard_refusals_total`, /status.json) when it
   * is one of admission's own ({@link ADMISSION_REFUSALS}); a client that went away while queued
   * is not. Returns `err`, for the caller to throw: the request is also published as itself, with
   * this error, as every request that reached the executor is.
   */
  private refusedAtAdmission(err: unknown, dialect: string | undefined): unknown {
    if (err instanceof SwitchyardError && ADMISSION_REFUSALS.has(err.code)) this.refused(err, dialect);
    return err;
  }

  /**
   * Takes one of `identity`'s places under `maxConcurrentPerPrincipal` and returns the key to give
   * it back with ({@link leavePrincipal}), or undefined when the request is not counted: no bound,
   * no identity (unauthenticated: every such caller is the same anonymous one, bounded by
   * `maxConcurrent` and `maxQueued` alone), or the stdio client (`local`, the only caller there).
   * Principals are told apart by `principalKey` (issuer and subject).
   * @throws SwitchyardError SWY_ERR_ADMISSION_PRINCIPAL_BUSY (429, Retry-After 1) when the
   *   principal already has that many requests running or waiting
   * @see RFC 6585 §4 (429 Too Many Requests)
   */
  private principalSlot(identity: RequestContext['identity']): string | undefined {
    const max = this.limits.maxConcurrentPerPrincipal;
    if (max === undefined || identity === null || identity.source === 'local') return undefined;
    const key = principalKey(identity);
    const held = this.perPrincipal.get(key);
    if (held === undefined && this.perPrincipal.size >= PRINCIPAL_SWEEP_AT) {
      for (const [k, n] of this.perPrincipal) if (n === 0) this.perPrincipal.delete(k);
    }
    if ((held ?? 0) >= max) throw new SwitchyardError('SWY_ERR_ADMISSION_PRINCIPAL_BUSY', { detail: `limit ${max} on this mount` });
    this.perPrincipal.set(key, (held ?? 0) + 1);
    return key;
  }
  private leavePrincipal(key: string): void {
    const held = this.perPrincipal.get(key);
    // Kept at zero (see perPrincipal); a key swept meanwhile is not added back.
    if (held !== undefined && held > 0) this.perPrincipal.set(key, held - 1);
  }

  private admit(signal: CancelSignal | undefined): Promise<void> {
    if (this.active < this.limits.maxConcurrent) {
      this.active++;
      return Promise.resolve();
    }
    if (this.queue.length >= this.limits.maxQueued) return Promise.reject(new SwitchyardError('SWY_ERR_ADMISSION_BUSY'));
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', drop);
        this.active++;
        resolve();
      };
      const drop = () => {
        const i = this.queue.indexOf(go);
        if (i >= 0) this.queue.splice(i, 1);
        reject(reasonOf(signal));
      };
      signal?.addEventListener('abort', drop, { once: true });
      this.queue.push(go);
    });
  }

  private release(): void {
    this.active--;
    const next = this.queue.shift();
    if (next) next();
    else if (this.active === 0) for (const f of this.idle) f();
  }

  /**
   * Opens a subscription on the mount's upstream; each notification passes the notification
   * filters for `opts.subscriber` before it reaches `sink`.
   * A counted subscription also takes one of its client's places under `maxSubscriptionsPerClient`
   * (checked first: a client at its share is told so even when every place is taken).
   * @throws SwitchyardError SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT (429), SWY_ERR_SUBSCRIPTION_LIMIT (503)
   *   (counted subscriptions only), SWY_ERR_ADMISSION_SHUTTING_DOWN; the upstream's
   *   SWY_ERR_SESSION_LIMIT / SWY_ERR_SUBSCRIPTION_LIMIT. Refusals of a bound are counted as
   *   refusals (`switchyard_refusals_total`) with the subscriber's dialect.
   * @see RFC 6585 §4 (429 Too Many Requests: one client's share)
   */
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void, opts: SubscribeOptions): Subscription {
    if (this.closed) throw drainRefusal();
    const counted = opts.counted !== false;
    const client = counted ? opts.client : undefined;
    if (counted) {
      if (this.clientSubscriptions.full(client))
        throw this.refusedSubscription(
          new SwitchyardError('SWY_ERR_SUBSCRIPTION_CLIENT_LIMIT', { detail: `limit ${this.clientSubscriptions.max} on this mount` }),
          opts,
        );
      if (this.subscriptions >= this.limits.maxSubscriptions) throw this.refusedSubscription(new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT'), opts);
      this.subscriptions++;
      this.clientSubscriptions.take(client);
    }
    const filters = opts.unfiltered === true ? [] : this.filters;
    // The filters need the subscriber only: a closure over `opts` kept its session reference (and
    // that reference's `ask`) alive for the subscription's life where the upstream keeps none.
    const subscriber = opts.subscriber;
    const deliver =
      filters.length === 0
        ? sink
        : (n: CoreNotification) => {
            let out: CoreNotification | null = n;
            for (const f of filters) if (out) out = f(subscriber, out);
            if (out) sink(out);
          };
    let sub: Subscription;
    try {
      const s = opts.session;
      sub = s && this.upstream.subscribeSession ? this.upstream.subscribeSession(s, filter, deliver) : this.upstream.subscribe(filter, deliver);
    } catch (err) {
      if (counted) this.releaseSubscription(client);
      // The upstream's bounds: its session pool has no room (SWY_ERR_SESSION_LIMIT) or every
      // place for a session with subscribers is taken (SWY_ERR_SUBSCRIPTION_LIMIT).
      if (err instanceof SwitchyardError && SUBSCRIBE_REFUSALS.has(err.code)) throw this.refusedSubscription(err, opts);
      throw err;
    }
    return new CountedSubscription(this, sub, counted, client);
  }

  /**
   * What the mount's notification filters (policy, curation, the aggregate's members, as the
   * config in force has them) let `subscriber` receive of `n` now: `n` (or what a filter made of
   * it), or null when one drops it. For a subscription opened `unfiltered`, which decides at
   * delivery.
   * @see 2025-11-25 server/resources#subscriptions; docs/security.md ("Subscriptions")
   */
  filterFor(subscriber: SubscriberContext, n: CoreNotification): CoreNotification | null {
    let out: CoreNotification | null = n;
    for (const f of this.filters) if (out) out = f(subscriber, out);
    return out;
  }

  /** Counts a subscription refused by a bound as a refusal of its subscriber's dialect ({@link refused}), and returns it. */
  private refusedSubscription(err: SwitchyardError, opts: SubscribeOptions): SwitchyardError {
    this.refused(err, opts.subscriber.dialect);
    return err;
  }

  /** Gives back a counted subscription's slot, and its client's place (`CountedSubscription`). @internal */
  releaseSubscription(client?: string): void {
    this.subscriptions--;
    this.clientSubscriptions.release(client);
  }

  /** Reserves one subscription slot for a stream that is not an upstream subscription. @throws SwitchyardError SWY_ERR_SUBSCRIPTION_LIMIT */
  reserveStream(): () => void {
    if (this.subscriptions >= this.limits.maxSubscriptions) throw new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT');
    this.subscriptions++;
    let held = true;
    return () => {
      if (held) {
        held = false;
        this.subscriptions--;
      }
    };
  }

  /** Forgets what the upstream keeps for client session `sessionKey` (its upstream session). */
  releaseSession(sessionKey: string): void {
    this.upstream.release?.(sessionKey);
  }

  /**
   * Sends client session `sessionKey`'s notification `n` to the upstream session(s) opened for
   * that session alone ({@link Upstream.forwardNotification}); nothing where there are none.
   */
  forwardNotification(sessionKey: string, n: CoreNotification): void {
    this.upstream.forwardNotification?.(sessionKey, n);
  }

  /**
   * Stops admitting new work and resolves when in-flight requests finish. Requests still running
   * after `graceMs` are aborted with `why` (so each gets an error response, and its upstream is
   * told to cancel): by default SWY_ERR_ADMISSION_SHUTTING_DOWN, the gateway's shutdown.
   * With `held` (a shutdown's drain), the calls held for a 2026-07-28 client's retry count as
   * in flight: within the grace, the retry of one held here is still admitted (any other new
   * request is refused, 503 SWY_ERR_ADMISSION_SHUTTING_DOWN), and the drain waits until nothing
   * is held either ({@link HeldCalls.busy}). What is still held after the grace is the caller's to
   * cancel (`HeldCalls.clear`); a retry resumed here for another replica's client that still runs
   * then is cut with `why`, as a request of this executor is (`HeldCalls.cutResumed`).
   * @param why what the requests cut after the grace get; a reload that retires the mount says so
   *   (the gateway itself goes on serving).
   * @param held the gateway's held calls (a shutdown; not a reload, which cancels those of the
   *   upstream it retires: `HeldCalls.cancelOwned`).
   * @returns true when everything finished within the grace period.
   * @see 2026-07-28 basic/patterns/mrtr (the retry carries requestState)
   */
  async close(graceMs: number, why?: SwitchyardError, held?: HeldCalls): Promise<boolean> {
    this.closed = true;
    this.drainHeld = held;
    for (const go of this.queue.splice(0)) go();
    const { settled } = await drainThenCut({
      ...this.settling(held),
      graceMs,
      cut: () => {
        this.drainHeld = undefined;
        const err = (why ??= new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'request aborted' }));
        const aborted = [...this.running];
        for (const call of aborted) call.abort(err);
        // A retry this replica resumes for another replica's client runs on no executor: it is cut
        // here with the same error, which goes back to the client's replica (HeldCalls.track).
        return aborted.length + (held?.cutResumed(err) ?? 0);
      },
    });
    this.drainHeld = undefined;
    if (settled) return true;
    await settledWithin(this.settling(), 1_000);
    return false;
  }

  /** This executor's requests as work a drain waits on (with `held`, the calls held count too: {@link HeldCalls.busy}). */
  private settling(held?: HeldCalls): Settling {
    return {
      idle: () => this.active === 0 && (held?.busy ?? 0) === 0,
      onSettle: (fn) => {
        this.idle.add(fn);
        const off = held?.onSettle(fn);
        return () => {
          this.idle.delete(fn);
          off?.();
        };
      },
    };
  }
}
