// The gateway's live set of upstreams and mounts: built from one config, started (a failed
// upstream is marked down, not fatal), changed in place by a config reload, and stopped.

import { canonicalJson } from './core/canonical-json.js';
import { mcpAllowOf } from '../dialects/index.js';
import type { FrozenConfig, Mount, UpstreamConfig } from './config/load.js';
import type { HeldCalls } from './core/calls.js';
import type { UpstreamStateMessage } from './core/diagnostics.js';
import { operatorText, SwitchyardError } from './core/errors.js';
import type { Upstream, UpstreamCloseOptions } from './core/upstream.js';
import type { GatewayMount } from './gateway.js';
import type { Logger } from './log/logger.js';
import type { HttpMount, MountTable } from './transports/http.js';
import type { RouteKind } from './transports/front-door.js';
import { createAggregateUpstream, type AggregateUpstream } from './upstreams/aggregate.js';
import { superviseUpstream, type SupervisedUpstream } from './upstreams/supervisor.js';
import { publishState } from './upstreams/state.js';
import { serverOfUrl } from './core/url-text.js';

/** What the composition root hands the runtime: how upstreams and mounts are made. */
export interface RuntimeDeps {
  log: Logger;
  /** Loads what `create` needs for the upstreams of `config` (undici, for HTTP upstreams). */
  prepare(config: FrozenConfig): Promise<void>;
  /**
   * A fresh, unstarted upstream for a config entry, reporting its lifecycle to `onState` and its
   * lifecycle messages to `publish` (instead of the channels directly: see `entryOf`'s `muted`).
   * `owner` stands for the config entry's supervisor: every instance it creates holds calls for
   * it (`HeldCalls.scoped`), so that a reload that retires the entry cancels them.
   */
  create(u: UpstreamConfig, onState: (m: UpstreamStateMessage) => void, publish: (m: UpstreamStateMessage) => void, owner: object): Upstream;
  /** Wraps an upstream in the interceptor chain, named `name`. */
  guard(u: Upstream, name: string): Upstream;
  /** Builds the executor and dialects of mount `m` (the `index`th of `config`) over `upstream`. */
  mount(m: Mount, index: number, upstream: Upstream, config: FrozenConfig): GatewayMount;
  /**
   * Called, synchronously, at the moment a reload's config takes effect (the same turn as the
   * mount table switches to it), after `prepare(config)`: the policy keys of `config` replace the
   * running ones in place for every upstream (docs/policy.md, "Reloading").
   */
  commit?(config: FrozenConfig, report: ReloadReport): void;
  /**
   * Called when a reload discards `candidate`, the guarded new instance of upstream `name` whose
   * first attempt failed, and keeps `running` (the guarded instance that serves): what `guard`
   * registered for the candidate by name goes back to the running one, so that later commits
   * reach it (docs/operations.md, "Hot reload").
   */
  discard?(name: string, candidate: Upstream, running: Upstream): void;
  /**
   * The gateway's calls held for a 2026-07-28 client's retry: a shutdown's drain admits their
   * retries and waits for them within `shutdownGraceMs`, then cancels what is still held; a reload
   * cancels those held on an upstream it retires (docs/operations.md, "Held calls at shutdown and reload").
   */
  held?: HeldCalls;
  /** Switchyard's version, for the aggregate's serverInfo. */
  version: string;
  /** Jitter source for reconnect delays (tests; default `Math.random`). */
  random?: () => number;
}

/** One configured upstream: its config entry, its supervisor, and the supervisor behind the interceptor chain. */
interface Entry {
  readonly config: UpstreamConfig;
  readonly supervisor: SupervisedUpstream;
  readonly guarded: Upstream;
  /**
   * True while this instance's lifecycle messages are held off the channels: a reload's new
   * instance of a changed upstream, until the reload keeps the running one (this instance stops,
   * never heard) or replaces it (`republishState` then says what runs). Its messages would
   * otherwise tell the metrics and spans its state and labels under the name the running
   * instance serves as: an `up` gauge of 0 and the new URL's labels on the running one's calls
   * for as long as the new instance took to fail (up to upstreamStartTimeoutMs).
   */
  muted: boolean;
  /** What the calls its instances hold are marked with (`HeldCalls.scoped`; RuntimeDeps.create's `owner`). */
  readonly owner: object;
}

/** What a reload changed, by upstream name (the aggregate mount counts as `aggregate`). */
export interface ReloadReport {
  added: string[];
  removed: string[];
  /** Restarted: their mounts were rebuilt. */
  changed: string[];
  unchanged: string[];
  /**
   * Unchanged upstreams whose policy keys changed (their own `policy`, `rateLimits`, curation,
   * `validateArguments`, or the top-level `policy` or `rateLimits` they use): the new ones were
   * swapped into their running interceptor chain; nothing restarted, no session ended.
   */
  policy: string[];
  /** Top-level keys whose change takes effect only after a restart (they were left as they were). */
  needRestart: string[];
  /**
   * Changed upstreams whose new settings failed their first attempt while the running instance
   * served: the running one stays, with the settings that would restart it, sessions and streams
   * (its policy keys, `optional` and `description` are the reload's: `keptEntry`); the next reload
   * tries the change again. Not in `changed`; in `policy` when its policy changed.
   */
  kept: string[];
}

/** The live gateway state. Every getter returns what holds now. */
export interface Runtime {
  readonly config: FrozenConfig;
  /** Mounts in config order: upstreams, then the aggregate. */
  readonly mounts: readonly GatewayMount[];
  /** Supervised upstreams by config name. */
  readonly supervised: ReadonlyMap<string, SupervisedUpstream>;
  /** The upstream instances themselves (not supervised, not wrapped), by config name. */
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** The mount table of the standalone listener. */
  readonly table: MountTable;
  /**
   * Makes every upstream's first attempt (in parallel). One that fails is down, logged (`upstream
   * down`) and reconnecting from the moment it failed, without waiting for the others' attempts;
   * with `requireUpstreams`, a non-optional one that fails stops everything instead (nothing of
   * it logged or scheduled), and so the failed ones' reconnects wait until every non-optional one
   * has succeeded. With `hold`, the line `serving without an upstream that did not start` waits
   * for {@link Runtime.serve}: for a caller that may yet give the start up (a listener that
   * cannot bind; its close stops the reconnects), so that such a start says nothing of serving on
   * without them.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE naming the upstream (requireUpstreams), SWY_ERR_CONFIG_INVALID (aggregate)
   */
  start(opts?: { hold?: boolean }): Promise<void>;
  /**
   * After a `hold` start: logs `serving without an upstream that did not start` for each upstream
   * whose first attempt failed and that is still not up (its reconnects began when it failed).
   * Does nothing otherwise, or twice.
   */
  serve(): void;
  /**
   * Moves to `next`: added upstreams start and their mounts appear; removed ones leave the table,
   * drain within `shutdownGraceMs` and stop; changed ones are rebuilt (new mount, the old one
   * drained); unchanged upstreams, their mounts, sessions and streams are not touched, and a
   * change of policy keys alone (top-level or an upstream's) is applied in place (`commit`).
   */
  apply(next: FrozenConfig): Promise<ReloadReport>;
  /**
   * Stops admitting, lets in-flight work finish within `shutdownGraceMs`, closes dialects and
   * stops every upstream (`upstream`: how, e.g. a shorter stop of stdio children).
   */
  close(opts?: { upstream?: UpstreamCloseOptions }): Promise<void>;
}

/** The HTTP view of a mount. */
export function httpMountOf(m: GatewayMount): HttpMount {
  return {
    name: m.name,
    path: m.path,
    ssePath: m.ssePath,
    messagesPath: m.messagesPath,
    router: m.registry,
    mcpAllow: mcpAllowOf(m.registry.dialects.keys()),
    maxBodyBytes: m.limits.maxBodyBytes,
    limits: m.limits,
  };
}

/** Top-level keys a reload cannot change in place (the listener, the process-wide pieces). */
export const RESTART_KEYS = [
  'listen',
  'allowedOrigins',
  'allowedHosts',
  'cors',
  'logLevel',
  'requestStateKey',
  'strict',
  'cache',
  'admin',
  'accessLogLevel',
  'trustProxy',
  'publicBaseUrl',
  'listCache',
  // Replicas: the Redis client, the sealing keys and the replica id are made once, at start
  // (src/gateway.ts); a changed section used to be dropped without a word.
  'cluster',
] as const;
/**
 * An upstream entry's policy keys: a change of them alone restarts nothing, it is swapped into the
 * running interceptor chain (docs/policy.md, "Reloading"), as are the top-level `policy` and `rateLimits`.
 */
const POLICY_KEYS = ['policy', 'rateLimits', 'tools', 'prompts', 'resources', 'validateArguments'] as const;
/** Listener-wide limits (read once, when the listener starts). */
export const LISTENER_LIMITS = [
  'maxConnections',
  'headTimeoutMs',
  'bodyTimeoutMs',
  'shutdownGraceMs',
  'firstByteTimeoutMs',
  'maxConnectionsPerAddress',
  'streamReserveDivisor',
  'lingerTimeMs',
  'lingerIdleMs',
  'lingerMaxBytes',
] as const;

/**
 * A failed start's cause without the catalogue's words before it (`Upstream unavailable: `), for a
 * list of several; with `operator`, as the operator reads it ({@link operatorText}: a child's last
 * stderr line included), else as a client may read it.
 */
function causeText(err: unknown, operator: boolean): string {
  if (!(err instanceof SwitchyardError)) return err instanceof Error ? err.message : String(err);
  const text = operator ? operatorText(err) : err.message;
  const head = `${err.entry.message}: `;
  return text.startsWith(head) ? text.slice(head.length) : text;
}

/**
 * Two configs (or parts) equal by content: a merged `limits` takes its key order from what the
 * file happened to set (the schema's defaults come after), and a top-level limit added beside an
 * upstream's own setting of it reordered that upstream's limits and restarted it, its sessions
 * ended, with nothing of it changed (found by h-docs).
 */
const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** Limits without the listener-wide keys (those never restart a mount). */
function mountLimits(l: Readonly<Record<string, number>>): Record<string, number> {
  const out = { ...l };
  for (const k of LISTENER_LIMITS) delete out[k];
  return out;
}

/**
 * What restarts an upstream when it changes: its whole entry, listener-wide limits aside, and
 * two keys that change nothing the upstream or its mount holds: `description` (text for people,
 * never interpreted) and `optional` (read by readiness from the current config at each probe,
 * src/ops.ts, and by a start). Editing either must not end sessions. Nor does `sseSetting`, the
 * words era 2024-11-05 was written in (`type: sse`, `transport: sse`, `era: 2024-11-05`), kept
 * only for advice: the same upstream written two equivalent ways is the same upstream.
 */
function upstreamKey(u: UpstreamConfig): string {
  const key: Record<string, unknown> = { ...u, description: undefined, optional: undefined, sseSetting: undefined, limits: mountLimits(u.limits) };
  for (const k of POLICY_KEYS) key[k] = undefined;
  return canonicalJson(key);
}

/**
 * A kept upstream's entry (a reload whose new settings for it did not start): what would restart
 * it (its connection, path, dialects, limits: {@link upstreamKey}) as it runs, `was`; what applies
 * in place to an unchanged upstream (its policy keys, `description`, `optional`) as the reload
 * asks, `wanted`. So a reload that changes both applies the policy half (a tool it hides is hidden).
 */
function keptEntry(was: UpstreamConfig, wanted: UpstreamConfig): UpstreamConfig {
  const out: Record<string, unknown> = { ...was };
  for (const k of [...POLICY_KEYS, 'description', 'optional'] as const) {
    if (wanted[k] === undefined) delete out[k];
    else out[k] = wanted[k];
  }
  return Object.freeze(out) as unknown as UpstreamConfig;
}

/** What decides the calls to upstream `name` under `c`: its policy keys, with the top-level `policy` and `rateLimits` where it has none. */
function policyKey(c: FrozenConfig, name: string): string {
  const u = c.upstreams[name];
  return canonicalJson([u.policy ?? c.policy, u.rateLimits ?? c.rateLimits, u.tools, u.prompts, u.resources, u.validateArguments]);
}

/** The aggregate mount's own settings (what rebuilds it when changed; membership alone does not). */
function aggregateKey(c: FrozenConfig): string | undefined {
  if (!c.aggregate) return undefined;
  return canonicalJson([c.aggregate.path, c.aggregate.separator, c.dialects, mountLimits(c.limits)]);
}

/**
 * `next` with what a reload cannot change taken from `running`: the restart keys and the
 * listener-wide limits keep their running values, so that the state stays one config.
 */
function reloadable(running: FrozenConfig, next: FrozenConfig): FrozenConfig {
  const limits = { ...next.limits };
  for (const k of LISTENER_LIMITS) limits[k] = running.limits[k];
  const kept: Record<string, unknown> = {};
  for (const k of RESTART_KEYS) kept[k] = running[k];
  return Object.freeze({ ...next, ...kept, auth: authWithStdio(next.auth, running.auth?.stdio), limits: Object.freeze(limits) });
}

/**
 * The top-level `auth` a reload applies: `auth` (its HTTP part: `bearer`, `apiKeys`, `none`, read
 * by the front door a reload builds again) with `stdio` as it runs: `--serve-stdio` reads the
 * local client's identity once, at start (src/cli/serve-stdio.ts).
 */
function authWithStdio(auth: FrozenConfig['auth'], stdio: NonNullable<FrozenConfig['auth']>['stdio']): FrozenConfig['auth'] {
  const out: Record<string, unknown> = { ...auth };
  delete out.stdio;
  if (stdio !== undefined) out.stdio = stdio;
  return Object.keys(out).length > 0 ? Object.freeze(out) : undefined;
}

/** A read-only map over the entries, showing one part of each (what holds now). */
class LiveMap<V> implements ReadonlyMap<string, V> {
  constructor(
    private readonly source: Map<string, Entry>,
    private readonly pick: (e: Entry) => V,
  ) {}
  get size(): number {
    return this.source.size;
  }
  get(k: string): V | undefined {
    const e = this.source.get(k);
    return e ? this.pick(e) : undefined;
  }
  has(k: string): boolean {
    return this.source.has(k);
  }
  *entries(): MapIterator<[string, V]> {
    for (const [k, e] of this.source) yield [k, this.pick(e)];
  }
  keys(): MapIterator<string> {
    return this.source.keys();
  }
  *values(): MapIterator<V> {
    for (const e of this.source.values()) yield this.pick(e);
  }
  forEach(fn: (v: V, k: string, m: ReadonlyMap<string, V>) => void): void {
    for (const [k, e] of this.source) fn(this.pick(e), k, this);
  }
  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}

/**
 * Builds the runtime of `config` (nothing starts yet): a supervised upstream per entry (HTTP
 * upstreams with a circuit breaker), each behind the interceptor chain, one mount per upstream and
 * the aggregate mount, whose members are the serving upstreams it names.
 */
export async function createRuntime(initial: FrozenConfig, deps: RuntimeDeps): Promise<Runtime> {
  const { log } = deps;
  // Loaded here, not at import: the loader brings ajv, which costs start-up time.
  const { listMounts } = await import('./config/load.js');
  let config = initial;
  const entries = new Map<string, Entry>();
  let mounts: GatewayMount[] = [];
  let closing = false;
  /** The aggregate's members: guarded upstreams by name (live; the aggregate reads it per call). */
  const members = new Map<string, Upstream>();
  let aggregate: AggregateUpstream | undefined;
  let routes = new Map<string, { mount: HttpMount; route: RouteKind }>();

  const serving = (name: string) => entries.get(name)?.supervisor.state === 'up';
  /** A member's own deadline where it is shorter than the aggregate mount's (the top-level one). */
  const memberDeadlineMs = (name: string): number | undefined => {
    const own = entries.get(name)?.config.limits.requestTimeoutMs;
    return own !== undefined && own < config.limits.requestTimeoutMs ? own : undefined;
  };
  const refreshAggregate = () => {
    if (closing) return;
    try {
      aggregate?.refresh();
    } catch (err) {
      log.error({ err }, 'aggregate refresh failed');
    }
  };

  /**
   * Publishes the running upstream of `e` once more on the lifecycle channels (its state, transport,
   * revision and, for an HTTP upstream, the address of its URL), for the observers that learn an
   * upstream's labels by its name from those messages (metrics, tracing).
   */
  const republishState = (e: Entry): void => {
    const s = e.supervisor;
    const state = s.state === 'up' ? 'ready' : s.state === 'starting' ? 'spawn' : 'down';
    const server = e.config.transport === 'http' ? serverOfUrl(e.config.url) : undefined;
    publishState({
      upstream: e.config.name,
      state,
      transport: s.transport,
      ...(s.revision !== undefined ? { revision: s.revision } : {}),
      ...(server !== undefined ? { serverAddress: server.address, serverPort: server.port } : {}),
    });
  };

  /** A supervised instance of `u`; `muted` holds its lifecycle messages off the channels (Entry.muted). */
  const entryOf = (u: UpstreamConfig, muted = false): Entry => {
    const publish = (m: UpstreamStateMessage): void => {
      if (!entry.muted) publishState(m);
    };
    // Its instances' held calls name it (not the supervisor, which is made after its first instance).
    const owner = {};
    const supervisor = superviseUpstream({
      name: u.name,
      transport: u.transport,
      publish,
      create: (onState) => deps.create(u, onState, publish, owner),
      limits: u.limits,
      log,
      breaker: u.transport === 'http',
      check: u.transport === 'http' ? (up) => (up as Upstream & { check(): Promise<void> }).check() : undefined,
      random: deps.random,
    });
    supervisor.onChange(refreshAggregate);
    const entry: Entry = { config: u, supervisor, guarded: deps.guard(supervisor, u.name), muted, owner };
    return entry;
  };

  const setMembers = (c: FrozenConfig) => {
    members.clear();
    for (const n of c.aggregate?.upstreams ?? []) {
      const e = entries.get(n);
      if (e) members.set(n, e.guarded);
    }
  };

  // The aggregate mounts built (an upstream may be called `aggregate` too, so the name does not tell).
  const aggregateMounts = new WeakSet<GatewayMount>();
  const buildMounts = (c: FrozenConfig, keep: (m: Mount) => GatewayMount | undefined): GatewayMount[] =>
    listMounts(c).map((m, i) => {
      const kept = keep(m);
      if (kept) return kept;
      if (m.upstream !== undefined) return deps.mount(m, i, entries.get(m.upstream)!.guarded, c);
      aggregate = createAggregateUpstream(members, c.aggregate?.separator ?? '__', deps.version, { serving, log, memberDeadlineMs });
      const built = deps.mount(m, i, aggregate, c);
      aggregateMounts.add(built);
      return built;
    });

  const rebuildTable = () => {
    const next = new Map<string, { mount: HttpMount; route: RouteKind }>();
    for (const gm of mounts) {
      const hm = httpMountOf(gm);
      next.set(hm.path, { mount: hm, route: 'mcp' });
      if (gm.registry.httpSse) {
        next.set(hm.ssePath, { mount: hm, route: 'sse' });
        next.set(hm.messagesPath, { mount: hm, route: 'messages' });
      }
    }
    routes = next;
  };

  /**
   * Drains and stops old mounts and upstreams (reload: removed and changed ones). `oldMembers`:
   * the upstreams the aggregate mount served before the reload, named as such in the cut.
   * `keptAggregate`: the aggregate upstream when the reload kept its mount, whose calls on the old
   * members are cut after the grace as those of a retired mount are.
   */
  const retire = async (
    oldMounts: readonly GatewayMount[],
    oldEntries: readonly Entry[],
    oldMembers: ReadonlySet<string>,
    keptAggregate: AggregateUpstream | undefined,
  ) => {
    const grace = config.limits.shutdownGraceMs;
    // The gateway goes on serving: a call cut after the grace is told its mount left with the
    // reload, not that the server shuts down (SWY_ERR_ADMISSION_SHUTTING_DOWN says "retry on
    // another instance"; found by h-trial6). The aggregate mount and its members are named for
    // what they are: `aggregate` is no mount's config name, and a member's held call names the
    // mount it came through (its own, or the aggregate: HeldCall.mount).
    const cut = (what: string) =>
      new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${what} was removed or replaced by a config reload; request aborted` });
    const mountCut = (m: GatewayMount) => cut(aggregateMounts.has(m) ? 'the aggregate mount' : `mount ${m.name}`);
    const upstreamCut = (name: string) => cut(oldMembers.has(name) ? `upstream ${name} of the aggregate mount` : `mount ${name}`);
    // A call held on a retired upstream for a 2026-07-28 client's retry cannot go on: its mount
    // left the table (404) or leads to the new instance, and the old one stops once its running
    // calls drain. It is cancelled now (the upstream is told), and a retry naming it gets the
    // same error as a cut call, not "requestState is unknown" (a client fault it is not).
    // Named by the mount the call came through: the member's own mount (`mount NAME`) or the aggregate.
    const heldCut = (name: string, mount: string | undefined) => (mount === name ? cut(`mount ${name}`) : upstreamCut(name));
    for (const e of oldEntries) deps.held?.cancelOwned(e.owner, (call) => heldCut(e.config.name, call.mount));
    // A call through the aggregate mount runs on its member's guarded upstream, not on the
    // member's mount: a kept aggregate mount is not retired, so its calls on a retired member are
    // cut here (a rebuilt one's are, with its mount). Else they ran to their end, and the member's
    // old instance waited for them.
    const retiredMembers = keptAggregate ? oldEntries.filter((e) => oldMembers.has(e.config.name)) : [];
    await Promise.all([
      ...oldMounts.map((m) => m.executor.close(grace, mountCut(m))),
      ...retiredMembers.map((e) => keptAggregate!.retireMember(e.guarded, grace, upstreamCut(e.config.name))),
      // A retry resumed here for another replica's client runs on the retired instance but on no
      // executor: it gets the same grace and the same cut, naming the mount it came through as a
      // held call's does. Before, the instance stopped under it at once ('Upstream unavailable:
      // shutting down').
      ...(deps.held ? oldEntries.map((e) => deps.held!.retireResumed(e.owner, grace, (mount) => heldCut(e.config.name, mount))) : []),
    ]);
    await Promise.all(oldMounts.map((m) => m.registry.close()));
    await Promise.all(
      oldEntries.map((e) => e.supervisor.drain(grace).catch((err: unknown) => log.error({ err, upstream: e.config.name }, 'upstream stop failed'))),
    );
  };

  await deps.prepare(config);
  for (const u of Object.values(config.upstreams)) entries.set(u.name, entryOf(u));
  setMembers(config);
  mounts = buildMounts(config, () => undefined);
  rebuildTable();
  const maxBodyBytes = Math.max(config.limits.maxBodyBytes, ...mounts.map((m) => m.limits.maxBodyBytes));

  /** Upstreams a `hold` start left down, not yet said to be served without (see {@link Runtime.serve}). */
  let held: Entry[] = [];
  /** The new upstreams of the reload under way while they make their first attempt (close() stops them). */
  let reloadStarting: readonly Entry[] = [];
  /**
   * Begins the reconnects of `down` (down since their first attempt; a no-op for one whose
   * reconnects began already) and says that the gateway serves without each one still not up;
   * not once closing.
   */
  const serveWithout = (down: readonly Entry[]) => {
    if (closing) return;
    for (const e of down) {
      e.supervisor.beginReconnects();
      // One that came up by a reconnect begun before this (the start's early reconnects) is served.
      if (e.supervisor.state === 'up') continue;
      log.warn({ upstream: e.config.name, optional: e.config.optional }, 'serving without an upstream that did not start');
    }
  };

  /**
   * Makes the first attempt of every upstream in `list` and resolves with those that failed. They
   * are down and reconnect in the background, unless `require` and a non-optional one failed: then
   * nothing reconnects (the failures are neither logged nor rescheduled, so that a start given up
   * ends with one error) and this throws the first such failure, naming its upstream and any other
   * that failed with it.
   *
   * When the reconnects of a failed one begin: with `early` (the gateway's start), as soon as its
   * attempt failed, without waiting for the others, unless the start may still be given up
   * (`require`, and a non-optional upstream's attempt has not yet succeeded): then once the last of
   * those succeeded, or not at all when one failed. Without `early` (a reload, which may keep the
   * running instance of a changed upstream and stop its new one), only once every attempt ended,
   * and, with `hold`, only when the caller hands them to {@link serveWithout}. The line `serving
   * without an upstream that did not start` comes once every attempt ended (with `hold`, when the
   * caller says so), for each one still down then.
   */
  const startAll = async (list: readonly Entry[], o: { require: boolean; hold: boolean; early: boolean }): Promise<Entry[]> => {
    const { require, hold, early } = o;
    /** Non-optional upstreams whose first attempt has not succeeded: the start may be given up while any is left. */
    let required = require ? list.filter((e) => !e.config.optional).length : 0;
    /** Failed while the start could still be given up: their reconnects wait for the last required success. */
    const waiting: Entry[] = [];
    const begin = (e: Entry) => {
      if (!closing) e.supervisor.beginReconnects();
    };
    const attempt = async (e: Entry): Promise<void> => {
      try {
        await e.supervisor.start();
      } catch (err) {
        if (!early) throw err;
        if (required > 0) waiting.push(e);
        else begin(e);
        throw err;
      }
      if (require && !e.config.optional && --required === 0) for (const w of waiting.splice(0)) begin(w);
    };
    const results = await Promise.allSettled(list.map(attempt));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ entry: list[i], err: r.reason as unknown }] : []));
    const fatal = require ? failed.filter((f) => !f.entry.config.optional) : [];
    if (fatal.length === 0) {
      if (!hold) serveWithout(failed.map((f) => f.entry));
      return failed.map((f) => f.entry);
    }
    const [first, ...others] = fatal;
    const err = first.err;
    if (!(err instanceof SwitchyardError)) throw err;
    const also = (operator: boolean) => others.map((f) => `; upstream ${f.entry.config.name}: ${causeText(f.err, operator)}`).join('');
    const named = (text: string, operator: boolean) => `${text} (upstream ${first.entry.config.name})${also(operator)}`;
    const message = named(err.message, false);
    const operatorMessage = named(operatorText(err), true);
    throw new SwitchyardError(err.code, {
      message,
      cause: err.cause,
      data: err.data,
      ...(operatorMessage !== message ? { operatorMessage } : {}),
    });
  };

  const stopEverything = async () => {
    closing = true;
    await Promise.all([...entries.values()].map((e) => e.supervisor.close().catch(() => {})));
  };

  /**
   * The changed upstreams of `candidates` (their new settings failed) that can be kept with their
   * running settings in `next`: each keeps its old paths, so one whose old paths a mount of `next`
   * serves (an upstream the reload adds on it, the aggregate, another kept one) cannot be kept and
   * is replaced as the file says, as a changed upstream that was not up is (docs/operations.md).
   */
  const keepable = (next: FrozenConfig, candidates: Entry[]): Entry[] => {
    let out = candidates;
    for (;;) {
      const upstreams = { ...next.upstreams };
      for (const e of out) upstreams[e.config.name] = config.upstreams[e.config.name];
      const owner = new Map<string, string>();
      const clash = new Set<string>();
      for (const m of listMounts({ ...next, upstreams })) {
        const who = m.upstream ?? '';
        for (const p of [m.mcpPath, m.ssePath, m.messagesPath]) {
          if (p === undefined) continue;
          const prev = owner.get(p);
          if (prev === undefined) owner.set(p, who);
          else clash.add(prev).add(who);
        }
      }
      const left = out.filter((e) => !clash.has(e.config.name));
      if (left.length === out.length) return out;
      for (const e of out)
        if (clash.has(e.config.name))
          log.warn(
            { upstream: e.config.name, err: e.supervisor.lastError },
            'config reload could not keep the running upstream: the new config serves its path elsewhere',
          );
      out = left;
    }
  };

  const applyNow = async (wanted: FrozenConfig): Promise<ReloadReport> => {
    if (closing) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
    const needRestart: string[] = RESTART_KEYS.filter((k) => !same(config[k], wanted[k]));
    if (!same(config.auth?.stdio, wanted.auth?.stdio)) needRestart.push('auth.stdio');
    for (const k of LISTENER_LIMITS) if (config.limits[k] !== wanted.limits[k]) needRestart.push(`limits.${k}`);
    let next = reloadable(config, wanted);
    const report: ReloadReport = { added: [], removed: [], changed: [], unchanged: [], policy: [], needRestart, kept: [] };
    const oldEntries: Entry[] = [];
    const fresh: Entry[] = [];
    for (const [name, e] of entries) {
      const u = next.upstreams[name];
      if (!u) report.removed.push(name);
      else if (upstreamKey(u) !== upstreamKey(e.config)) report.changed.push(name);
      else {
        report.unchanged.push(name);
        if (policyKey(next, name) !== policyKey(config, name)) report.policy.push(name);
      }
    }
    for (const name of Object.keys(next.upstreams)) if (!entries.has(name)) report.added.push(name);
    if (needRestart.length > 0) log.warn({ keys: needRestart }, 'config keys changed that take effect after a restart');

    await deps.prepare(next);
    // A shutdown that began meanwhile starts nothing new (close() stops only what already started).
    if (closing) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
    for (const name of report.added) fresh.push(entryOf(next.upstreams[name]));
    // A changed upstream's new instance starts beside the running one, heard by nobody until the reload decides (Entry.muted).
    for (const name of report.changed) fresh.push(entryOf(next.upstreams[name], true));
    // New and restarted upstreams make their first attempt before their mounts appear; an added
    // one that fails is mounted all the same, down and reconnecting.
    reloadStarting = fresh;
    let failed: Entry[];
    try {
      failed = await startAll(fresh, { require: false, hold: true, early: false });
    } finally {
      reloadStarting = [];
    }
    if (closing) {
      await Promise.all(fresh.map((e) => e.supervisor.close().catch(() => {})));
      throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
    }
    // Warm, then swap: a changed upstream whose new settings failed their first attempt while the
    // running instance serves is not replaced by a down one (a typo in a reloaded `command` used to
    // take a working upstream down). The running one stays with its settings; its new instance stops.
    const kept = keepable(
      next,
      failed.filter((e) => report.changed.includes(e.config.name) && entries.get(e.config.name)?.supervisor.state === 'up'),
    );
    if (kept.length > 0) {
      const keptNames = new Set(kept.map((e) => e.config.name));
      for (const e of kept)
        log.warn({ upstream: e.config.name, err: e.supervisor.lastError }, 'config reload kept the running upstream: its new settings did not start');
      await Promise.all(kept.map((e) => e.supervisor.close().catch(() => {})));
      // The new instance's lifecycle messages told the metrics and spans its transport and URL by
      // the upstream's name: say again what the running one is, so its calls keep their labels.
      for (const e of kept) deps.discard?.(e.config.name, e.guarded, entries.get(e.config.name)!.guarded);
      for (const name of keptNames) republishState(entries.get(name)!);
      report.changed = report.changed.filter((n) => !keptNames.has(n));
      report.kept = [...keptNames];
      fresh.splice(0, fresh.length, ...fresh.filter((e) => !keptNames.has(e.config.name)));
      const upstreams = { ...next.upstreams };
      for (const name of keptNames) upstreams[name] = keptEntry(config.upstreams[name], next.upstreams[name]);
      next = Object.freeze({ ...next, upstreams: Object.freeze(upstreams) });
      // Its policy keys (its own and the top-level ones) are the reload's: when they change what it
      // serves, it is listed (and its subscribers told) as an unchanged upstream would be.
      for (const name of keptNames) if (policyKey(next, name) !== policyKey(config, name)) report.policy.push(name);
      // The policy compiled for the config as it now applies (the kept upstreams' own connection settings are the old ones).
      await deps.prepare(next);
    }
    serveWithout(failed.filter((e) => !kept.includes(e)));
    if (closing) {
      await Promise.all(fresh.map((e) => e.supervisor.close().catch(() => {})));
      throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
    }
    for (const name of [...report.removed, ...report.changed]) oldEntries.push(entries.get(name)!);

    const rebuildAggregate = aggregateKey(config) !== aggregateKey(next);
    const oldMembers = new Set(config.aggregate ? members.keys() : []);
    const oldAggregate = aggregate;
    const keptMounts = new Map(mounts.map((m) => [m.name, m]));
    for (const name of report.removed) entries.delete(name);
    for (const e of fresh) {
      entries.set(e.config.name, e);
      // It replaces the running instance: heard from now on (what it said meanwhile is said again after the retire below).
      e.muted = false;
    }
    setMembers(next);
    // A rebuilt aggregate mount gets a new aggregate upstream (buildMounts makes it); none when it went.
    if (rebuildAggregate) aggregate = undefined;
    const previous = mounts;
    mounts = buildMounts(next, (m) => {
      const name = m.upstream ?? 'aggregate';
      if (m.upstream !== undefined) return report.unchanged.includes(name) || report.kept.includes(name) ? keptMounts.get(name) : undefined;
      return rebuildAggregate ? undefined : keptMounts.get('aggregate');
    });
    if (rebuildAggregate) {
      if (next.aggregate) (config.aggregate ? report.changed : report.added).push('aggregate');
      else if (config.aggregate) report.removed.push('aggregate');
      await aggregate?.start().catch((err: unknown) => log.error({ err }, 'aggregate mount did not start'));
    } else if (next.aggregate) report.unchanged.push('aggregate');
    config = next;
    deps.commit?.(next, report);
    rebuildTable();
    refreshAggregate();
    if (rebuildAggregate && oldAggregate && oldAggregate !== aggregate) void oldAggregate.close();

    const live = new Set(mounts);
    await retire(
      previous.filter((m) => !live.has(m)),
      oldEntries,
      oldMembers,
      rebuildAggregate ? undefined : oldAggregate,
    );
    // A replaced instance's last lifecycle messages (a stdio child's `down` as it exits) came after
    // its successor's: say again what runs under each changed name, for the metrics and spans.
    for (const name of report.changed) {
      const e = entries.get(name);
      if (e) republishState(e);
    }
    log.info(
      {
        added: report.added,
        removed: report.removed,
        changed: report.changed,
        policy: report.policy,
        ...(report.kept.length > 0 ? { kept: report.kept } : {}),
      },
      'config reloaded',
    );
    return report;
  };
  let applying: Promise<unknown> = Promise.resolve();

  return {
    get config() {
      return config;
    },
    get mounts() {
      return mounts;
    },
    supervised: new LiveMap(entries, (e) => e.supervisor),
    upstreams: new LiveMap(entries, (e) => e.supervisor.current),
    table: {
      resolve: (path) => routes.get(path),
      endpoints: () => routes.values(),
      maxBodyBytes,
    },
    async start(opts) {
      try {
        const failed = await startAll([...entries.values()], { require: config.requireUpstreams, hold: opts?.hold === true, early: true });
        if (opts?.hold) held = failed;
        await aggregate?.start();
      } catch (err) {
        await stopEverything();
        throw err;
      }
      refreshAggregate();
    },
    serve() {
      const down = held;
      held = [];
      if (!closing) serveWithout(down);
    },
    apply(wanted) {
      // One reload at a time: each diffs against what the one before it left.
      const run = applying.then(() => applyNow(wanted));
      applying = run.catch(() => {});
      return run;
    },
    async close(opts) {
      closing = true;
      const grace = config.limits.shutdownGraceMs;
      // Admission ends now, a reload under way or not: the mounts serving stop taking requests and
      // their calls get the grace from now. The upstreams that reload is still starting (a first
      // attempt can take upstreamStartTimeoutMs) stop now too: their mounts will never serve.
      const serving = new Set(mounts);
      // Calls held for a 2026-07-28 client's retry are in flight too: their retries are admitted
      // and waited for within the grace (Executor.close with `held`).
      const drained = [...serving].map((m) => m.executor.close(grace, undefined, deps.held));
      const stopped = reloadStarting.map((e) => e.supervisor.close().catch(() => {}));
      // The reload finishes (or gives up) first, so that nothing it started is left running.
      await applying;
      await Promise.all([...drained, ...stopped, ...mounts.filter((m) => !serving.has(m)).map((m) => m.executor.close(grace, undefined, deps.held))]);
      // What is still held after the grace is cancelled with the shutdown's error, while its
      // upstream still runs to be told so.
      deps.held?.clear();
      await Promise.all(mounts.map((m) => m.registry.close()));
      await Promise.all([...entries.values()].map((e) => e.supervisor.close(opts?.upstream)));
    },
  };
}
