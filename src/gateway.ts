// The one composition root: a validated config becomes upstreams, one executor and dialect
// registry per mount, and the HTTP routes; the standalone listener, the stdio front door, the
// library entry points and `emulate` are all built here.

import { canonicalJson } from './core/canonical-json.js';
import { createMessagePeer, createRegistry, type DialectId, type DialectRegistry } from '../dialects/index.js';
import type { UpstreamStateMessage } from './core/diagnostics.js';
import type { CallHolder } from './core/calls.js';
import { createLocalCluster } from './cluster/local.js';
import type { GatewayCluster, ReplicasOptions } from './cluster/replicas.js';
import { SwitchyardError } from './core/errors.js';
import type { MessagePeer } from './core/exchange.js';
import { Executor, guardUpstream } from './core/executor.js';
import { createListCache, type ListCache } from './core/list-cache.js';
import type { Identity } from './core/identity.js';
import type { StreamCredential } from './core/open-streams.js';
import { createSwappableInterceptor, type Interceptor, type NotificationFilter, type SwappableInterceptor } from './core/interceptor.js';
import type { Limits } from './core/limits.js';
import type { RpcMessage, RpcResponse } from './core/message.js';
import { strictEraClients, type MessageValidator } from './core/strict.js';
import { announceListChanges, type Subscription, type Upstream } from './core/upstream.js';
import type { CoreNotification, SubscriptionFilter } from './core/request.js';
import type { MountUpstreams, PolicyWiring } from './policy/wire.js';
import type { DialectSwitches, FrozenConfig, UpstreamConfig } from './config/load.js';
import { configFromOptions, type GatewayOptions } from './config/options.js';
import { createLogger, type Logger } from './log/logger.js';
import { Lines } from './log/lines.js';
import { checkListenable, startHttpTransport, type ExchangeWrapper, type HttpTransport, type MountTable, type RoutesOptions } from './transports/http.js';
import { descriptorShortfall } from './transports/connections.js';
import { createRequestClientAddress, createRequestPublicUrl } from './transports/request-url.js';
import { settleAnswers } from './transports/end-batch.js';
import { createCors } from './transports/cors.js';
import { createOriginCheck } from './transports/origin.js';
import { PRM_WELL_KNOWN } from './auth/prm.js';
import { memberUri } from './upstreams/aggregate.js';
import { createRuntime, httpMountOf, type ReloadReport } from './runtime.js';
import type { SupervisedUpstream } from './upstreams/supervisor.js';
import type { OperatedGateway } from './ops.js';
import { createDemoUpstream } from './upstreams/demo/index.js';
import type { EraClients } from './core/era.js';
import { VERSION } from './version.js';
import { authority } from './core/url-text.js';
import { checkOpenListener, type AuthMount } from './auth/open-listener.js';
import { authMounts, wirePolicy } from './config/compile.js';
import { isLoopbackHost } from './core/loopback.js';
import type { OutboundCredentials } from './upstreams/http/connector.js';

export type { GatewayOptions } from './config/options.js';

/** One served mount: its upstream, executor and dialects. */
export interface GatewayMount {
  /** Upstream name (config key), `default` for a flag-configured gateway, `aggregate` for the aggregate mount. */
  readonly name: string;
  /** MCP path (listen prefix included). */
  readonly path: string;
  /** HTTP+SSE stream and message paths (served when the mount's dialects include 2024-11-05). */
  readonly ssePath: string;
  readonly messagesPath: string;
  /** The mount's upstream as the executor sees it (wrapped by the interceptor chain). */
  readonly upstream: Upstream;
  readonly executor: Executor;
  readonly registry: DialectRegistry;
  /** The mount's bounds. */
  readonly limits: Readonly<Limits>;
}

/** Extra parts an embedder, the emulator or a test plugs in. */
export interface AssembleOptions {
  /** Logger (default: a new pino logger on stderr at `config.logLevel`). */
  log?: Logger;
  /** Interceptors on every upstream call, after those the config asks for (the last is outermost). */
  interceptors?: readonly Interceptor[];
  /** Exchange wrappers on the HTTP routes (the emulator's knobs). */
  wrappers?: readonly ExchangeWrapper[];
  /** The identity of each HTTP request (an embedding host's verified identity); replaces the config's `auth` front door when given. */
  identify?: RoutesOptions['identify'];
  /** HTTP+SSE paths of the first mount instead of the MCP path's siblings (the emulator's `--endpoint path-prefix`). */
  httpSsePaths?: { ssePath?: string; messagesPath?: string };
  /** Serve mounts without `auth` on a non-loopback listener (`--allow-unauthenticated`); see {@link startGatewayFromConfig}. */
  allowUnauthenticated?: boolean;
  /** Interceptors closest to the upstream, before every other (tracing's client span), innermost first. */
  observers?: readonly Interceptor[];
  /**
   * Run the operational side (src/ops.ts) with the standalone gateway: the admin listener of
   * `config.admin`, Prometheus metrics, OpenTelemetry tracing from `env`, the access log. The CLI
   * turns it on; off by default, so that embedders and tests get no listener on port 7601.
   */
  operations?: boolean;
  /** The environment the tracer reads its `OTEL_*` variables from (with `operations`; default none: tracing off). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Redis and bus timeouts of the cluster (tests shorten the reconnect backoff). */
  clusterOptions?: Pick<ReplicasOptions, 'redisOptions' | 'busOptions'>;
  /**
   * Stops a start still under way ({@link startGatewayFromConfig} only): when it aborts before the
   * gateway listens, the upstreams started so far are stopped as `close()` stops them (stdio
   * children in order), `shutting down` and `stopped` are logged (with the abort reason as `signal`
   * when it is a string, e.g. `SIGTERM`), and the start rejects with SWY_ERR_ADMISSION_SHUTTING_DOWN.
   * A start waits for every upstream's first attempt, which can take up to `upstreamStartTimeoutMs`
   * (docs/operations.md, "Upstream health"); an admin listener already open then closes too. Once the gateway listens, aborting does nothing: call its `close()`.
   */
  signal?: AbortSignal;
}

/** A gateway assembled from one config: built, not yet listening. */
export interface GatewayCore {
  readonly config: FrozenConfig;
  readonly log: Logger;
  /** Every mount, in config order (upstreams, then the aggregate); a reload changes it. */
  readonly mounts: readonly GatewayMount[];
  /** The upstreams themselves (not wrapped by the interceptor chain), by config name. */
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** Each upstream's supervisor (state, last error, calls in flight), by config name. */
  readonly supervised: ReadonlyMap<string, SupervisedUpstream>;
  /** The live mount table the standalone listener serves (reloads change it). */
  readonly table: MountTable;
  /** True from the moment `close()` began. */
  readonly draining: boolean;
  /**
   * Moves to a new validated config without a restart (src/runtime.ts `apply`): added upstreams
   * start, removed ones drain and stop, changed ones restart, unchanged ones are untouched; a
   * change of policy keys alone (top-level or an upstream's `policy`, `rateLimits`, curation,
   * `validateArguments`) is swapped into the running chains, sessions kept (docs/policy.md, "Reloading").
   * @throws SwitchyardError SWY_ERR_ADMISSION_SHUTTING_DOWN after close(); SWY_ERR_CONFIG_INVALID
   *   listing every failing path when a policy rule, limit or curation of `config` does not compile
   *   (nothing of the reload applies), each as the config's file has it (`/mcpServers/NAME/…` for
   *   an `mcpServers` file)
   */
  reload(config: FrozenConfig): Promise<ReloadReport>;
  /** Options of the HTTP routes plugin for these mounts. */
  readonly routes: RoutesOptions;
  /**
   * Configured authentication for the library's fetch handler (no fastify request there): the
   * same decision as `routes.identify`, from the request's headers, its resource URI based on
   * `publicBaseUrl` or else the request URL's origin. Undefined when no mount authenticates.
   * @throws what `routes.identify` throws (401/400/403/503 refusals with `WWW-Authenticate`)
   */
  readonly fetchIdentify: ((request: Request, mount: { path: string }) => Promise<Identity | null>) | undefined;
  /**
   * What `fetchIdentify` admitted a request with (its `Authorization` and the base URL of its
   * resource URI), for a long-lived stream it opens to be checked again at its token's expiry and
   * at a reload (`Executor.streams`), as the standalone listener's streams are. Undefined when no
   * mount authenticates.
   */
  readonly fetchCredential: ((request: Request) => StreamCredential) | undefined;
  /**
   * The RFC 9728 protected resource metadata the library's fetch handler serves for a GET of
   * `path` (the challenges of `fetchIdentify` name it), on the same base URL as `fetchIdentify`;
   * undefined when `path` names no authenticated mount's metadata. Undefined when no mount
   * authenticates.
   * @see RFC 9728 §3.1, §3.2
   */
  readonly fetchMetadata: ((request: Request, path: string) => object | undefined) | undefined;
  /** Replicas: shared buckets for the rate limiter, Redis state and readiness reasons for `/readyz` (inert without `cluster`). */
  readonly cluster: GatewayCluster;
  /**
   * Makes every upstream's first attempt (once). One that fails is marked down and reconnects in
   * the background from the moment it failed, without waiting for the other attempts; with
   * `requireUpstreams` a non-optional one that fails fails the start (and a failed one's
   * reconnects begin only once no such failure can come: src/runtime.ts `start`).
   * With `hold` (a caller that binds listeners next), `serving without an upstream that did not
   * start` waits for {@link GatewayCore.serve}, so that a listener that cannot bind ends the start
   * without a word of serving.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE naming the upstream (requireUpstreams)
   */
  start(opts?: { hold?: boolean }): Promise<void>;
  /** After a `hold` start, once listening: says which upstreams it serves without (src/runtime.ts `serve`). */
  serve(): void;
  /** A message peer on mount `name` (default: the first) for a message channel such as stdio. */
  peer(write: (msg: RpcMessage | RpcResponse[]) => boolean, identity: Identity | null, name?: string): MessagePeer;
  /**
   * Graceful stop: refuse new work, let in-flight requests finish within `shutdownGraceMs`, close
   * streams and sessions, stop the upstreams. The HTTP listener is the caller's to close. Logs
   * `shutting down` once, naming `signal` (what asked for the stop: `SIGTERM`, `SIGINT`) when given;
   * later calls get the same promise. `upstreamStopStepMs`: each step of a stdio child's ordered
   * stop, ms (default `upstreamStopTimeoutMs`; `--serve-stdio` shortens it at stdin EOF, docs/stdio.md).
   * `failedStart`: the stop of a start that failed before the gateway listened (a listener's bind
   * after the upstreams' first attempts): no `shutting down` line, since nothing served; the caller
   * reports the failure.
   */
  close(opts?: { signal?: string; upstreamStopStepMs?: number; failedStart?: boolean }): Promise<void>;
}

/** A running standalone gateway (serving: nothing is held back to `serve`). */
export interface Gateway extends Omit<GatewayCore, 'serve'> {
  readonly http: HttpTransport;
  /** Every mount with its URL, `http://host:port/path`. */
  readonly mounts: readonly (GatewayMount & { readonly url: string })[];
  /** The first mount's URL, `http://host:port/path`. */
  readonly url: string;
  /** Every mount's URL, in mount order. */
  readonly urls: readonly string[];
  /** The first mount's executor (the only mount of a flag-configured gateway). */
  readonly executor: Executor;
  /** The first mount's upstream. */
  readonly upstream: Upstream;
  /** The first mount's dialect registry. */
  readonly registry: DialectRegistry;
  /** True once the listener is bound. */
  readonly listening: boolean;
  /** The admin listener, with `operations` and `config.admin` on. */
  readonly admin: { address(): { host: string; port: number; url: string } } | undefined;
  /** Stops the listener after the core (see GatewayCore.close), the admin listener last. */
  close(opts?: { signal?: string }): Promise<void>;
}

function dialectIds(d: DialectSwitches): DialectId[] {
  const out: DialectId[] = [];
  if (d.modern) out.push('2026-07-28');
  if (d.streamable) out.push('2025-03-26');
  if (d.legacySse) out.push('2024-11-05');
  return out;
}

/** True when `upstream` announces changes of the list `method` returns (its capability's `listChanged`). */
function announcesListChanges(upstream: Upstream | undefined, method: string): boolean {
  const kind = method.startsWith('tools/') ? 'tools' : method.startsWith('prompts/') ? 'prompts' : 'resources';
  try {
    return (upstream?.describe().capabilities[kind] as { listChanged?: boolean } | undefined)?.listChanged === true;
  } catch {
    return false;
  }
}

/**
 * Drops an upstream's cached lists when it announces a change (2025-11-25
 * server/tools#list-changed-notification), and all of them whenever its health changes: an
 * upstream that comes back (a restarted child, a reconnect) may list something else, and its
 * old subscription went with the old instance, so each time it is up it is subscribed anew.
 */
function watchListChanges(name: string, upstream: SupervisedUpstream, cache: ListCache): void {
  const methodsOf: Record<string, string[]> = {
    'notifications/tools/list_changed': ['tools/list'],
    'notifications/prompts/list_changed': ['prompts/list'],
    'notifications/resources/list_changed': ['resources/list', 'resources/templates/list'],
  };
  let sub: { close(): void } | undefined;
  upstream.onChange((state) => {
    cache.invalidate(name);
    sub?.close();
    sub = undefined;
    if (state !== 'up') return;
    try {
      sub = upstream.subscribe({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }, (n) => {
        for (const m of methodsOf[n.method] ?? []) cache.invalidate(name, m);
      });
    } catch {
      // down again already: the next change subscribes
    }
  });
}

/**
 * The `Allow` of an RFC 9728 metadata path for a CORS preflight (`GET, HEAD`), or undefined for
 * any other path: the well-known path and every path below it (RFC 9728 §3.1).
 */
const metadataAllow = (path: string): string | undefined => (path === PRM_WELL_KNOWN || path.startsWith(`${PRM_WELL_KNOWN}/`) ? 'GET, HEAD' : undefined);

const CLIENT_INFO = { name: 'switchyard', version: VERSION };

/**
 * The era clients upstream connectors speak through (injected: upstreams never import dialects/).
 * Loaded at the first call: a config with only the embedded demo never needs them.
 */
export async function eraClients(): Promise<EraClients> {
  const [{ statelessClient }, { sessionClient }, { createHttpSseClient }] = await Promise.all([
    import('../dialects/2026-07-28/client.js'),
    import('../dialects/2025-03-26/client.js'),
    import('../dialects/2024-11-05/client.js'),
  ]);
  return { stateless: statelessClient, sessions: sessionClient, httpSse: createHttpSseClient(sessionClient) };
}

/** The HTTP upstream module, loaded only for configs that have HTTP upstreams (undici costs start-up time). */
type HttpModule = typeof import('./upstreams/http/index.js');
/** The stdio upstream module, loaded only for configs that have stdio upstreams. */
type StdioModule = typeof import('./upstreams/stdio/index.js');

/** The connector modules a config's upstreams need, each loaded by the first config that has one (see `prepare`). */
interface Connectors {
  http?: HttpModule;
  stdio?: StdioModule;
  eras?: EraClients;
}

/**
 * Builds (does not start) the upstream one config entry names; `onState` hears its lifecycle,
 * `publish` takes its lifecycle messages for the channels (RuntimeDeps.create).
 */
function createUpstream(
  u: UpstreamConfig,
  log: Logger,
  held: CallHolder,
  connectors: Connectors,
  onState: (m: UpstreamStateMessage) => void,
  publish: ((m: UpstreamStateMessage) => void) | undefined,
  demoKey?: Buffer,
  credentials?: OutboundCredentials,
  strict?: MessageValidator,
): Upstream {
  switch (u.transport) {
    case 'embedded':
      return createDemoUpstream({ version: VERSION, stateKey: demoKey });
    case 'stdio': {
      const { stdio, eras } = connectors;
      if (!stdio || !eras) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'stdio upstream module not loaded' });
      return stdio.createStdioUpstream({
        command: u.command,
        argv: [u.command, ...u.args],
        env: { ...u.env },
        cwd: u.cwd,
        name: u.name,
        log,
        limits: { ...u.limits },
        clientInfo: CLIENT_INFO,
        held,
        eras,
        era: u.era,
        onState,
        publish,
        strict,
      });
    }
    case 'http': {
      const { http, eras } = connectors;
      if (!http || !eras) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'HTTP upstream module not loaded' });
      return http.createHttpUpstream({
        name: u.name,
        url: u.url,
        headers: { ...u.headers },
        era: u.era,
        ...(u.sseSetting ? { sseSetting: u.sseSetting } : {}),
        isolation: u.isolation,
        forwardAuthorization: u.forwardAuthorization,
        ...(credentials ? { credentials } : {}),
        log,
        limits: { ...u.limits },
        clientInfo: CLIENT_INFO,
        held,
        eras,
        onState,
        publish,
        strict,
      });
    }
  }
}

/** A subscription on a guarded upstream that asked for list changes: told when a reload changes what its client may see. */
interface ListListener {
  readonly filter: SubscriptionFilter;
  readonly sink: (n: CoreNotification) => void;
}

/**
 * A subscription that asked for list changes, kept in its mount's `listeners` while open: the
 * listener entry and the subscription in one object, not a literal, a closure and its context
 * (an idle session holds it for its whole life, and tens of thousands may be open).
 */
class ListedSubscription implements ListListener, Subscription {
  constructor(
    private readonly listeners: Set<ListListener>,
    private readonly sub: Subscription,
    readonly filter: SubscriptionFilter,
    readonly sink: (n: CoreNotification) => void,
  ) {
    listeners.add(this);
  }

  close(): void {
    this.listeners.delete(this);
    this.sub.close();
  }
}

/**
 * `guarded` with each subscription that asks for list changes kept in `listeners` while it is
 * open. Requests pass as they are (the same function).
 */
function listingChanges(guarded: Upstream, listeners: Set<ListListener>): Upstream {
  const track = (filter: SubscriptionFilter, sink: (n: CoreNotification) => void, sub: Subscription): Subscription => {
    if (!filter.toolsListChanged && !filter.promptsListChanged && !filter.resourcesListChanged) return sub;
    return new ListedSubscription(listeners, sub, filter, sink);
  };
  return {
    ...guarded,
    subscribe: (filter, sink) => track(filter, sink, guarded.subscribe(filter, sink)),
    subscribeSession: guarded.subscribeSession ? (ref, filter, sink) => track(filter, sink, guarded.subscribeSession!(ref, filter, sink)) : undefined,
  };
}

/**
 * The lists of upstream `name` whose content a move from `a` to `b` may change for some caller:
 * all three when the policy that decides it changed, else those whose curation did. Rate limits
 * and argument validation change no list.
 */
function visibilityChanged(a: FrozenConfig, b: FrozenConfig, name: string): Array<'tools' | 'prompts' | 'resources'> {
  const ua = a.upstreams[name];
  const ub = b.upstreams[name];
  if (!ua || !ub) return [];
  // By content: a reload that only reorders a rule's keys tells no subscriber its lists changed.
  const same = (x: unknown, y: unknown) => canonicalJson(x) === canonicalJson(y);
  if (!same(ua.policy ?? a.policy, ub.policy ?? b.policy)) return ['tools', 'prompts', 'resources'];
  return (['tools', 'prompts', 'resources'] as const).filter((k) => !same(ua[k], ub[k]));
}

/**
 * Assembles a gateway from a validated config: every upstream on its own mount, plus the
 * aggregate mount when configured; each upstream wrapped by the interceptor chain; one executor
 * and dialect registry per mount. Nothing starts or listens yet.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (an aggregate member name that contains its separator; a bad `trustProxy` entry or `publicBaseUrl`)
 */
export async function assemble(config: FrozenConfig, opts: AssembleOptions = {}): Promise<GatewayCore> {
  const log = opts.log ?? createLogger(config.logLevel);
  // First: a bad trustProxy entry or publicBaseUrl fails before anything is built.
  const publicUrl = createRequestPublicUrl({ trustProxy: config.trustProxy, publicBaseUrl: config.publicBaseUrl });
  const clientAddress = createRequestClientAddress({ trustProxy: config.trustProxy });
  // Loaded only with a `cluster` section: the Redis client alone costs a few hundred ms of start-up.
  const cluster: GatewayCluster = config.cluster
    ? await (
        await import('./cluster/replicas.js')
      ).createReplicas({
        cluster: config.cluster,
        requestStateKey: config.requestStateKey,
        limits: config.limits,
        // The aggregate mount has the top-level limits; an upstream's mount its own, as reloaded.
        requestTimeoutOf: (mount) => runtime.config.upstreams[mount]?.limits.requestTimeoutMs ?? config.limits.requestTimeoutMs,
        log,
        ...opts.clusterOptions,
      })
    : createLocalCluster({ requestStateKey: config.requestStateKey, limits: config.limits });
  const held = cluster.held;
  // The list cache is innermost: every interceptor that filters lists per caller sits outside it.
  const listCache = createListCache({
    ttlMs: config.listCache.ttlMs,
    maxAgeMs: config.listCache.maxAgeMs,
    maxEntries: config.listCache.maxEntries,
    maxBytes: config.listCache.maxBytes,
    announces: (name, method) => announcesListChanges(runtime.upstreams.get(name), method),
    // A list may depend on who asks when the caller's own token reaches the upstream.
    bypass: (name) => {
      const u = runtime.config.upstreams[name];
      // Token exchange likewise gives the upstream a token per caller (RFC 8693 subject_token).
      return (
        config.listCache.maxAgeMs === 0 ||
        (u?.transport === 'http' && (u.forwardAuthorization || (u.credentials !== undefined && 'tokenExchange' in u.credentials)))
      );
    },
  });
  const notificationFilters: NotificationFilter[] = [];
  // Loaded only when asked for: ajv and the schemas cost start-up time.
  const strict: MessageValidator | undefined =
    config.strict !== 'off' ? (await import('./strict/validator.js')).createStrictValidator({ mode: config.strict, log }) : undefined;

  const { listMounts } = await import('./config/load.js');
  const listed = listMounts(config);
  const mountAuth = authMounts(config, listed);
  // Loaded only when asked for: jose and the OAuth code cost start-up time (a reload may need it later).
  type AuthWire = typeof import('./auth/wire.js');
  let authWire: AuthWire | undefined;
  const needsAuthWire = (c: FrozenConfig) =>
    authMounts(c, listMounts(c)).some((m) => m.auth !== undefined) ||
    Object.values(c.upstreams).some((u) => u.transport === 'http' && (u.credentials !== undefined || u.forwardAuthorization));
  if (needsAuthWire(config)) authWire = await import('./auth/wire.js');
  authWire?.warnTokenPassthrough(
    Object.values(config.upstreams).map((u) => ({ name: u.name, forwardAuthorization: u.transport === 'http' && u.forwardAuthorization })),
    log,
  );
  const connectors: Connectors = {};
  const demoKey = cluster.derivedKey('demo-request-state');
  // One credential source per upstream config entry: its token cache outlives reconnects, and a changed entry gets a new one.
  const credentialsOf = new WeakMap<UpstreamConfig, OutboundCredentials>();
  const credentials = (u: UpstreamConfig): OutboundCredentials | undefined => {
    if (u.transport !== 'http' || !u.credentials) return undefined;
    let c = credentialsOf.get(u);
    if (!c) credentialsOf.set(u, (c = authWire!.createUpstreamCredentials(u.credentials, { log, upstream: u.name })));
    return c;
  };
  // Curation, policy, rate limits and argument validation per upstream, inside the embedder's interceptors and outside the list cache.
  // Compiled again for each config a reload applies, and swapped into the running chains when it takes effect (`commit`); buckets live in one store.
  const watchers: Array<{ close(): void }> = [];
  // One tool-list watch per supervisor: a reload's new wiring hands it its own `changed` instead of watching twice.
  const toolWatches = new WeakMap<SupervisedUpstream, { changed: () => void }>();
  const { DEFAULT_MAX_BUCKETS } = await import('./policy/wire.js');
  const { createMemoryBucketStore } = await import('./policy/rate-limit.js');
  const buckets = cluster.buckets ?? createMemoryBucketStore({ maxBuckets: DEFAULT_MAX_BUCKETS });
  const wire = (c: FrozenConfig) =>
    wirePolicy(c, {
      log,
      store: buckets,
      // Like the list cache (watchListChanges): forgotten on every health change, subscribed anew each time it is up.
      watchTools: (name, changed) => {
        const s = runtime.supervised.get(name);
        if (!s) return;
        const known = toolWatches.get(s);
        if (known) {
          known.changed = changed;
          return;
        }
        const w = { changed };
        toolWatches.set(s, w);
        let sub: { close(): void } | undefined;
        const watch = () => {
          sub?.close();
          sub = undefined;
          if (s.state !== 'up') return;
          try {
            const tools = (s.describe().capabilities as { tools?: { listChanged?: boolean } }).tools;
            if (tools?.listChanged) sub = s.subscribe({ toolsListChanged: true }, (n) => n.method === 'notifications/tools/list_changed' && w.changed());
          } catch (err) {
            log.warn({ upstream: name, err }, 'tool list changes not watched');
          }
        };
        const off = s.onChange(() => {
          w.changed();
          watch();
        });
        watchers.push({
          close() {
            off();
            sub?.close();
          },
        });
        watch();
      },
    });
  /** The wiring of the config in force, and that config. */
  let policy = await wire(config);
  let policyConfig: FrozenConfig = config;
  /** The wiring a reload under way compiled (`prepare`), in force from its `commit`. */
  let pending: { config: FrozenConfig; wiring: PolicyWiring } | undefined;
  /** Per upstream name, its current guarded instance's policy stage and the subscriptions on it that asked for list changes. */
  const stages = new Map<string, { stage: SwappableInterceptor; listeners: Set<ListListener> }>();
  /** The entry of `stages` each guarded instance registered, for a reload that discards a new instance (`discard`). */
  const stageOf = new WeakMap<Upstream, { stage: SwappableInterceptor; listeners: Set<ListListener> }>();
  /**
   * A mount's notification filters as the wiring in force has them: a reload's new policy and
   * curation decide the next update a running subscription gets (docs/policy.md, "Reloading").
   */
  const liveFilter = (mount: MountUpstreams): NotificationFilter => {
    let of: PolicyWiring | undefined;
    let fs: NotificationFilter[] = [];
    return (subscriber, n) => {
      if (of !== policy) fs = (of = policy).notificationFiltersFor(mount);
      let out: ReturnType<NotificationFilter> = n;
      for (const f of fs) if ((out = f(subscriber, out)) === null) return null;
      return out;
    };
  };
  // The aggregate's members change with reloads: its notification filters follow the policy of the config that holds now.
  const aggregateFilter = liveFilter({ member: memberUri });
  /**
   * Puts the wiring `pending` compiled for `c` in force: every running upstream's policy stage
   * gets its interceptors (requests already inside keep theirs), and the subscriptions of an
   * upstream whose visible components may have changed (`report.policy`) are told their lists changed.
   */
  const commitPolicy = (c: FrozenConfig, report: ReloadReport) => {
    if (pending?.config !== c) return;
    const before = policyConfig;
    policy = pending.wiring;
    policyConfig = c;
    pending = undefined;
    for (const [name, s] of stages) {
      if (c.upstreams[name] === undefined) stages.delete(name);
      else s.stage.swap(policy.interceptorsFor(name));
    }
    for (const name of report.policy) {
      const kinds = visibilityChanged(before, c, name);
      const listeners = stages.get(name)?.listeners;
      if (!listeners || kinds.length === 0) continue;
      announceListChanges(listeners, (kind) => kinds.includes(kind));
    }
  };
  const runtime = await createRuntime(config, {
    log,
    version: VERSION,
    async prepare(c) {
      const transports = new Set(Object.values(c.upstreams).map((u) => u.transport));
      if (!connectors.eras && (transports.has('http') || transports.has('stdio'))) connectors.eras = strictEraClients(await eraClients(), strict);
      if (!connectors.http && transports.has('http')) connectors.http = await import('./upstreams/http/index.js');
      if (!connectors.stdio && transports.has('stdio')) connectors.stdio = await import('./upstreams/stdio/index.js');
      if (!authWire && needsAuthWire(c)) authWire = await import('./auth/wire.js');
      // A policy that does not compile fails the reload before anything changed; what compiles is in force from `commit`.
      if (c !== policyConfig && pending?.config !== c) pending = { config: c, wiring: await wire(c) };
    },
    // Each instance holds its calls marked with its config entry (`owner`): a reload that retires it cancels them.
    create: (u, onState, publish, owner) => createUpstream(u, log, held.scoped(owner), connectors, onState, publish, demoKey, credentials(u), strict),
    held,
    commit: commitPolicy,
    guard(u, name) {
      // The runtime guards supervisors; a new or restarted one starts with no cached lists.
      listCache.invalidate(name);
      watchListChanges(name, u as SupervisedUpstream, listCache);
      // The list cache stays innermost, below the per-caller filters, so that one cached list serves every caller.
      // A new or restarted upstream of a reload under way gets that reload's wiring (its mount serves from the commit on).
      const stage = createSwappableInterceptor((pending?.wiring ?? policy).interceptorsFor(name));
      const listeners = new Set<ListListener>();
      const entry = { stage, listeners };
      stages.set(name, entry);
      const guarded = guardUpstream(u, [...(opts.observers ?? []), listCache.interceptor, stage.interceptor, ...(opts.interceptors ?? [])], held, name);
      const listed = listingChanges(guarded, listeners);
      stageOf.set(listed, entry);
      return listed;
    },
    discard(name, candidate, running) {
      // A kept upstream's stage is the one commits swap again (the candidate's took its name).
      const entry = stageOf.get(running);
      if (entry && stages.get(name) === stageOf.get(candidate)) stages.set(name, entry);
    },
    mount(m, i, upstream, c) {
      const name = m.upstream ?? 'aggregate';
      const limits = { ...m.limits };
      const base = m.mcpPath.replace(/\/[^/]*$/, '');
      const messagesPath = (i === 0 ? opts.httpSsePaths?.messagesPath : undefined) ?? m.messagesPath ?? `${base}/messages`;
      const ssePath = (i === 0 ? opts.httpSsePaths?.ssePath : undefined) ?? m.ssePath ?? `${base}/sse`;
      const filters = [m.upstream !== undefined ? liveFilter({ upstream: m.upstream }) : aggregateFilter, ...notificationFilters];
      const executor = new Executor({ mount: name, upstream, limits, notificationFilters: filters, log, upstreamName: m.upstream });
      // The front door in force at each call (a reload replaces it), for the mount's open streams:
      // checked again at a reload that changes its `auth`, and at their credential's expiry.
      if (!opts.identify) executor.streams.checkWith((c) => checkCredential(c, m.mcpPath));
      const registry = createRegistry(
        { executor, limits, log, strict, messagePath: messagesPath, cache: c.cache, replicas: cluster.forMount(name) },
        { enabled: dialectIds(m.dialects) },
      );
      return { name, path: m.mcpPath, ssePath, messagesPath, upstream, executor, registry, limits };
    },
  });
  const mounts = runtime.mounts;

  // Authentication before MCP on every route of every mount that has `auth`, and its RFC 9728 metadata.
  const frontDoorOf = (ma: AuthMount[]) =>
    ma.some((m) => m.auth !== undefined) ? authWire!.createFrontDoorAuth({ mounts: ma, log, baseUrl: (req) => publicUrl(req, '', false) }) : undefined;
  let doorMounts = mountAuth;
  let frontDoor = frontDoorOf(mountAuth);
  /**
   * What the front door in force says of a stream's credential on the mount at MCP path `path`
   * (`OpenStreams.checkWith`). A background check: an introspection waits for a place under
   * `maxConcurrent` (a busy answer would keep a refused stream unchecked) rather than flooding
   * the endpoint or being refused.
   */
  function checkCredential(c: StreamCredential, path: string): Promise<Identity | null> {
    if (!frontDoor) return Promise.resolve(null);
    return frontDoor.identifyHeaders({ get: (name) => (name === 'authorization' ? c.authorization : undefined) }, c.baseUrl, { path }, { waitForPlace: true });
  }
  // A reload builds the front door again (below): `identify` and the RFC 9728 metadata routes ask
  // the current one, so that a mount it adds is authenticated and described at once.
  // CORS (docs/security.md, "CORS"): compiled once, with the Origin check the listener makes, so
  // that an origin allowedOrigins refuses fails the start as it fails `switchyard validate`.
  const cors = config.cors ? createCors(config.cors, createOriginCheck({ allowedOrigins: config.allowedOrigins, allowedHosts: [] })) : undefined;
  const metadataRoutes = frontDoor
    ? authWire!.metadataRoutesOf(() => (frontDoor ? { door: frontDoor, servedPaths: runtime.mounts.map((m) => m.path) } : undefined), {
        preflight: cors !== undefined,
      })
    : undefined;
  const identify: NonNullable<RoutesOptions['identify']> = (req, m) => (frontDoor ? frontDoor.identify(req, m) : null);
  /**
   * Moves the front door to the mounts of `next` and their `auth` (a mount's own, else the
   * top-level one: a key removed from either is refused from the next request on) before the
   * runtime does, keeping the mounts a reload removes until they are gone: no mount is ever
   * served without the authentication its config asks for. Returns how to undo it.
   */
  const moveFrontDoor = async (next: FrozenConfig): Promise<() => void> => {
    const fresh = authMounts(next, listMounts(next));
    const paths = new Set(fresh.map((m) => m.path));
    const wanted = [...fresh, ...doorMounts.filter((m) => !paths.has(m.path))];
    const before = { doorMounts, frontDoor };
    // An embedder's own identity replaces the front door; without one at the start, the routes have no hook to authenticate with.
    if (opts.identify || JSON.stringify(wanted) === JSON.stringify(doorMounts)) return () => {};
    if (!metadataRoutes && wanted.some((m) => m.auth?.bearer !== undefined || m.auth?.apiKeys !== undefined))
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
        detail: 'auth on a gateway that started without any takes effect after a restart',
        data: { source: 'reload' },
      });
    if (!authWire && wanted.some((m) => m.auth !== undefined)) authWire = await import('./auth/wire.js');
    frontDoor = frontDoorOf(wanted);
    doorMounts = wanted;
    return () => ({ doorMounts, frontDoor } = before);
  };
  /** Each front-door mount's HTTP `auth` as JSON, by MCP path (`JSON.stringify(undefined)` for none). */
  const authByPath = (ma: readonly AuthMount[]) => new Map(ma.map((m) => [m.path, JSON.stringify(m.auth)]));
  /**
   * After a reload moved the front door: the open streams of every mount whose `auth` it changed
   * (`before`, from {@link authByPath}) are checked with the front door now in force, and those
   * it refuses end (`Executor.streams`); the streams of the other mounts are not touched. A mount
   * the reload added or rebuilt has no streams yet; a removed one's end with its drain.
   */
  const recheckStreams = async (before: ReadonlyMap<string, string>): Promise<void> => {
    const now = authByPath(doorMounts);
    await Promise.all(runtime.mounts.map(async (m) => (now.get(m.path) === before.get(m.path) ? undefined : m.executor.streams.recheck())));
  };
  if (
    frontDoor &&
    frontDoor.protectedPaths.length > 0 &&
    !isLoopbackHost(config.listen.host) &&
    config.allowedHosts.length === 0 &&
    config.publicBaseUrl === undefined
  )
    log.warn({ host: config.listen.host }, 'token audiences follow the Host header: set allowedHosts so that only your own names are accepted');

  let starting: Promise<void> | undefined;
  const start = (o?: { hold?: boolean }) => (starting ??= runtime.start(o));
  /**
   * The public base URL of a fetch handler's request: `publicBaseUrl`, else the request URL's
   * scheme with the authority the Host check passed (the `Host` header when the Request carries
   * one, else the URL's own): no proxy headers to trust there. The URL's authority alone would let
   * an absolute-form target (`POST http://other.example/mcp`, which @hono/node-server makes the
   * Request URL) choose the token audience behind a Host that the allowlist passed.
   */
  const fetchBaseUrl = (request: Request): string => {
    if (config.publicBaseUrl !== undefined) return config.publicBaseUrl.replace(/\/$/, '');
    const url = new URL(request.url);
    const host = request.headers.get('host');
    if (host === null) return url.origin;
    // A Host that is no authority cannot have passed an allowlist; without one, any name passes.
    return URL.canParse(`${url.protocol}//${host}`) ? new URL(`${url.protocol}//${host}`).origin : url.origin;
  };

  let closing: Promise<void> | undefined;
  return {
    get config() {
      return runtime.config;
    },
    log,
    get mounts() {
      return runtime.mounts;
    },
    upstreams: runtime.upstreams,
    supervised: runtime.supervised,
    table: runtime.table,
    get draining() {
      return closing !== undefined;
    },
    async reload(next) {
      const authBefore = authByPath(doorMounts);
      const undo = await moveFrontDoor(next);
      let report;
      try {
        report = await runtime.apply(next);
      } catch (err) {
        undo();
        // The runtime compiles the policy of a config it derives from `next` (wirePolicy cannot tell that one's file): named here, by `next`.
        throw (await import('./config/load.js')).inFileTerms(next, err);
      }
      await recheckStreams(authBefore);
      return report;
    },
    cluster,
    routes: {
      mounts: mounts.map(httpMountOf),
      limits: { ...config.limits },
      origin: { allowedOrigins: config.allowedOrigins, allowedHosts: config.allowedHosts },
      publicUrl,
      clientAddress,
      log,
      identify: opts.identify ?? (frontDoor ? identify : undefined),
      // The front door reads only the head (RFC 6750 §2.1): it answers before the body is read.
      identifyBeforeBody: !opts.identify && frontDoor !== undefined,
      wrappers: opts.wrappers,
      // Several Switchyards in one fastify server share the first one's metadata routes: each
      // document is checked by its owner's allowlists and CORS (docs/embedding.md).
      ...(metadataRoutes ? { plugins: [metadataRoutes], headCheckOf: authWire!.metadataHeadCheck } : {}),
      ...(cors ? { cors, corsPaths: metadataRoutes ? metadataAllow : undefined } : {}),
    },
    fetchIdentify: frontDoor
      ? (request, m) => (frontDoor ? frontDoor.identifyHeaders(request.headers, fetchBaseUrl(request), m) : Promise.resolve(null))
      : undefined,
    fetchCredential: frontDoor
      ? (request) => ({ authorization: request.headers.get('authorization') ?? undefined, baseUrl: fetchBaseUrl(request) })
      : undefined,
    fetchMetadata: frontDoor
      ? (request, path) =>
          frontDoor?.metadataForBase(
            fetchBaseUrl(request),
            path,
            runtime.mounts.map((m) => m.path),
          )
      : undefined,
    start,
    serve: () => runtime.serve(),
    peer(write, identity, name) {
      const m = name === undefined ? runtime.mounts[0] : runtime.mounts.find((x) => x.name === name);
      if (!m) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `no mount named ${name}` });
      return createMessagePeer({ executor: m.executor, limits: m.limits, log, strict, cache: config.cache, identity, write });
    },
    close(o) {
      closing ??= (async () => {
        // Calls held for a 2026-07-28 client's retry are in flight too (the drain waits for them): counted in `inFlight`, and alone in `held`.
        if (!o?.failedStart)
          log.info(
            { signal: o?.signal, inFlight: runtime.mounts.reduce((n, m) => n + m.executor.inFlight, 0) + held.busy, held: held.busy },
            Lines.shuttingDown,
          );
        await runtime.close(o?.upstreamStopStepMs === undefined ? undefined : { upstream: { stopStepMs: o.upstreamStopStepMs } });
        // The drained requests' last answers may be held to the end of their turn, queued behind
        // others on their connection, or still going out to a slow reader: they go out before any
        // host (fastify's forceCloseConnections, a closeAllConnections) cuts them, within the grace.
        await settleAnswers(config.limits.shutdownGraceMs);
        for (const w of watchers.splice(0)) w.close();
        held.clear();
        await cluster.close();
      })();
      return closing;
    },
  };
}

/**
 * Starts a standalone gateway from a validated config: assembles it, starts the upstreams (one
 * that fails is marked down unless `requireUpstreams`), and listens on `config.listen` through
 * the live mount table. With `opts.operations`, also the admin listener, metrics, tracing and
 * the access log (src/ops.ts); the admin listener opens before the upstreams' first attempts, the
 * MCP listener after them (docs/operations.md, "Start-up").
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED (either listener), SWY_ERR_UPSTREAM_UNAVAILABLE (requireUpstreams),
 *   SWY_ERR_CONFIG_INVALID, SWY_ERR_TELEMETRY_CONFIG;
 *   SWY_ERR_ADMISSION_SHUTTING_DOWN when `opts.signal` aborted before it listened (what started is stopped)
 */
export async function startGatewayFromConfig(config: FrozenConfig, logger?: Logger, opts: AssembleOptions = {}): Promise<Gateway> {
  const { listMounts } = await import('./config/load.js');
  checkOpenListener(config.listen.host, authMounts(config, listMounts(config)), opts.allowUnauthenticated ?? false);
  const log = logger ?? opts.log ?? createLogger(config.logLevel);
  // A port in use fails the start now, before any upstream is started (the listener binds after
  // their first attempts; docs/operations.md, "Start-up"); the admin listener's too, before the
  // core is assembled, so that its failure is not preceded by a `shutting down` line.
  await checkListenable(config.listen.host, config.listen.port);
  if (opts.operations && config.admin !== false) await checkListenable(config.admin.host, config.admin.port, 'admin listener');
  // Created before the gateway, so that metrics see every upstream's first state.
  const ops = opts.operations ? await (await import('./ops.js')).prepareOperations({ config, log, env: opts.env ?? {}, version: VERSION }) : undefined;
  let core: GatewayCore;
  let http: HttpTransport | undefined;
  let admin: Gateway['admin'];
  // The listener's origin once it is bound; before, the configured one (its port may be 0 then).
  const originNow = (): string => {
    const a = http?.address() ?? { host: config.listen.host, port: config.listen.port };
    return `http://${authority(a.host, a.port)}`;
  };
  const withUrls = () => {
    const origin = originNow();
    return core.mounts.map((m) => ({ ...m, url: `${origin}${m.path}` }));
  };
  try {
    core = await assemble(config, {
      ...opts,
      log,
      observers: [...(ops?.observers ?? []), ...(opts.observers ?? [])],
      interceptors: [...(opts.interceptors ?? []), ...(ops?.interceptors ?? [])],
    });
    if (ops) {
      // The admin listener opens before the upstreams' first attempts, which may take up to
      // upstreamStartTimeoutMs (about 16 s for an HTTP upstream that accepts and never answers):
      // meanwhile /healthz answers 200 and /readyz 503 with why (`not listening`, `upstream NAME is
      // starting`), so that a probe can tell a slow start from a dead process. The mounts'
      // listener opens after the attempts, as before (docs/operations.md, "Upstream health").
      const view: OperatedGateway = {
        get config() {
          return core.config;
        },
        get mounts() {
          return withUrls();
        },
        supervised: core.supervised,
        get draining() {
          return core.draining;
        },
        get listening() {
          return http !== undefined;
        },
        cluster: core.cluster,
      };
      try {
        admin = await ops.attach(view);
      } catch (err) {
        await core.close({ failedStart: true });
        throw err;
      }
    }
    // Held: an upstream that failed reconnects at once, but is said to be served without only once the listener is bound.
    await startUnlessAborted(core, opts.signal);
  } catch (err) {
    await ops?.close();
    throw err;
  }
  try {
    http = await startHttpTransport({ ...core.routes, table: core.table, host: config.listen.host, port: config.listen.port });
  } catch (err) {
    // A port taken since checkListenable tried it: a failed start, said once by the caller, not
    // the stop of a gateway that served (docs/operations.md, "Start-up").
    await core.close({ failedStart: true });
    await ops?.close();
    throw err;
  }
  const listener = http;
  if (opts.signal?.aborted) {
    await core.close({ signal: signalName(opts.signal) });
    await listener.close();
    await ops?.close();
    log.info({}, Lines.stopped);
    throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'the start was aborted' });
  }
  // A bound above the descriptor limit does not apply: connections past the limit are reset unread with nothing logged.
  const short = descriptorShortfall(config.limits.maxConnections);
  if (short) log.warn({ maxConnections: config.limits.maxConnections, ...short }, Lines.descriptorLimit);
  const origin = originNow();
  let closing: Promise<void> | undefined;
  // Getters, not copies: a reload changes the mounts, a reconnect the upstream instances.
  const gw: Gateway = {
    get config() {
      return core.config;
    },
    log: core.log,
    get mounts() {
      return withUrls();
    },
    upstreams: core.upstreams,
    supervised: core.supervised,
    table: core.table,
    get draining() {
      return core.draining;
    },
    async reload(next) {
      // A reload may not open a mount on a network address either (nor drop the top-level `auth` there).
      checkOpenListener(config.listen.host, authMounts(next, listMounts(next)), opts.allowUnauthenticated ?? false);
      return await core.reload(next);
    },
    cluster: core.cluster,
    routes: core.routes,
    fetchIdentify: core.fetchIdentify,
    fetchCredential: core.fetchCredential,
    fetchMetadata: core.fetchMetadata,
    start: () => core.start(),
    peer: (write, identity, name) => core.peer(write, identity, name),
    http: listener,
    get url() {
      return `${origin}${core.mounts[0].path}`;
    },
    get urls() {
      return core.mounts.map((m) => `${origin}${m.path}`);
    },
    get executor() {
      return core.mounts[0].executor;
    },
    get upstream() {
      return core.mounts[0].upstream;
    },
    get registry() {
      return core.mounts[0].registry;
    },
    listening: true,
    get admin() {
      return admin;
    },
    close(o) {
      closing ??= (async () => {
        // /readyz is 503 from here on (core.draining), before anything drains.
        await core.close(o);
        await listener.close();
        await ops?.close();
        core.log.info({}, Lines.stopped);
      })();
      return closing;
    },
  };
  core.serve();
  return gw;
}

/** The abort reason of `signal` when it names a signal (a string), for the `shutting down` line. */
function signalName(signal: AbortSignal): string | undefined {
  return typeof signal.reason === 'string' ? signal.reason : undefined;
}

/**
 * `core.start({ hold: true })`, stopped by `signal`: an abort while the upstreams make their first
 * attempts closes the core at once (which ends those attempts and stops what started), and the
 * start then rejects, whatever the attempts came to.
 * @throws SwitchyardError SWY_ERR_ADMISSION_SHUTTING_DOWN when `signal` aborted (the core is closed);
 *   what `core.start` throws otherwise
 */
async function startUnlessAborted(core: GatewayCore, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return void (await core.start({ hold: true }));
  const onAbort = () => void core.close({ signal: signalName(signal) });
  // Aborted already (while the operations or the core were prepared): nothing is started at all.
  if (signal.aborted) onAbort();
  else {
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await core.start({ hold: true });
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
  if (signal.aborted) {
    await core.close();
    core.log.info({}, Lines.stopped);
    throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'the start was aborted' });
  }
}

/**
 * Starts a gateway from options (the CLI's flags, or a test's): they become a raw config
 * ({@link configFromOptions}), validated like a file, then {@link startGatewayFromConfig}.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID, SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE
 */
export async function startGateway(options: Partial<GatewayOptions> = {}, logger?: Logger, opts: AssembleOptions = {}): Promise<Gateway> {
  const { validateConfig } = await import('./config/load.js');
  const config = validateConfig(configFromOptions(options), 'options', { expandEnv: false, writtenAs: 'options' });
  return startGatewayFromConfig(config, logger, opts);
}
