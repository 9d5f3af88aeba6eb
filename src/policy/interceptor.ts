// The authorization interceptor: decides invocations before the upstream sees them, filters lists to what the caller may invoke.

import type { SwitchyardError } from '../core/errors.js';
import { LIST_SHAPES, type Component, type Interceptor, type ListShape, type NotificationFilter, type SubscriberContext } from '../core/interceptor.js';
import type { JsonObject } from '../core/message.js';
import type { CoreNotification, RequestContext } from '../core/request.js';
import {
  INVOCATION_METHODS,
  INVOKED_BY,
  deniedError,
  PolicyLines,
  invokedComponent,
  loggedComponentName,
  unknownComponentError,
  unnamedInvocationError,
  type PolicyLog,
} from './components.js';
import { loggedSubject } from '../core/logged-text.js';
import { RESOURCE_CARRIERS, withheldResources } from './embedded.js';
import type { Policy, PolicyRequest } from './policy.js';

/** Options of {@link createPolicyInterceptor}. */
export interface PolicyInterceptorOptions {
  /** Receives one audit line per invocation decision, and rule evaluation failures. */
  log: PolicyLog;
}

function requestOf(ctx: Pick<RequestContext, 'dialect' | 'mount'>, method: string): PolicyRequest {
  return { method, era: ctx.dialect ?? '', mount: ctx.mount ?? 'default' };
}

/**
 * The refusal of a denied invocation: `SWY_ERR_POLICY_DENIED`, or with `hideDenied` the error
 * an unknown name of that kind gets (see {@link unknownComponentError}).
 */
function refusal(policy: Policy, c: Component): SwitchyardError {
  return policy.hideDenied ? unknownComponentError(c) : deniedError(c);
}

/** `res` with the items of its list that fail `keep` removed. */
export function filterList(res: JsonObject, shape: ListShape, keep: (name: string) => boolean): JsonObject {
  const items = res[shape.key];
  if (!Array.isArray(items)) return res;
  const kept = items.filter((item) => {
    const name = item && typeof item === 'object' ? (item as JsonObject)[shape.nameKey] : undefined;
    // An item without a usable name cannot be invoked by name, so it is not shown.
    return typeof name === 'string' && keep(name);
  });
  return kept.length === items.length ? res : { ...res, [shape.key]: kept };
}

/**
 * `res` marked `cacheScope: 'private'`: what a caller gets now depends on who it is, so no
 * cache may share it across authorization contexts (a shared cache would hand one principal's
 * list, or a read another principal may not make, to the next).
 * @see 2026-07-28 server/utilities/caching (`private` is never shared across authorization contexts)
 */
function privateScope(res: JsonObject): JsonObject {
  return res.cacheScope === 'private' ? res : { ...res, cacheScope: 'private' };
}

/**
 * Creates the authorization interceptor.
 * - Invocations (`tools/call`, `prompts/get`, `resources/read`, `resources/subscribe`,
 *   `completion/complete` of a prompt or resource template) are decided before `next` runs, on
 *   `ctx.component` (the upstream's own name; an aggregate mount's prefix is already removed),
 *   and for `tools/call` and `prompts/get` on `params.arguments` as sent (curation renames only
 *   the name, so they are the arguments the upstream's tool gets) when a rule reads them.
 *   A denial throws `SWY_ERR_POLICY_DENIED`, or with `hideDenied` the unknown-name error.
 *   Each decision writes one audit line: `{ principal: { sub, iss } (each cut like a name), component: { kind, name,
 *   upstream }, method, decision: 'allow'|'deny', rule }`, message `policy decision`.
 * - Lists (`LIST_SHAPES`) are filtered after `next`: every item the caller may not invoke is
 *   removed, deciding each as its invoking method (`INVOKED_BY`), so what a caller sees is
 *   exactly what it may call (`Policy.visible`: a tool or prompt is shown when some arguments
 *   could be allowed). No audit lines for lists.
 * - Results that carry resources (`tools/call`, `prompts/get`, `resources/read`: embedded
 *   `resource` and `resource_link` blocks, a read's other contents) are filtered after `next`:
 *   each resource is decided as `resources/read` of its URI, and one the caller may not read is
 *   withheld ({@link withheldResources}: a block becomes a text note, a read's item is dropped).
 *   No audit lines for these either.
 * - List and `resources/read` results are marked `cacheScope: 'private'`.
 * - Everything else passes through.
 * @throws SwitchyardError SWY_ERR_POLICY_DENIED; with hideDenied SWY_ERR_REQ_PARAMS or
 *   SWY_ERR_REQ_RESOURCE_NOT_FOUND; SWY_ERR_REQ_PARAMS for an invocation that names nothing
 * @see 2025-11-25 basic/security_best_practices (least privilege at the component boundary)
 */
export function createPolicyInterceptor(policy: Policy, opts: PolicyInterceptorOptions): Interceptor {
  const { log } = opts;
  const filtered = (ctx: RequestContext, shape: ListShape, res: JsonObject): JsonObject => {
    const upstream = ctx.upstream ?? '';
    const request = requestOf(ctx, INVOKED_BY[shape.kind]);
    return privateScope(
      filterList(res, shape, (name) => policy.visible({ identity: ctx.identity, component: { kind: shape.kind, name, upstream }, request }, log).allowed),
    );
  };
  // Made once: what a result's resources are decided by, with the request passed in.
  const readable = (uri: string, ctx: RequestContext): boolean =>
    policy.decide(
      { identity: ctx.identity, component: { kind: 'resource', name: uri, upstream: ctx.upstream ?? '' }, request: requestOf(ctx, 'resources/read') },
      log,
    ).allowed;
  // Not an async function: an invocation is decided synchronously and, allowed, is the upstream's
  // own promise, or one reaction on it for a result that may carry resources (no async frame);
  // what the decision throws is a rejection, as from an async function.
  return (next) => (ctx) => {
    try {
      const shape = LIST_SHAPES[ctx.method];
      if (shape) return next(ctx).then((res) => filtered(ctx, shape, res));
      if (!INVOCATION_METHODS.has(ctx.method)) return next(ctx);
      const component = invokedComponent(ctx);
      if (!component) throw unnamedInvocationError(ctx.method);
      const request = requestOf(ctx, ctx.method);
      // Read only for a policy whose rules read them (one field read, `undefined` being `{}`).
      if (policy.readsArguments) request.arguments = ctx.params.arguments;
      const d = policy.decide({ identity: ctx.identity, component, request }, log);
      // The audit line's fields are built only when the line is written (not at the `warn` level
      // a busy gateway runs at). It never carries the arguments (they may hold secrets).
      if (log.isLevelEnabled?.('info') !== false)
        log.info(
          {
            // The subject is the authorization server's (or a host's) to choose, of any length: cut as names are.
            principal: { sub: loggedSubject(ctx.identity?.subject), iss: loggedSubject(ctx.identity?.issuer) },
            component: { kind: component.kind, name: loggedComponentName(component), upstream: component.upstream },
            method: ctx.method,
            decision: d.allowed ? 'allow' : 'deny',
            rule: d.rule ?? null,
          },
          PolicyLines.decision,
        );
      if (!d.allowed) throw refusal(policy, component);
      if (!RESOURCE_CARRIERS.has(ctx.method)) return next(ctx);
      return next(ctx).then((res) => {
        const out = withheldResources(ctx, res, readable);
        return ctx.method === 'resources/read' ? privateScope(out) : out;
      });
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/** Options of {@link createPolicyNotificationFilter}. */
export interface PolicyNotificationFilterOptions {
  /**
   * The upstream a notification came from: a config name for a filter on one upstream's
   * subscription, or a function for merged streams. `undefined` from the function drops the
   * notification (fail closed).
   */
  upstream: string | ((n: CoreNotification, subscriber: SubscriberContext) => string | undefined);
  /** Where rule evaluation failures are reported. */
  log?: PolicyLog;
}

/**
 * A notification filter that drops `notifications/resources/updated` for a resource the
 * subscriber may not read (decided as `resources/read` of that URI); other notifications pass.
 * @see 2025-11-25 server/resources#subscriptions; 2026-07-28 basic/patterns/subscriptions
 */
export function createPolicyNotificationFilter(policy: Policy, opts: PolicyNotificationFilterOptions): NotificationFilter {
  return (subscriber, n) => {
    if (n.method !== 'notifications/resources/updated') return n;
    const uri = n.params.uri;
    const upstream = typeof opts.upstream === 'string' ? opts.upstream : opts.upstream(n, subscriber);
    if (typeof uri !== 'string' || upstream === undefined) return null;
    const d = policy.decide(
      { identity: subscriber.identity, component: { kind: 'resource', name: uri, upstream }, request: requestOf(subscriber, 'resources/read') },
      opts.log,
    );
    return d.allowed ? n : null;
  };
}
