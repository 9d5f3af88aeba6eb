// Tool, prompt and resource curation per upstream: hide, rename and redescribe in lists, and map invocations back.

import type { SwitchyardError } from '../core/errors.js';
import {
  deriveContext,
  LIST_SHAPES,
  type ComponentKind,
  type Dispatch,
  type Interceptor,
  type NotificationFilter,
  type SubscriberContext,
} from '../core/interceptor.js';
import type { JsonObject } from '../core/message.js';
import type { CoreNotification, RequestContext } from '../core/request.js';
import {
  checkFragment,
  configError,
  renameConflicts,
  type ComponentCuration,
  type PolicyConfigIssue,
  type ResourceCuration,
  type UpstreamPolicyConfig,
} from './config.js';
import { RESOURCE_CARRIERS, withheldResources } from './embedded.js';
import { INVOCATION_METHODS, compileGlobs, invokedComponent, resourceUriSpellings, unknownComponentError, withClientName } from './components.js';

/** Options of {@link createCurationInterceptor}. */
export interface CurationOptions {
  /**
   * Upstream entries by config name; only their `tools`, `prompts` and `resources` keys are
   * read, so the config loader's upstream map can be passed as it is.
   */
  upstreams: Readonly<Record<string, UpstreamPolicyConfig>>;
  /** JSON Pointer of the upstream map in the config file, for error paths (default `/upstreams`). */
  path?: string;
}

/** One upstream's compiled curation of one kind. */
interface Curator {
  /** The client-visible name of upstream name `name`; undefined when hidden. */
  toClient(name: string): string | undefined;
  /** The upstream name a client name calls; undefined when no visible component has that client name. */
  toUpstream(clientName: string): string | undefined;
  /** The replacement description of upstream name `name`. */
  description(name: string): string | undefined;
}

function compileCurator(c: ComponentCuration | ResourceCuration, basePath: string, issues: PolicyConfigIssue[], uris = false): Curator {
  const include = compileGlobs(c.include);
  const exclude = compileGlobs(c.exclude);
  const rename = new Map(Object.entries('rename' in c ? (c.rename ?? {}) : {}));
  const back = new Map<string, string>();
  // The first entry of a client-visible name takes it; the others are config errors.
  for (const [from, to] of rename) if (!back.has(to)) back.set(to, from);
  if ('rename' in c && c.rename) issues.push(...renameConflicts(c.rename, basePath));
  const describe = new Map(Object.entries(c.describe ?? {}));
  const visibleAs = (name: string) => (include === undefined || include(name)) && !exclude?.(name);
  // A resource URI is visible only when every spelling an upstream may read it as is.
  const visible = uris ? (name: string) => resourceUriSpellings(name).every(visibleAs) : visibleAs;
  return {
    toClient(name) {
      if (!visible(name)) return undefined;
      const to = rename.get(name);
      if (to !== undefined) return to;
      // Another component renamed to this name takes it: calls of it reach that one, so this one is not shown.
      return back.has(name) ? undefined : name;
    },
    toUpstream(clientName) {
      const from = back.get(clientName) ?? (rename.has(clientName) ? undefined : clientName);
      return from !== undefined && visible(from) ? from : undefined;
    },
    description: (name) => describe.get(name),
  };
}

function pointerToken(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Curators of one upstream, by component kind (resources and resource templates share one). */
type UpstreamCurators = Partial<Record<ComponentKind, Curator>>;

function compileAll(opts: CurationOptions): Map<string, UpstreamCurators> {
  const base = opts.path ?? '/upstreams';
  const out = new Map<string, UpstreamCurators>();
  const issues: PolicyConfigIssue[] = [];
  for (const [name, entry] of Object.entries(opts.upstreams)) {
    const at = `${base}/${pointerToken(name)}`;
    const cur: UpstreamCurators = {};
    let checked: UpstreamPolicyConfig = {};
    try {
      checked = checkFragment<UpstreamPolicyConfig>('upstream', { tools: entry?.tools, prompts: entry?.prompts, resources: entry?.resources }, at);
    } catch (err) {
      issues.push(...(((err as SwitchyardError).data?.errors as PolicyConfigIssue[] | undefined) ?? []));
    }
    const { tools, prompts, resources } = checked;
    if (tools) cur.tool = compileCurator(tools, `${at}/tools`, issues);
    if (prompts) cur.prompt = compileCurator(prompts, `${at}/prompts`, issues);
    if (resources) {
      cur.resource = compileCurator(resources, `${at}/resources`, issues, true);
      cur['resource-template'] = compileCurator(resources, `${at}/resources`, []);
    }
    if (Object.keys(cur).length > 0) out.set(name, cur);
  }
  if (issues.length > 0) throw configError(issues);
  return out;
}

/** `ctx` with the invoked component's name replaced by the upstream's own name. */
function toUpstreamContext(ctx: RequestContext, kind: ComponentKind, upstreamName: string, upstream: string): RequestContext {
  let params = ctx.params;
  if (ctx.method === 'tools/call' || ctx.method === 'prompts/get') params = { ...params, name: upstreamName };
  else if (ctx.method === 'completion/complete' && kind === 'prompt') params = { ...params, ref: { ...(params.ref as JsonObject), name: upstreamName } };
  return deriveContext(ctx, { params, component: { kind, name: upstreamName, upstream } });
}

/**
 * Creates the curation interceptor, configured per upstream (`upstreams.NAME.tools`,
 * `.prompts`, `.resources`): `include`/`exclude` globs hide, `rename` changes the name clients
 * see and call, `describe` replaces descriptions. Globs and map keys name components as the
 * upstream does.
 * - Lists are rewritten after `next`: hidden items removed, names and descriptions replaced.
 *   An unrenamed item whose name another item is renamed to is removed too (calls of that name
 *   reach the renamed one).
 * - Invocations are mapped back before `next`: a renamed component is called by its new name
 *   and reaches the upstream under its old one (`params` and `ctx.component` both carry the old
 *   name); a denial or unknown-name error coming back names the new one again. A hidden
 *   component, or a renamed one called by its old name, gets exactly the error an unknown name gets.
 * - Resources are not renamed (URIs travel inside results and notifications); a resource URI
 *   is checked against the `resources` globs, a resource template by its URI template.
 * - With `resources` curation, results that carry resources (`tools/call`, `prompts/get`,
 *   `resources/read`) are filtered after `next`: a hidden resource's embedded or `resource_link`
 *   block becomes a text note, a read's item naming a hidden resource is dropped
 *   ({@link withheldResources}).
 * Put it outermost of the policy interceptors, so that policy, rate limits and argument
 * validation see the upstream's own names.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (from the factory) listing every failing path;
 *   SWY_ERR_REQ_PARAMS or SWY_ERR_REQ_RESOURCE_NOT_FOUND (per request) for hidden names
 */
export function createCurationInterceptor(opts: CurationOptions): Interceptor {
  const curators = compileAll(opts);
  // What a result's resources are decided by: the resource curator of the call's upstream.
  const visible = (uri: string, ctx: RequestContext): boolean => curators.get(ctx.upstream ?? '')?.resource?.toUpstream(uri) !== undefined;
  return (next) => {
    const curate = curateWith(curators, next);
    return (ctx) => {
      if (!RESOURCE_CARRIERS.has(ctx.method) || curators.get(ctx.upstream ?? '')?.resource === undefined) return curate(ctx);
      return curate(ctx).then((res) => withheldResources(ctx, res, visible));
    };
  };
}

/** The curation of lists and invocations around `next` (see {@link createCurationInterceptor}). */
function curateWith(curators: Map<string, UpstreamCurators>, next: Dispatch): Dispatch {
  return async (ctx) => {
    const upstream = ctx.upstream ?? '';
    const cur = curators.get(upstream);
    if (!cur) return next(ctx);
    const shape = LIST_SHAPES[ctx.method];
    if (shape) {
      const c = cur[shape.kind];
      const res = await next(ctx);
      const items = res[shape.key];
      if (!c || !Array.isArray(items)) return res;
      const out: unknown[] = [];
      for (const item of items) {
        const name = item && typeof item === 'object' ? (item as JsonObject)[shape.nameKey] : undefined;
        if (typeof name !== 'string') continue;
        const shown = c.toClient(name);
        if (shown === undefined) continue;
        const description = c.description(name);
        out.push({ ...(item as JsonObject), [shape.nameKey]: shown, ...(description !== undefined ? { description } : {}) });
      }
      return { ...res, [shape.key]: out };
    }
    if (!INVOCATION_METHODS.has(ctx.method) && ctx.method !== 'resources/unsubscribe') return next(ctx);
    const component = invokedComponent(ctx);
    if (!component) return next(ctx);
    const c = cur[component.kind];
    if (!c) return next(ctx);
    const upstreamName = c.toUpstream(component.name);
    if (upstreamName === undefined) {
      // Unsubscribing from something hidden does no harm and must not fail.
      if (ctx.method === 'resources/unsubscribe') return next(ctx);
      throw unknownComponentError(component);
    }
    if (upstreamName === component.name) return next(ctx.component ? ctx : toUpstreamContext(ctx, component.kind, upstreamName, upstream));
    try {
      return await next(toUpstreamContext(ctx, component.kind, upstreamName, component.upstream || upstream));
    } catch (err) {
      throw withClientName(err, component.kind, upstreamName, component.name);
    }
  };
}

/** Options of {@link createCurationNotificationFilter}. */
export interface CurationNotificationFilterOptions extends CurationOptions {
  /** The upstream a notification came from (see the policy notification filter); undefined drops it. */
  upstream: string | ((n: CoreNotification, subscriber: SubscriberContext) => string | undefined);
}

/**
 * A notification filter that drops `notifications/resources/updated` for a resource the
 * upstream's `resources` curation hides; other notifications pass.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (from the factory)
 */
export function createCurationNotificationFilter(opts: CurationNotificationFilterOptions): NotificationFilter {
  const curators = compileAll(opts);
  return (subscriber, n) => {
    if (n.method !== 'notifications/resources/updated') return n;
    const upstream = typeof opts.upstream === 'string' ? opts.upstream : opts.upstream(n, subscriber);
    if (upstream === undefined || typeof n.params.uri !== 'string') return null;
    const c = curators.get(upstream)?.resource;
    return !c || c.toUpstream(n.params.uri) !== undefined ? n : null;
  };
}
