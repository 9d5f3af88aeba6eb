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

/** Every field of `T` present (its value may be undefined): a literal of this type names them all. */
export type EveryField<T> = { [K in Exclude<keyof T, never>]: T[K] | undefined };

/** What {@link deriveContext} may change: anything but the signal, which stays the request's. */
export type ContextPatch = Partial<Omit<RequestContext, 'signal'>>;

/**
 * A copy of `ctx` with the fields of `patch` replaced (a field named with the value undefined is
 * cleared). The copy's `signal` is `ctx`'s, read only when the copy's is: a request's signal is
 * made on first read (Executor.run). Cheaper than `{ ...ctx, ...patch }`, which costs a few
 * microseconds for a context this size and would make the signal at once.
 */
export function deriveContext(ctx: RequestContext, patch: ContextPatch): RequestContext {
  const pick = <K extends keyof ContextPatch>(k: K): RequestContext[K] => (k in patch ? (patch[k] as RequestContext[K]) : ctx[k]);
  return {
    method: pick('method'),
    params: pick('params'),
    protocolVersion: pick('protocolVersion'),
    clientInfo: pick('clientInfo'),
    clientCapabilities: pick('clientCapabilities'),
    logLevel: pick('logLevel'),
    identity: pick('identity'),
    mount: pick('mount'),
    dialect: pick('dialect'),
    upstream: pick('upstream'),
    component: pick('component'),
    traceContext: pick('traceContext'),
    sessionKey: pick('sessionKey'),
    authorization: pick('authorization'),
    progressToken: pick('progressToken'),
    onProgress: pick('onProgress'),
    onLog: pick('onLog'),
    ask: pick('ask'),
    get signal() {
      return ctx.signal;
    },
  } satisfies EveryField<Omit<RequestContext, 'signal'>> & Pick<RequestContext, 'signal'>;
}
