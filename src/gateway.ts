// The one composition root: a validated config becomes upstreams, one executor and dialect
// registry per mount, and the HTTP routes; the standalone listener, the stdio front door, the
// library entry points and `emulate` are all built here.

import { createMessagePeer, createRegistry, type DialectId, type DialectRegistry } from '../dialects/index.js';
import type { HeldCalls } from './core/calls.js';
import { createReplicas, type GatewayCluster, type ReplicasOptions } from './cluster/replicas.js';
import { SwitchyardError } from './core/errors.js';
import type { MessagePeer } from './core/exchange.js';
import { Executor, guardUpstream } from './core/executor.js';
import { createListCache, type ListCache } from './core/list-cache.js';
import type { Identity } from './core/identity.js';
import type { Interceptor, NotificationFilter } from './core/interceptor.js';
import type { Limits } from './core/limits.js';
import type { RpcMessage, RpcResponse } from './core/message.js';
import type { MessageValidator } from './core/strict.js';
import type { Upstream } from './core/upstream.js';
import type { DialectSwitches, FrozenConfig, UpstreamConfig } from './config/load.js';
import { configFromOptions, type GatewayOptions } from './config/options.js';
import { createLogger, type Logger } from './log/logger.js';
import { Lines } from './log/lines.js';
import { startHttpTransport, type ExchangeWrapper, type HttpMount, type HttpTransport, type RoutesOptions } from './transports/http.js';
import { createRequestPublicUrl } from './transports/request-url.js';
import { createAggregateUpstream, memberUri } from './upstreams/aggregate.js';
import { createDemoUpstream } from './upstreams/demo/index.js';
import { createStdioUpstream } from './upstreams/stdio/index.js';
import type { EraClients } from './core/era.js';
import { statelessClient } from '../dialects/2026-07-28/client.js';
import { sessionClient } from '../dialects/2025-03-26/client.js';
import { createHttpSseClient } from '../dialects/2024-11-05/client.js';
import { VERSION } from './version.js';
import { checkOpenListener, isLoopbackHost, type AuthMount } from './auth/open-listener.js';
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
  /** Redis and bus timeouts of the cluster (tests shorten the reconnect backoff). */
  clusterOptions?: Pick<ReplicasOptions, 'redisOptions' | 'busOptions'>;
}

/** A gateway assembled from one config: built, not yet listening. */
export interface GatewayCore {
  readonly config: FrozenConfig;
  readonly log: Logger;
  /** Every mount, in config order (upstreams, then the aggregate). */
  readonly mounts: readonly GatewayMount[];
  /** The upstreams themselves (not wrapped by the interceptor chain), by config name. */
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** Options of the HTTP routes plugin for these mounts. */
  readonly routes: RoutesOptions;
  /** Replicas: shared buckets for the rate limiter, Redis state and readiness reasons for `/readyz` (inert without `cluster`). */
  readonly cluster: GatewayCluster;
  /** Starts every upstream (once). @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE naming the upstream */
  start(): Promise<void>;
  /** A message peer on mount `name` (default: the first) for a message channel such as stdio. */
  peer(write: (msg: RpcMessage | RpcResponse[]) => boolean, identity: Identity | null, name?: string): MessagePeer;
  /**
   * Graceful stop: refuse new work, let in-flight requests finish within `shutdownGraceMs`, close
   * streams and sessions, stop the upstreams. The HTTP listener is the caller's to close.
   */
  close(): Promise<void>;
}

/** A running standalone gateway. */
export interface Gateway extends GatewayCore {
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
  /** Stops the listener after the core (see GatewayCore.close). */
  close(): Promise<void>;
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

/** Drops an upstream's cached lists when it announces a change (2025-11-25 server/tools#list-changed-notification). */
function watchListChanges(name: string, upstream: Upstream, cache: ListCache): void {
  const methodsOf: Record<string, string[]> = {
    'notifications/tools/list_changed': ['tools/list'],
    'notifications/prompts/list_changed': ['prompts/list'],
    'notifications/resources/list_changed': ['resources/list', 'resources/templates/list'],
  };
  upstream.subscribe({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }, (n) => {
    for (const m of methodsOf[n.method] ?? []) cache.invalidate(name, m);
  });
}

const CLIENT_INFO = { name: 'switchyard', version: VERSION };

/** The era clients upstream connectors speak through (injected: upstreams never import dialects/). */
export function eraClients(): EraClients {
  return { stateless: statelessClient, sessions: sessionClient, httpSse: createHttpSseClient(sessionClient) };
}

/** Builds (does not start) the upstream one config entry names. */
async function createUpstream(
  u: UpstreamConfig,
  log: Logger,
  held: HeldCalls,
  eras: EraClients,
  demoKey?: Buffer,
  credentials?: OutboundCredentials,
): Promise<Upstream> {
  switch (u.transport) {
    case 'embedded':
      return createDemoUpstream({ version: VERSION, stateKey: demoKey });
    case 'stdio':
      return createStdioUpstream({
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
      });
    case 'http': {
      // Loaded only for HTTP upstreams: undici costs start-up time.
      const { createHttpUpstream } = await import('./upstreams/http/index.js');
      return createHttpUpstream({
        name: u.name,
        url: u.url,
        headers: { ...u.headers },
        era: u.era,
        isolation: u.isolation,
        forwardAuthorization: u.forwardAuthorization,
        ...(credentials ? { credentials } : {}),
        log,
        limits: { ...u.limits },
        clientInfo: CLIENT_INFO,
        held,
        eras,
      });
    }
  }
}

/** Every mount with its effective `auth`: the upstream's own, else the top-level one (the aggregate mount: the top-level one). */
export function authMounts(config: FrozenConfig, mounts: ReadonlyArray<{ upstream: string | undefined; mcpPath: string }>): AuthMount[] {
  return mounts.map((m) => ({
    name: m.upstream ?? 'aggregate',
    path: m.mcpPath,
    auth: (m.upstream !== undefined ? config.upstreams[m.upstream]?.auth : undefined) ?? config.auth,
  }));
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
  const cluster = await createReplicas({
    cluster: config.cluster,
    requestStateKey: config.requestStateKey,
    limits: config.limits,
    log,
    ...opts.clusterOptions,
  });
  const held = cluster.held;
  // The list cache is innermost: every interceptor that filters lists per caller sits outside it.
  const listCache = createListCache({
    ttlMs: config.listCache.ttlMs,
    maxAgeMs: config.listCache.maxAgeMs,
    maxEntries: config.listCache.maxEntries,
    announces: (name, method) => announcesListChanges(upstreams.get(name), method),
    // A list may depend on who asks when the caller's own token reaches the upstream.
    bypass: (name) => {
      const u = config.upstreams[name];
      // Token exchange likewise gives the upstream a token per caller (RFC 8693 subject_token).
      return (
        config.listCache.maxAgeMs === 0 ||
        (u?.transport === 'http' && (u.forwardAuthorization || (u.credentials !== undefined && 'tokenExchange' in u.credentials)))
      );
    },
  });
  const interceptors: Interceptor[] = [listCache.interceptor, ...(opts.interceptors ?? [])];
  const notificationFilters: NotificationFilter[] = [];
  // Loaded only when asked for: ajv and the schemas cost start-up time.
  const strict: MessageValidator | undefined =
    config.strict !== 'off' ? (await import('./strict/validator.js')).createStrictValidator({ mode: config.strict, log }) : undefined;
  const { listMounts } = await import('./config/load.js');

  const listed = listMounts(config);
  const mountAuth = authMounts(config, listed);
  const ups = Object.values(config.upstreams);
  // Loaded only when asked for: jose and the OAuth code cost start-up time.
  const authWire =
    mountAuth.some((m) => m.auth !== undefined) || ups.some((u) => u.transport === 'http' && (u.credentials !== undefined || u.forwardAuthorization))
      ? await import('./auth/wire.js')
      : undefined;
  authWire?.warnTokenPassthrough(
    ups.map((u) => ({ name: u.name, forwardAuthorization: u.transport === 'http' && u.forwardAuthorization })),
    log,
  );

  const upstreams = new Map<string, Upstream>();
  const eras = eraClients();
  const demoKey = cluster.derivedKey('demo-request-state');
  for (const u of ups) {
    const credentials = u.transport === 'http' && u.credentials ? authWire!.createUpstreamCredentials(u.credentials, { log, upstream: u.name }) : undefined;
    upstreams.set(u.name, await createUpstream(u, log, held, eras, demoKey, credentials));
  }
  // Curation, policy, rate limits and argument validation per upstream, inside the embedder's interceptors and outside the list cache.
  const watchers: Array<{ close(): void }> = [];
  const { createPolicyWiring } = await import('./policy/wire.js');
  const policy = await createPolicyWiring(config, {
    log,
    watchTools: (name, changed) => {
      const u = upstreams.get(name);
      const tools = (u?.describe().capabilities as { tools?: { listChanged?: boolean } } | undefined)?.tools;
      if (!u || !tools?.listChanged) return;
      try {
        watchers.push(u.subscribe({ toolsListChanged: true }, (n) => n.method === 'notifications/tools/list_changed' && changed()));
      } catch (err) {
        log.warn({ upstream: name, err }, 'tool list changes not watched');
      }
    },
  });
  // The list cache stays innermost, below the per-caller filters, so that one cached list serves every caller.
  const [cache, ...outer] = interceptors;
  const guarded = new Map<string, Upstream>([...upstreams].map(([n, u]) => [n, guardUpstream(u, [cache, ...policy.interceptorsFor(n), ...outer], held, n)]));

  const mounts: GatewayMount[] = listed.map((m, i) => {
    const upstream =
      m.upstream !== undefined
        ? guarded.get(m.upstream)!
        : createAggregateUpstream(new Map(m.upstreams.map((n) => [n, guarded.get(n)!])), config.aggregate?.separator ?? '__', VERSION);
    const name = m.upstream ?? 'aggregate';
    const limits = { ...m.limits };
    const base = m.mcpPath.replace(/\/[^/]*$/, '');
    const messagesPath = (i === 0 ? opts.httpSsePaths?.messagesPath : undefined) ?? m.messagesPath ?? `${base}/messages`;
    const ssePath = (i === 0 ? opts.httpSsePaths?.ssePath : undefined) ?? m.ssePath ?? `${base}/sse`;
    const filters = [...policy.notificationFiltersFor(m.upstream !== undefined ? { upstream: m.upstream } : { member: memberUri }), ...notificationFilters];
    const executor = new Executor({ mount: name, upstream, limits, notificationFilters: filters });
    const registry = createRegistry(
      { executor, limits, log, strict, messagePath: messagesPath, cache: config.cache, replicas: cluster.forMount(name) },
      { enabled: dialectIds(m.dialects) },
    );
    return { name, path: m.mcpPath, ssePath, messagesPath, upstream, executor, registry, limits };
  });

  const httpMounts: HttpMount[] = mounts.map((m) => ({
    name: m.name,
    path: m.path,
    ssePath: m.ssePath,
    messagesPath: m.messagesPath,
    router: m.registry,
    maxBodyBytes: m.limits.maxBodyBytes,
  }));

  // Authentication before MCP on every route of every mount that has `auth`, and its RFC 9728 metadata.
  const frontDoor = mountAuth.some((m) => m.auth !== undefined)
    ? authWire!.createFrontDoorAuth({ mounts: mountAuth, log, baseUrl: (req) => publicUrl(req, '', false) })
    : undefined;
  if (
    frontDoor &&
    frontDoor.protectedPaths.length > 0 &&
    !isLoopbackHost(config.listen.host) &&
    config.allowedHosts.length === 0 &&
    config.publicBaseUrl === undefined
  )
    log.warn({ host: config.listen.host }, 'token audiences follow the Host header: set allowedHosts so that only your own names are accepted');

  let starting: Promise<void> | undefined;
  const start = () =>
    (starting ??= (async () => {
      try {
        await Promise.all(
          [...upstreams.values()].map(async (u) => {
            try {
              await u.start();
            } catch (err) {
              if (err instanceof SwitchyardError)
                throw new SwitchyardError(err.code, { message: `${err.message} (upstream ${u.name})`, cause: err.cause, data: err.data });
              throw err;
            }
            log.info({ upstream: u.name, revision: u.describe().upstreamRevision }, Lines.upstreamReady);
          }),
        );
        for (const m of mounts) if (m.name === 'aggregate') await m.upstream.start();
        for (const [name, u] of upstreams) watchListChanges(name, u, listCache);
      } catch (err) {
        await Promise.all([...upstreams.values()].map((u) => u.close().catch(() => {})));
        throw err;
      }
    })());

  let closing: Promise<void> | undefined;
  return {
    config,
    log,
    mounts,
    upstreams,
    cluster,
    routes: {
      mounts: httpMounts,
      limits: { ...config.limits },
      origin: { allowedOrigins: config.allowedOrigins, allowedHosts: config.allowedHosts },
      publicUrl,
      log,
      identify: opts.identify ?? frontDoor?.identify,
      wrappers: opts.wrappers,
      ...(frontDoor ? { plugins: [frontDoor.metadataRoutes] } : {}),
    },
    start,
    peer(write, identity, name) {
      const m = name === undefined ? mounts[0] : mounts.find((x) => x.name === name);
      if (!m) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `no mount named ${name}` });
      return createMessagePeer({ executor: m.executor, limits: m.limits, log, strict, cache: config.cache, identity, write });
    },
    close() {
      closing ??= (async () => {
        log.info({ inFlight: mounts.reduce((n, m) => n + m.executor.inFlight, 0) }, Lines.shuttingDown);
        await Promise.all(mounts.map((m) => m.executor.close(config.limits.shutdownGraceMs)));
        await Promise.all(mounts.map((m) => m.registry.close()));
        for (const w of watchers.splice(0)) w.close();
        held.clear();
        await Promise.all([...upstreams.values()].map((u) => u.close()));
        await cluster.close();
      })();
      return closing;
    },
  };
}

/**
 * Starts a standalone gateway from a validated config: assembles it, starts the upstreams, and
 * listens on `config.listen`. On a listener that is not loopback every mount needs an `auth`
 * (`none: true` counts) unless `opts.allowUnauthenticated`; that is checked before anything starts.
 * @throws SwitchyardError SWY_ERR_AUTH_OPEN_LISTENER, SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE, SWY_ERR_CONFIG_INVALID
 */
export async function startGatewayFromConfig(config: FrozenConfig, logger?: Logger, opts: AssembleOptions = {}): Promise<Gateway> {
  const { listMounts } = await import('./config/load.js');
  checkOpenListener(config.listen.host, authMounts(config, listMounts(config)), opts.allowUnauthenticated ?? false);
  const core = await assemble(config, { ...opts, log: logger ?? opts.log });
  await core.start();
  let http: HttpTransport;
  try {
    http = await startHttpTransport({ ...core.routes, host: config.listen.host, port: config.listen.port });
  } catch (err) {
    await core.close();
    throw err;
  }
  const addr = http.address();
  const hostForUrl = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  const urls = core.mounts.map((m) => `http://${hostForUrl}:${addr.port}${m.path}`);
  let closing: Promise<void> | undefined;
  return {
    ...core,
    mounts: core.mounts.map((m, i) => ({ ...m, url: urls[i] })),
    http,
    url: urls[0],
    urls,
    executor: core.mounts[0].executor,
    upstream: core.mounts[0].upstream,
    registry: core.mounts[0].registry,
    close() {
      closing ??= (async () => {
        await core.close();
        await http.close();
        core.log.info({}, Lines.stopped);
      })();
      return closing;
    },
  };
}

/**
 * Starts a gateway from options (the CLI's flags, or a test's): they become a raw config
 * ({@link configFromOptions}), validated like a file, then {@link startGatewayFromConfig}.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID, SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE
 */
export async function startGateway(options: Partial<GatewayOptions> = {}, logger?: Logger, opts: AssembleOptions = {}): Promise<Gateway> {
  const { validateConfig } = await import('./config/load.js');
  const config = validateConfig(configFromOptions(options), 'options', { expandEnv: false });
  return startGatewayFromConfig(config, logger, opts);
}
