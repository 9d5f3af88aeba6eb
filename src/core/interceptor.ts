// The one choke point: every request that reaches an upstream passes through a chain of
// interceptors (policy, rate limits, argument validation, metrics, traces, emulation knobs),
// composed the way undici composes dispatcher interceptors.

import type { JsonObject } from './message.js';
import type { CoreNotification, RequestContext } from './request.js';

/**
 * Runs one request against one upstream and resolves with its (2026-07-28-shaped) result.
 * @throws SwitchyardError (catalogue), PeerRpcError (the upstream's own error)
 */
export type Dispatch = (ctx: RequestContext) => Promise<JsonObject>;

/**
 * Wraps a dispatch: it may refuse (throw a catalogue error before calling `next`), rewrite the
 * context or the result, or only observe. It must call `next` at most once per request and must
 * not swallow `ctx.signal`.
 * @see undici lib/dispatcher/dispatcher.js `compose` (the same shape)
 */
export type Interceptor = (next: Dispatch) => Dispatch;

/**
 * Composes `interceptors` around `dispatch`. As in undici, the last interceptor is the
 * outermost: `compose(d, a, b)` runs `b`, then `a`, then `d`.
 */
export function compose(dispatch: Dispatch, interceptors: readonly Interceptor[]): Dispatch {
  let out = dispatch;
  for (const i of interceptors) out = i(out);
  return out;
}

/** An interceptor whose inner interceptors can be replaced while it serves (see {@link createSwappableInterceptor}). */
export interface SwappableInterceptor {
  /** The interceptor to compose once, where the swapped ones belong in the chain. */
  readonly interceptor: Interceptor;
  /**
   * Replaces the inner interceptors (innermost first, as {@link compose} takes them) for every
   * request that enters from now on; a request already inside keeps the chain it entered.
   */
  swap(interceptors: readonly Interceptor[]): void;
}

/**
 * An interceptor standing for a list of interceptors that a config reload may replace without
 * rebuilding what it was composed into (the policy stage of an upstream: curation, policy, rate
 * limits, argument validation). Each composition keeps its chain in a holder, so that a request
 * costs one call and one field read more than the list composed directly; a swap composes the new
 * list once per composition.
 */
export function createSwappableInterceptor(initial: readonly Interceptor[]): SwappableInterceptor {
  let list = initial;
  const holders: Array<{ next: Dispatch; run: Dispatch }> = [];
  return {
    interceptor: (next) => {
      const holder = { next, run: compose(next, list) };
      holders.push(holder);
      return (ctx) => holder.run(ctx);
    },
    swap(interceptors) {
      list = interceptors;
      for (const h of holders) h.run = compose(h.next, list);
    },
  };
}

/** What kind of server component a request names (the unit of authorization). */
export type ComponentKind = 'tool' | 'prompt' | 'resource' | 'resource-template';

/**
 * The component a request invokes, as its upstream knows it (an aggregate mount's prefix
 * already removed).
 */
export interface Component {
  kind: ComponentKind;
  /** Tool or prompt name, resource URI, or resource template URI template. */
  name: string;
  /** The upstream that serves it (config name). */
  upstream: string;
}

/**
 * The component a request names, if any: `tools/call` a tool, `prompts/get` a prompt,
 * `resources/read` / `resources/subscribe` / `resources/unsubscribe` a resource,
 * `completion/complete` the prompt or resource template of its `ref`.
 * @see 2025-11-25 server/tools, server/prompts, server/resources, server/utilities/completion
 */
export function componentOf(method: string, params: JsonObject, upstream: string): Component | undefined {
  switch (method) {
    case 'tools/call':
      return typeof params.name === 'string' ? { kind: 'tool', name: params.name, upstream } : undefined;
    case 'prompts/get':
      return typeof params.name === 'string' ? { kind: 'prompt', name: params.name, upstream } : undefined;
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return typeof params.uri === 'string' ? { kind: 'resource', name: params.uri, upstream } : undefined;
    case 'completion/complete': {
      const ref = params.ref as JsonObject | undefined;
      if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') return { kind: 'prompt', name: ref.name, upstream };
      if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') return { kind: 'resource-template', name: ref.uri, upstream };
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * True for a request that passes the interceptor chain only to be decided, and ends there:
 * `resources/subscribe`, a client's wish for a resource's updates (a 2025-era or HTTP+SSE
 * request; each URI of a 2026-07-28 listen's `resourceSubscriptions`). Curation and policy
 * decide it like any invocation; `guardUpstream` answers it `{}` without an upstream call, since
 * the subscription itself is opened by `Upstream.subscribe`. Interceptors that count or trace
 * upstream calls (rate limits, client spans) let it pass.
 */
export function isDecisionOnly(method: string): boolean {
  return method === 'resources/subscribe';
}

/** How a list method's result holds its components: the array key and each item's name key. */
export interface ListShape {
  kind: ComponentKind;
  /** Result member holding the array (`tools`, `prompts`, `resources`, `resourceTemplates`). */
  key: string;
  /** Item member naming the component (`name`, `uri`, `uriTemplate`). */
  nameKey: string;
}

/** The list methods and their result shapes. @see 2025-11-25 schema (ListToolsResult, …) */
export const LIST_SHAPES: Readonly<Record<string, ListShape>> = Object.freeze({
  'tools/list': { kind: 'tool', key: 'tools', nameKey: 'name' },
  'prompts/list': { kind: 'prompt', key: 'prompts', nameKey: 'name' },
  'resources/list': { kind: 'resource', key: 'resources', nameKey: 'uri' },
  'resources/templates/list': { kind: 'resource-template', key: 'resourceTemplates', nameKey: 'uriTemplate' },
});

/**
 * Filters or rewrites the notifications one subscriber receives (policy hides updates of
 * resources the subscriber may not read). Returns the notification to deliver, or null to drop it.
 */
export type NotificationFilter = (subscriber: SubscriberContext, n: CoreNotification) => CoreNotification | null;

/** Who a subscription delivers to. */
export interface SubscriberContext {
  identity: RequestContext['identity'];
  /** The mount the subscription was opened on. */
  mount: string;
  /** The client's dialect id. */
  dialect: string;
}

/** What {@link deriveContext} may change: anything but the signal, which stays the request's. */
export type ContextPatch = Partial<Omit<RequestContext, 'signal'>>;

/** Every field of a request context but its signal, each named (optional ones may be undefined). */
export type ContextFieldValues = { [K in Exclude<keyof RequestContext, 'signal'>]-?: RequestContext[K] };

/**
 * A request context's fields as own properties of a class instance, and its `signal` left to the
 * subclass (an accessor on the prototype, read only when needed). A class, not an object literal
 * with a `signal` getter: V8 (Node 20) builds such a literal in dictionary mode, so every read of
 * it is a hash lookup, and makes its accessor anew on every call (about 0.8 µs); a class instance
 * has fast properties and shares its prototype's accessor. Nothing spreads a context (`{ ...ctx }`
 * would drop the signal); derive one. `fields` names every field (a field added to the context
 * and not given here fails to compile).
 * @see test/regressions/fast-objects.test.ts
 */
export abstract class ContextFields implements RequestContext {
  method: RequestContext['method'];
  params: RequestContext['params'];
  protocolVersion: RequestContext['protocolVersion'];
  clientInfo: RequestContext['clientInfo'];
  clientCapabilities: RequestContext['clientCapabilities'];
  logLevel: RequestContext['logLevel'];
  identity: RequestContext['identity'];
  mount: RequestContext['mount'];
  dialect: RequestContext['dialect'];
  upstream: RequestContext['upstream'];
  component: RequestContext['component'];
  traceContext: RequestContext['traceContext'];
  // The request's two credentials, the client's `Authorization` and its session id (a 2025 id
  // works as a bearer, a sealed one across replicas), are private fields behind accessors on the
  // prototype, not own properties: a context is published on the public diagnostics channels, and
  // a subscriber that logs or serializes a message (pino, JSON.stringify, util.inspect) copies
  // own properties only. Reading `ctx.authorization` still gives the value.
  #sessionKey: RequestContext['sessionKey'];
  #authorization: RequestContext['authorization'];
  progressToken: RequestContext['progressToken'];
  rpcId: RequestContext['rpcId'];
  onProgress: RequestContext['onProgress'];
  onLog: RequestContext['onLog'];
  ask: RequestContext['ask'];
  notifyClient: RequestContext['notifyClient'];
  onBehalf: RequestContext['onBehalf'];
  charged: RequestContext['charged'];

  constructor(fields: ContextFieldValues) {
    this.method = fields.method;
    this.params = fields.params;
    this.protocolVersion = fields.protocolVersion;
    this.clientInfo = fields.clientInfo;
    this.clientCapabilities = fields.clientCapabilities;
    this.logLevel = fields.logLevel;
    this.identity = fields.identity;
    this.mount = fields.mount;
    this.dialect = fields.dialect;
    this.upstream = fields.upstream;
    this.component = fields.component;
    this.traceContext = fields.traceContext;
    this.sessionKey = fields.sessionKey;
    this.authorization = fields.authorization;
    this.progressToken = fields.progressToken;
    this.rpcId = fields.rpcId;
    this.onProgress = fields.onProgress;
    this.onLog = fields.onLog;
    this.ask = fields.ask;
    this.notifyClient = fields.notifyClient;
    this.onBehalf = fields.onBehalf;
    this.charged = fields.charged;
  }

  get sessionKey(): RequestContext['sessionKey'] {
    return this.#sessionKey;
  }

  set sessionKey(value: RequestContext['sessionKey']) {
    this.#sessionKey = value;
  }

  get authorization(): RequestContext['authorization'] {
    return this.#authorization;
  }

  set authorization(value: RequestContext['authorization']) {
    this.#authorization = value;
  }

  abstract get signal(): AbortSignal;
}

/**
 * A context derived from another: its own fields, and the signal of the context it came from, read
 * only when its own is. The fields are copied from the base context itself and the patched ones
 * then replaced (no intermediate object of every field: one allocation per derived context, not two).
 */
class DerivedContext extends ContextFields {
  readonly #base: RequestContext;
  #signal: AbortSignal | undefined;

  constructor(ctx: RequestContext, patch: ContextPatch, signal?: AbortSignal) {
    // Every field of RequestContext is a key of ctx (optional ones read undefined), and the base
    // constructor reads no `signal`.
    super(ctx as ContextFieldValues);
    this.#base = ctx;
    this.#signal = signal;
    if (patch === NO_PATCH) return;
    if ('method' in patch) this.method = patch.method!;
    if ('params' in patch) this.params = patch.params!;
    if ('protocolVersion' in patch) this.protocolVersion = patch.protocolVersion!;
    if ('clientInfo' in patch) this.clientInfo = patch.clientInfo;
    if ('clientCapabilities' in patch) this.clientCapabilities = patch.clientCapabilities!;
    if ('logLevel' in patch) this.logLevel = patch.logLevel;
    if ('identity' in patch) this.identity = patch.identity!;
    if ('mount' in patch) this.mount = patch.mount;
    if ('dialect' in patch) this.dialect = patch.dialect;
    if ('upstream' in patch) this.upstream = patch.upstream;
    if ('component' in patch) this.component = patch.component;
    if ('traceContext' in patch) this.traceContext = patch.traceContext;
    if ('sessionKey' in patch) this.sessionKey = patch.sessionKey;
    if ('authorization' in patch) this.authorization = patch.authorization;
    if ('progressToken' in patch) this.progressToken = patch.progressToken;
    if ('rpcId' in patch) this.rpcId = patch.rpcId;
    if ('onProgress' in patch) this.onProgress = patch.onProgress!;
    if ('onLog' in patch) this.onLog = patch.onLog!;
    if ('ask' in patch) this.ask = patch.ask;
    if ('notifyClient' in patch) this.notifyClient = patch.notifyClient;
    if ('onBehalf' in patch) this.onBehalf = patch.onBehalf;
    if ('charged' in patch) this.charged = patch.charged;
  }

  get signal(): AbortSignal {
    return this.#signal ?? this.#base.signal;
  }
}

/**
 * A copy of `ctx` with the fields of `patch` replaced (a field named with the value undefined is
 * cleared). The copy's `signal` is `ctx`'s, read only when the copy's is: a request's signal is
 * made on first read (Executor.run). Cheaper than `{ ...ctx, ...patch }`, which costs a few
 * microseconds for a context this size and would make the signal at once. The copy's fields are
 * its own enumerable properties, but for `signal`, `authorization` and `sessionKey`, accessors on its prototype.
 * With `signal`, the copy's signal is that one instead (one that aborts when `ctx`'s does, and
 * sooner: the aggregate bounds a member's call by the member's own deadline so).
 */
export function deriveContext(ctx: RequestContext, patch: ContextPatch, signal?: AbortSignal): RequestContext {
  return new DerivedContext(ctx, patch, signal);
}

/** The patch of a copy whose fields are all its base's (see {@link deriveTraceContext}). */
const NO_PATCH: ContextPatch = Object.freeze({});

/**
 * A copy of `ctx` whose `traceContext` is `traceContext`: what `deriveContext(ctx, { traceContext })`
 * makes, without the patch object or the look-up of every field in it. The tracing interceptor
 * makes one per upstream call (the client span's context, toward the upstream).
 */
export function deriveTraceContext(ctx: RequestContext, traceContext: RequestContext['traceContext']): RequestContext {
  const copy = new DerivedContext(ctx, NO_PATCH);
  copy.traceContext = traceContext;
  return copy;
}
