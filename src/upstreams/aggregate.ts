// The aggregate upstream: several upstreams served as one; tool and prompt names prefixed
// `NAME__tool`, resource URIs rewritten `switchyard://NAME/<uri>` so that every member's
// resources stay apart.

import { Deadline } from '../core/cancel.js';
import { drainThenCut } from '../core/drain.js';
import { PeerRpcError, SwitchyardError, withToolName } from '../core/errors.js';
import type { JsonObject } from '../core/message.js';
import { deriveContext } from '../core/interceptor.js';
import { noteFailedUpstream } from '../core/executor.js';
import type { CoreNotification, RequestContext, SubscriptionFilter } from '../core/request.js';
import { announceListChanges, prefixSplitsBack, type ServerDescription, type SessionRef, type Subscription, type Upstream } from '../core/upstream.js';
import { STATELESS_REVISION } from '../core/versions.js';
import type { Logger } from '../log/logger.js';

/** Pages read from each upstream for one aggregated list. */
const MAX_PAGES = 50;

/** The prefix of an aggregate resource URI: `switchyard://<member>/<the member's own URI>` (docs/config.md, Aggregate mount). */
export const AGGREGATE_URI_PREFIX = 'switchyard://';

/**
 * A member's error about its own URI `sent` as the client must see it: `data.uri` (where a member
 * names the missing resource, 2025-11-25 server/resources#error-handling) becomes the URI the
 * client asked for, `clientUri`; any other error is returned as it is.
 */
function clientUriOf(err: unknown, sent: string, clientUri: unknown): unknown {
  if (!(err instanceof PeerRpcError)) return err;
  const data = err.rpc.data as { uri?: unknown } | null | undefined;
  if (data === null || typeof data !== 'object' || data.uri !== sent) return err;
  return new PeerRpcError({ ...err.rpc, data: { ...data, uri: clientUri } });
}

/** The aggregate URI of member `member`'s resource (or URI template) `uri`. */
export function aggregateUri(member: string, uri: string): string {
  return `${AGGREGATE_URI_PREFIX}${member}/${uri}`;
}

/**
 * A prefixed tool or prompt name split at the first occurrence of `separator`: the member's name
 * and the member's own name; undefined when it does not occur after at least one character.
 * Member names for which this is the only split are those {@link prefixSplitsBack} accepts.
 */
export function splitPrefixed(prefixed: string, separator: string): { member: string; name: string } | undefined {
  const i = prefixed.indexOf(separator);
  return i > 0 ? { member: prefixed.slice(0, i), name: prefixed.slice(i + separator.length) } : undefined;
}

/** The member and its own URI that an aggregate URI names; undefined for any other URI. */
export function memberUri(uri: unknown): { member: string; uri: string } | undefined {
  if (typeof uri !== 'string' || !uri.startsWith(AGGREGATE_URI_PREFIX)) return undefined;
  const rest = uri.slice(AGGREGATE_URI_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  return { member: rest.slice(0, slash), uri: rest.slice(slash + 1) };
}

/** Rewrites the resource URIs a member's content items carry (`resource_link`, embedded `resource`) to aggregate URIs. */
function wrapContent(items: unknown, member: string): unknown {
  if (!Array.isArray(items)) return items;
  return items.map((c: JsonObject) => {
    if (c?.type === 'resource_link' && typeof c.uri === 'string') return { ...c, uri: aggregateUri(member, c.uri) };
    const r = c?.resource as JsonObject | undefined;
    if (c?.type === 'resource' && typeof r?.uri === 'string') return { ...c, resource: { ...r, uri: aggregateUri(member, r.uri) } };
    return c;
  });
}

/** The aggregate upstream: an Upstream whose members may come and go. */
export interface AggregateUpstream extends Upstream {
  /**
   * Takes in a change of membership (the `members` map changed) or of a member's health: the
   * description is recomputed, open subscriptions reach exactly the members that serve now, and
   * when the set of serving members changed, every subscriber that asked for list changes gets
   * `notifications/{tools,prompts,resources}/list_changed`.
   */
  refresh(): void;
  /**
   * Retires `member`, a member object a config reload removed or replaced (no longer in the
   * members map: new calls go to its successor, if any). Its calls made through this aggregate get
   * `graceMs` (ms) to finish; those still running then are aborted with `why` (the member's call
   * is cancelled, so its upstream is told) and the client request that made one answers with `why`,
   * as a call on the member's own mount is cut (docs/operations.md, Hot reload). Resolves once none
   * runs.
   */
  retireMember(member: Upstream, graceMs: number, why: SwitchyardError): Promise<void>;
}

/** Options of {@link createAggregateUpstream}. */
export interface AggregateOptions {
  /** True when member `name` serves now (default: every member always). Members that do not are left out of lists and fan-outs. */
  serving?: (name: string) => boolean;
  /** Where a member left out of a list for its failure is logged (warn). */
  log?: Pick<Logger, 'warn'>;
  /**
   * Member `name`'s own deadline (its `limits.requestTimeoutMs`) when it is shorter than the
   * aggregate's, undefined otherwise: each call to the member is bounded by it (docs/config.md, Aggregate mount).
   */
  memberDeadlineMs?: (name: string) => number | undefined;
}

/**
 * `err`, recorded as member `name`'s failure for the request's `request failed` line
 * (`Executor.failureFields`): the member calls run on copies of the request's context, whose
 * `upstream` the executor never sees. A fan-out names one member, the one whose error it throws.
 */
function failedIn(err: unknown, name: string): unknown {
  noteFailedUpstream(err, name);
  return err;
}

/**
 * The client request `ctx` (the executor's context, not a copy the aggregate derived) learns the
 * one member that serves it, as a single upstream's request does (`guardUpstream` sets `upstream`
 * and `component` on it): the access line and `request failed` name the member, and the metrics
 * label a tools/call or prompts/get with the name the client called, once that member listed it
 * (before, every aggregate call counted as `_other`; docs/operations.md). The member call runs on
 * a derived context, whose own `upstream` and `component` the member's guard sets.
 * @param kind what `name` is: a tool, a prompt or a resource (its URI as the member knows it)
 */
function servedBy(ctx: RequestContext, member: string, kind: 'tool' | 'prompt' | 'resource', name: string): void {
  if (ctx.upstream !== undefined) return;
  ctx.upstream = member;
  ctx.component = { kind, name, upstream: member };
}

/** True for a failure that is the upstream's: its own error answer, or a catalogue error of fault `upstream`. */
function upstreamFault(err: unknown): boolean {
  return err instanceof PeerRpcError || (err instanceof SwitchyardError && err.entry.fault === 'upstream');
}

/**
 * Runs `work`, a fan-out over members. When the request is aborted meanwhile (its deadline, the
 * client's cancellation, shutdown), the member `pending()` names (the first still being asked,
 * in config order) is noted as the one the request failed in ({@link noteFailedUpstream}), on the
 * abort's own reason: the executor answers with that reason at once, before the members'
 * failures come back, so a note made when they do would come too late for `request failed`.
 */
async function whileNaming<T>(ctx: RequestContext, pending: () => string | undefined, work: () => Promise<T>): Promise<T> {
  const onAbort = () => {
    const name = pending();
    if (name !== undefined) noteFailedUpstream(ctx.signal.reason, name);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await work();
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Every page of one member's list (at most {@link MAX_PAGES}), its items mapped by `each`.
 * @throws whatever the member's request throws (PeerRpcError, SwitchyardError)
 */
async function listOf(
  ctx: RequestContext,
  call: (ctx: RequestContext) => Promise<JsonObject>,
  method: string,
  key: string,
  each: (item: JsonObject) => JsonObject,
): Promise<JsonObject[]> {
  const own: JsonObject[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await call(deriveContext(ctx, { method, params: cursor ? { cursor } : {} }));
    for (const item of (r[key] as JsonObject[] | undefined) ?? []) own.push(each(item));
    cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
    if (!cursor) break;
  }
  return own;
}

/** The calls running on one member object through the aggregate, and who waits for the last to end. */
interface MemberCalls {
  calls: Set<Deadline<JsonObject>>;
  /**
   * Called when the last call ended: the settle signal of each {@link AggregateUpstream.retireMember}
   * drain waiting on this member, removed when that drain stops waiting. Bounded by the
   * retirements under way (one each): a reload and a gateway close may retire one member at once.
   */
  idle: Set<() => void>;
}

/** One open aggregate subscription: its filter, its sink, and the member subscriptions behind it. */
interface Fan {
  filter: SubscriptionFilter;
  sink: (n: CoreNotification) => void;
  open: (up: Upstream, f: SubscriptionFilter, s: (n: CoreNotification) => void) => Subscription;
  /** Each member's subscription, with the member object it was made on (a restarted member is a new object). */
  byMember: Map<string, { up: Upstream; sub: Subscription }>;
}

/**
 * Creates an upstream that serves `members` on one path: tool and prompt names are prefixed
 * with the member's name and `separator` (`github__search`); resource URIs and URI templates
 * become `switchyard://<member>/<uri>`, so that the same URI from two members is two resources,
 * and a read, a completion or a subscription goes to the member the URI names. A URI without the
 * prefix (one a client got elsewhere) goes to the first member that serves it. List-changed
 * notifications from any member are forwarded; lists are served whole (no pagination across
 * members). Only members that serve now (`opts.serving`) are listed and subscribed to; when that
 * set changes ({@link AggregateUpstream.refresh}), subscribers are told their lists changed.
 * @param members upstreams by name (a live map: the gateway adds and removes members on reload, then calls `refresh`).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID from `start()` when a member's prefixed names would not split back to it ({@link prefixSplitsBack})
 */
export function createAggregateUpstream(
  members: ReadonlyMap<string, Upstream>,
  separator: string,
  version: string,
  opts: AggregateOptions = {},
): AggregateUpstream {
  const serving = opts.serving ?? (() => true);
  /** The members that serve now, in map order. */
  const live = (): Array<[string, Upstream]> => [...members].filter(([name]) => serving(name));
  const split = (prefixed: unknown): [string, Upstream, string] => {
    const s = String(prefixed);
    const parts = splitPrefixed(s, separator);
    const up = parts && members.get(parts.member);
    if (!parts || !up) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `unknown name ${s} (expected <upstream>${separator}<name>)` });
    return [parts.member, up, parts.name];
  };
  /** The member an aggregate URI names, and its own URI. @throws SwitchyardError SWY_ERR_REQ_RESOURCE_NOT_FOUND for an unknown member */
  const byUri = (uri: unknown): { name: string; up: Upstream; uri: string } | undefined => {
    const m = memberUri(uri);
    if (!m) return undefined;
    const up = members.get(m.member);
    if (!up) throw new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: String(uri), data: { uri } });
    return { name: m.member, up, uri: m.uri };
  };
  const capable = (up: Upstream, cap: string) => up.describe().capabilities[cap] !== undefined;
  /**
   * The member calls running, by the member object each was made on: a member a reload replaced
   * is another object than its successor, and its calls are cut when it is retired
   * ({@link AggregateUpstream.retireMember}), as the reload cuts those of the mounts it retires.
   */
  const running = new Map<Upstream, MemberCalls>();
  /**
   * Member `name`'s request `ctx` on `up`, on a signal of its own that follows the client
   * request's: it fails with the first of the member's failure, the request's abort reason, a
   * retirement's cut, or, where the member's own deadline is shorter than the aggregate's,
   * SWY_ERR_REQ_DEADLINE naming it, as the member's own mount answers it. Past that deadline the
   * member's call is cancelled (the member is told to stop; a cancellation, so that the member's
   * breaker does not count it, as it did not when the bound was undici's headersTimeout, which
   * an answer on an SSE stream never met).
   */
  const ask = (name: string, up: Upstream, ctx: RequestContext): Promise<JsonObject> => {
    const d = new Deadline<JsonObject>();
    d.cancelOnExpiry = true;
    const outcome = d.outcome();
    d.arm(opts.memberDeadlineMs?.(name), ctx.signal);
    let entry = running.get(up);
    if (!entry) running.set(up, (entry = { calls: new Set(), idle: new Set() }));
    entry.calls.add(d);
    const ended = entry;
    try {
      up.request(deriveContext(ctx, {}, d.signal)).then(d.resolve, d.reject);
    } catch (err) {
      d.reject(err);
    }
    return outcome.finally(() => {
      d.disarm();
      ended.calls.delete(d);
      if (ended.calls.size > 0) return;
      if (running.get(up) === ended) running.delete(up);
      for (const fn of [...ended.idle]) fn();
    });
  };

  /**
   * Reads every page of a list from every member that has `cap`, the members at once (a slow
   * member no longer holds back the others' turns: the list takes as long as its slowest member,
   * not the sum of all), their items in config order. A member whose list fails as the upstream's
   * fault (its error answer, an answer that is not a list, a member gone down or too slow) is left
   * out, as a member that does not serve is, and logged; the list fails only when every member's
   * did (with the last member's error, in config order), or when the request was cancelled or a
   * member's failure is not its own (the first such, in config order). Either way the failure
   * names the member whose error it is ({@link failedIn}).
   */
  const gather = async (
    ctx: RequestContext,
    method: string,
    cap: string,
    key: string,
    each: (item: JsonObject, name: string) => JsonObject,
  ): Promise<JsonObject> => {
    const asked = live().filter(([, up]) => capable(up, cap));
    const waiting = new Set(asked.map(([name]) => name));
    const lists = await whileNaming(
      ctx,
      () => asked.find(([name]) => waiting.has(name))?.[0],
      () =>
        Promise.allSettled(
          asked.map(([name, up]) =>
            listOf(
              ctx,
              (c) => ask(name, up, c),
              method,
              key,
              (item) => each(item, name),
            ).finally(() => waiting.delete(name)),
          ),
        ),
    );
    // Cancelled or past its deadline: the abort's reason, already noted with the member still being asked.
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const out: JsonObject[] = [];
    let listed = false;
    let failed: { reason: unknown; name: string } | undefined;
    for (let i = 0; i < asked.length; i++) {
      const name = asked[i][0];
      const r = lists[i];
      if (r.status === 'rejected') {
        if (!upstreamFault(r.reason)) throw failedIn(r.reason, name);
        opts.log?.warn({ err: r.reason, upstream: name, method }, 'aggregate: member left out of the list');
        failed = { reason: r.reason, name };
        continue;
      }
      listed = true;
      // One at a time: `push(...own)` passes every item as an argument, past the call stack for a long list.
      for (const item of r.value) out.push(item);
    }
    if (!listed && failed !== undefined) throw failedIn(failed.reason, failed.name);
    return { [key]: out, ttlMs: 0, cacheScope: 'private' };
  };

  /** Tries `fn` on each member until one does not fail; when none answers, fails with the last member's error, naming it. */
  const firstThatHas = async (ctx: RequestContext, cap: string, fn: (up: Upstream, name: string) => Promise<JsonObject>): Promise<JsonObject> => {
    let last: { reason: unknown; name: string } | undefined;
    let asking: string | undefined;
    return whileNaming(
      ctx,
      () => asking,
      async () => {
        for (const [name, up] of live()) {
          if (!capable(up, cap)) continue;
          asking = name;
          try {
            return await fn(up, name);
          } catch (err) {
            last = { reason: err, name };
            if (ctx.signal.aborted) throw failedIn(err, name);
          }
        }
        asking = undefined;
        if (last !== undefined) throw failedIn(last.reason, last.name);
        throw new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: String(ctx.params.uri), data: { uri: ctx.params.uri } });
      },
    );
  };

  /** A read's result with its contents' URIs in aggregate form. */
  const wrapRead = (r: JsonObject, name: string): JsonObject => {
    if (!Array.isArray(r.contents)) return r;
    return { ...r, contents: (r.contents as JsonObject[]).map((c) => (typeof c?.uri === 'string' ? { ...c, uri: aggregateUri(name, c.uri) } : c)) };
  };

  /** Member `name`'s share of a fan-out: the list switches and the URIs that name it (in its own form) plus any URI without the prefix. */
  const attach = (fan: Fan, name: string, up: Upstream): void => {
    const own: string[] = [];
    for (const u of fan.filter.resourceSubscriptions ?? []) {
      const m = memberUri(u);
      if (!m) own.push(u);
      else if (m.member === name) own.push(m.uri);
    }
    const f: SubscriptionFilter = { ...fan.filter, ...(fan.filter.resourceSubscriptions ? { resourceSubscriptions: own } : {}) };
    const sub = fan.open(up, f, (n) =>
      fan.sink(
        n.method === 'notifications/resources/updated' && typeof n.params.uri === 'string'
          ? { ...n, params: { ...n.params, uri: aggregateUri(name, n.params.uri) } }
          : n,
      ),
    );
    fan.byMember.set(name, { up, sub });
  };
  const fans = new Set<Fan>();

  /** Subscribes on every serving member; updates come back with aggregate URIs. Members that start serving later join it (refresh). */
  const fanOut = (
    filter: SubscriptionFilter,
    sink: (n: CoreNotification) => void,
    open: (up: Upstream, f: SubscriptionFilter, s: (n: CoreNotification) => void) => Subscription,
  ): Subscription => {
    const fan: Fan = { filter, sink, open, byMember: new Map() };
    let at: string | undefined;
    try {
      for (const [name, up] of live()) {
        at = name;
        attach(fan, name, up);
      }
    } catch (err) {
      for (const m of fan.byMember.values()) m.sub.close();
      throw at === undefined ? err : failedIn(err, at);
    }
    fans.add(fan);
    return {
      close: () => {
        fans.delete(fan);
        for (const m of fan.byMember.values()) m.sub.close();
        fan.byMember.clear();
      },
    };
  };

  let desc: ServerDescription | undefined;
  /** Capabilities of every member that served at least once (a member that goes down keeps its share: clients keep what initialize told them). */
  const seenCaps = new Map<string, JsonObject>();
  /** The serving members at the last refresh (objects: a member restarted by a reload is a new one). */
  let servingNow: Array<[string, Upstream]> = [];
  const describeNow = (): ServerDescription => {
    for (const [name, up] of live()) {
      try {
        seenCaps.set(name, up.describe().capabilities);
      } catch {
        // not described yet: it serves no capabilities
      }
    }
    const caps: JsonObject = {};
    for (const [name, c] of seenCaps) {
      if (!members.has(name)) continue;
      for (const [k, v] of Object.entries(c)) {
        if (k === 'experimental' || k === 'extensions' || k === 'tasks') continue;
        caps[k] = { ...(caps[k] as JsonObject | undefined), ...(v as JsonObject) };
      }
    }
    // The aggregate announces its own list changes as members come and go.
    for (const k of ['tools', 'prompts', 'resources']) if (k in caps || k === 'tools') caps[k] = { ...(caps[k] as JsonObject | undefined), listChanged: true };
    return {
      serverInfo: { name: 'switchyard-aggregate', version },
      capabilities: caps,
      instructions: `Tools and prompts of ${[...members.keys()].join(', ')}, named <upstream>${separator}<name>; resources named ${AGGREGATE_URI_PREFIX}<upstream>/<uri>.`,
      upstreamRevision: STATELESS_REVISION,
    };
  };
  return {
    name: 'aggregate',
    async start() {
      for (const name of members.keys()) {
        if (!prefixSplitsBack(name, separator))
          throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
            detail: `upstream name ${name} contains or ends in part of the aggregate separator ${separator}, so its prefixed names would be ambiguous`,
          });
      }
      desc = describeNow();
      servingNow = live();
    },
    refresh() {
      if (!desc) return;
      desc = describeNow();
      const now = live();
      for (const fan of fans) {
        for (const [name, m] of [...fan.byMember]) {
          if (now.some(([n, up]) => n === name && up === m.up)) continue;
          m.sub.close();
          fan.byMember.delete(name);
        }
        for (const [name, up] of now) {
          if (fan.byMember.has(name)) continue;
          try {
            attach(fan, name, up);
          } catch {
            // the member refused (it went down again): the next refresh tries again
          }
        }
      }
      // The members that came or went, and the lists they serve (a member that never served has none).
      const moved = [...now.filter(([, up]) => !servingNow.some(([, u]) => u === up)), ...servingNow.filter(([, up]) => !now.some(([, u]) => u === up))];
      servingNow = now;
      if (moved.length === 0) return;
      const kinds = new Set(moved.flatMap(([name]) => Object.keys(seenCaps.get(name) ?? {})));
      announceListChanges(fans, (kind) => kinds.has(kind));
    },
    describe() {
      if (!desc) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      return desc;
    },
    async request(client) {
      // One client request, however many member calls it makes: they share one record of the
      // rate-limit buckets it paid, so that each bucket takes one token (docs/policy.md, Rate limits).
      const ctx = client.charged !== undefined ? client : deriveContext(client, { charged: new Set() });
      const p = ctx.params;
      switch (ctx.method) {
        case 'tools/list':
          return gather(ctx, 'tools/list', 'tools', 'tools', (t, name) => ({ ...t, name: `${name}${separator}${String(t.name)}` }));
        case 'prompts/list':
          return gather(ctx, 'prompts/list', 'prompts', 'prompts', (t, name) => ({ ...t, name: `${name}${separator}${String(t.name)}` }));
        case 'resources/list':
          return gather(ctx, 'resources/list', 'resources', 'resources', (r, name) =>
            typeof r.uri === 'string' ? { ...r, uri: aggregateUri(name, r.uri) } : r,
          );
        case 'resources/templates/list':
          return gather(ctx, 'resources/templates/list', 'resources', 'resourceTemplates', (r, name) =>
            typeof r.uriTemplate === 'string' ? { ...r, uriTemplate: aggregateUri(name, r.uriTemplate) } : r,
          );
        case 'tools/call':
        case 'prompts/get': {
          const [name, up, inner] = split(p.name);
          servedBy(client, name, ctx.method === 'tools/call' ? 'tool' : 'prompt', inner);
          let r: JsonObject;
          try {
            r = await ask(name, up, deriveContext(ctx, { params: { ...p, name: inner } }));
          } catch (err) {
            // An argument refusal names the tool as the client called it (docs/policy.md); the
            // request failed line names the member from the client request (`servedBy`).
            throw ctx.method === 'tools/call' ? withToolName(err, inner, String(p.name)) : err;
          }
          if (ctx.method === 'tools/call') return Array.isArray(r.content) ? { ...r, content: wrapContent(r.content, name) } : r;
          if (!Array.isArray(r.messages)) return r;
          return { ...r, messages: (r.messages as JsonObject[]).map((m) => ({ ...m, content: (wrapContent([m.content], name) as unknown[])[0] })) };
        }
        case 'resources/read': {
          const named = byUri(p.uri);
          if (!named) return firstThatHas(ctx, 'resources', (up, name) => ask(name, up, ctx));
          servedBy(client, named.name, 'resource', named.uri);
          try {
            return wrapRead(await ask(named.name, named.up, deriveContext(ctx, { params: { ...p, uri: named.uri } })), named.name);
          } catch (err) {
            throw clientUriOf(err, named.uri, p.uri);
          }
        }
        case 'resources/subscribe': {
          // A decision only (guardUpstream ends it in each member's chain): the member the URI
          // names decides on its own URI; a URI without the prefix is subscribed on every member
          // (fanOut), so every member that serves resources decides it.
          const named = byUri(p.uri);
          if (named) {
            try {
              return await named.up.request(deriveContext(ctx, { params: { ...p, uri: named.uri } }));
            } catch (err) {
              throw failedIn(clientUriOf(err, named.uri, p.uri), named.name);
            }
          }
          // Stops at the first member that fails, and names it.
          for (const [name, up] of live()) {
            if (!capable(up, 'resources')) continue;
            try {
              await up.request(ctx);
            } catch (err) {
              throw failedIn(err, name);
            }
          }
          return {};
        }
        case 'completion/complete': {
          const ref = (p.ref ?? {}) as JsonObject;
          if (ref.type === 'ref/prompt') {
            const [name, up, inner] = split(ref.name);
            try {
              return await ask(name, up, deriveContext(ctx, { params: { ...p, ref: { ...ref, name: inner } } }));
            } catch (err) {
              throw failedIn(err, name);
            }
          }
          const named = ref.type === 'ref/resource' ? byUri(ref.uri) : undefined;
          if (named) {
            try {
              return await ask(named.name, named.up, deriveContext(ctx, { params: { ...p, ref: { ...ref, uri: named.uri } } }));
            } catch (err) {
              throw failedIn(err, named.name);
            }
          }
          return firstThatHas(ctx, 'completions', (up, name) => ask(name, up, ctx));
        }
        default:
          throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: ctx.method });
      }
    },
    subscribe(filter, sink): Subscription {
      return fanOut(filter, sink, (up, f, s) => up.subscribe(f, s));
    },
    subscribeSession(ref: SessionRef, filter, sink): Subscription {
      return fanOut(filter, sink, (up, f, s) => (up.subscribeSession ? up.subscribeSession(ref, f, s) : up.subscribe(f, s)));
    },
    async retireMember(member, graceMs, why) {
      const entry = running.get(member);
      if (!entry) return;
      await drainThenCut({
        idle: () => entry.calls.size === 0,
        // Every waiter is told: a second retirement of the member while this one waits no longer
        // replaces this one's signal (which then waited out its whole grace).
        onSettle: (fn) => {
          entry.idle.add(fn);
          return () => void entry.idle.delete(fn);
        },
        graceMs,
        cut: () => {
          const calls = [...entry.calls];
          for (const d of calls) d.abort(why);
          return calls.length;
        },
      });
    },
    release(sessionKey) {
      for (const up of members.values()) up.release?.(sessionKey);
    },
    forwardNotification(sessionKey, n) {
      for (const up of members.values()) up.forwardNotification?.(sessionKey, n);
    },
    async close() {
      // Members are owned (and closed) by the gateway.
    },
  };
}
