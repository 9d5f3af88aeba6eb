// The aggregate upstream: several upstreams served as one, names prefixed `NAME__tool`.

import { SwitchyardError } from '../core/errors.js';
import type { JsonObject } from '../core/message.js';
import type { RequestContext } from '../core/request.js';
import type { ServerDescription, Subscription, Upstream } from '../core/upstream.js';
import { MODERN_REVISION } from '../core/versions.js';

/** Pages read from each upstream for one aggregated list. */
const MAX_PAGES = 50;
/** Resource URIs remembered for routing reads back to their upstream. */
const MAX_URIS = 100_000;

/**
 * Creates an upstream that serves `members` on one path: tool and prompt names are prefixed
 * with the member's name and `separator` (`github__search`), resource URIs are routed back to
 * the member that listed them, list-changed notifications from any member are forwarded.
 * Lists are served whole (no pagination across members).
 * @param members upstreams by name, started.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID from `start()` when a member name contains the separator
 */
export function createAggregateUpstream(members: ReadonlyMap<string, Upstream>, separator: string, version: string): Upstream {
  const uriOwner = new Map<string, string>();
  const remember = (uri: unknown, name: string) => {
    if (typeof uri !== 'string') return;
    if (uriOwner.size >= MAX_URIS) uriOwner.delete(uriOwner.keys().next().value as string);
    uriOwner.set(uri, name);
  };
  const split = (prefixed: unknown): [string, Upstream, string] => {
    const s = String(prefixed);
    const i = s.indexOf(separator);
    const name = i > 0 ? s.slice(0, i) : '';
    const up = members.get(name);
    if (!up) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `unknown name ${s} (expected <upstream>${separator}<name>)` });
    return [name, up, s.slice(i + separator.length)];
  };
  const capable = (up: Upstream, cap: string) => up.describe().capabilities[cap] !== undefined;

  /** Reads every page of a list from every member that has `cap`. */
  const gather = async (
    ctx: RequestContext,
    method: string,
    cap: string,
    key: string,
    each: (item: JsonObject, name: string) => JsonObject,
  ): Promise<JsonObject> => {
    const out: JsonObject[] = [];
    for (const [name, up] of members) {
      if (!capable(up, cap)) continue;
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await up.request({ ...ctx, method, params: cursor ? { cursor } : {} });
        for (const item of (r[key] as JsonObject[]) ?? []) out.push(each(item, name));
        cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
        if (!cursor) break;
      }
    }
    return { [key]: out, ttlMs: 0, cacheScope: 'private' };
  };

  /** Tries `fn` on each member until one does not answer "not found". */
  const firstThatHas = async (ctx: RequestContext, cap: string, fn: (up: Upstream, name: string) => Promise<JsonObject>): Promise<JsonObject> => {
    let last: unknown;
    for (const [name, up] of members) {
      if (!capable(up, cap)) continue;
      try {
        return await fn(up, name);
      } catch (err) {
        last = err;
        if (ctx.signal.aborted) throw err;
      }
    }
    throw last ?? new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: String(ctx.params.uri), data: { uri: ctx.params.uri } });
  };

  let desc: ServerDescription | undefined;
  return {
    name: 'aggregate',
    async start() {
      for (const name of members.keys()) {
        if (name.includes(separator))
          throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `upstream name ${name} contains the aggregate separator ${separator}` });
      }
      const caps: JsonObject = {};
      for (const up of members.values()) {
        for (const [k, v] of Object.entries(up.describe().capabilities)) {
          if (k === 'experimental' || k === 'extensions' || k === 'tasks') continue;
          caps[k] = { ...(caps[k] as JsonObject | undefined), ...(v as JsonObject) };
        }
      }
      desc = {
        serverInfo: { name: 'switchyard-aggregate', version },
        capabilities: caps,
        instructions: `Tools and prompts of ${[...members.keys()].join(', ')}, named <upstream>${separator}<name>.`,
        upstreamRevision: MODERN_REVISION,
      };
    },
    describe() {
      if (!desc) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      return desc;
    },
    async request(ctx) {
      const p = ctx.params;
      switch (ctx.method) {
        case 'tools/list':
          return gather(ctx, 'tools/list', 'tools', 'tools', (t, name) => ({ ...t, name: `${name}${separator}${String(t.name)}` }));
        case 'prompts/list':
          return gather(ctx, 'prompts/list', 'prompts', 'prompts', (t, name) => ({ ...t, name: `${name}${separator}${String(t.name)}` }));
        case 'resources/list':
          return gather(ctx, 'resources/list', 'resources', 'resources', (r, name) => {
            remember(r.uri, name);
            return r;
          });
        case 'resources/templates/list':
          return gather(ctx, 'resources/templates/list', 'resources', 'resourceTemplates', (r) => r);
        case 'tools/call':
        case 'prompts/get': {
          const [, up, inner] = split(p.name);
          return up.request({ ...ctx, params: { ...p, name: inner } });
        }
        case 'resources/read': {
          const owner = members.get(uriOwner.get(String(p.uri)) ?? '');
          if (owner) return owner.request(ctx);
          return firstThatHas(ctx, 'resources', async (up, name) => {
            const r = await up.request(ctx);
            remember(p.uri, name);
            return r;
          });
        }
        case 'completion/complete': {
          const ref = (p.ref ?? {}) as JsonObject;
          if (ref.type === 'ref/prompt') {
            const [, up, inner] = split(ref.name);
            return up.request({ ...ctx, params: { ...p, ref: { ...ref, name: inner } } });
          }
          return firstThatHas(ctx, 'completions', (up) => up.request(ctx));
        }
        default:
          throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: ctx.method });
      }
    },
    subscribe(filter, sink): Subscription {
      const subs = [...members.values()].map((up) => up.subscribe(filter, sink));
      return { close: () => subs.forEach((s) => s.close()) };
    },
    release(sessionKey) {
      for (const up of members.values()) up.release?.(sessionKey);
    },
    async close() {
      // Members are owned (and closed) by the gateway.
    },
  };
}
