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
