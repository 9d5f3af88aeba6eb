// The composition root: builds upstreams, one core and dialect registry per mount, and the listener.

import { createRegistry, type DialectId, type DialectRegistry } from '../dialects/index.js';
import { Executor } from './core/executor.js';
import { DEFAULT_LIMITS, type Limits } from './core/limits.js';
import { Router } from './core/router.js';
import type { Upstream } from './core/upstream.js';
import { MODERN_REVISION } from './core/versions.js';
import { createLogger, type Logger } from './log/logger.js';
import { Lines } from './log/lines.js';
import { startHttpTransport, type HttpTransport } from './transports/http.js';
import { createDemoUpstream } from './upstreams/demo/index.js';
import { createStdioUpstream } from './upstreams/stdio/index.js';
import type { HttpEra } from './upstreams/http/index.js';
import type { EraClients } from './core/era.js';
import { statelessClient } from '../dialects/2026-07-28/client.js';
import { sessionClient } from '../dialects/2025-03-26/client.js';
import { createHttpSseClient } from '../dialects/2024-11-05/client.js';
import { HeldCalls } from './core/calls.js';
import { SwitchyardError } from './core/errors.js';
import type { DialectSwitches, FrozenConfig } from './config/load.js';
import { createAggregateUpstream } from './upstreams/aggregate.js';
import { createHash } from 'node:crypto';
import { VERSION } from './version.js';

/** Everything needed to start a gateway. Defaults: see docs/config.md. */
export interface GatewayOptions {
  /** Interface to bind (default 127.0.0.1). */
  host: string;
  /** TCP port (default 7600; 0 picks a free one). */
  port: number;
  /** MCP endpoint path (default /mcp). */
  path: string;
  /** HTTP+SSE stream path (default /sse). */
  legacySsePath: string;
  /** HTTP+SSE POST path (default /messages). */
  legacyMessagePath: string;
  /** Command line of a stdio MCP server; the embedded demo when undefined (and no `upstreamUrl`). */
  stdio: string | undefined;
  /** URL of an HTTP MCP server of any era (exclusive with `stdio`). */
  upstreamUrl?: string;
  /** Its era: `auto` (default) probes. */
  upstreamEra?: HttpEra;
  /** Stateful upstreams: one upstream session per client session (default) or one shared. */
  isolation?: 'per-session' | 'shared';
  /** Headers sent to the HTTP upstream. */
  upstreamHeaders?: Record<string, string>;
  /** HMAC key for `requestState` of held calls (random at start when undefined). */
  requestStateKey?: string;
  /** Strict mode: validate client messages both ways against their era's schema (`log`), and refuse invalid ones (`reject`). Off when undefined. */
  strict?: 'log' | 'reject';
  /** Dialects to serve (an allowlist); 2024-11-05 only when listed. */
  dialects: readonly DialectId[];
  /** Hosts an Origin may name. */
  allowedOrigins: readonly string[];
  /** When non-empty, Host must be one of these. */
  allowedHosts: readonly string[];
  /** pino level. */
  logLevel: string;
  /** Bounds. */
  limits: Limits;
}

/** Default options: embedded demo on 127.0.0.1:7600/mcp, 2025 and 2026 dialects. */
export const DEFAULT_OPTIONS: Readonly<GatewayOptions> = Object.freeze({
  host: '127.0.0.1',
  port: 7600,
  path: '/mcp',
  legacySsePath: '/sse',
  legacyMessagePath: '/messages',
  stdio: undefined,
  dialects: ['2026-07-28', '2025-03-26'] as DialectId[],
  allowedOrigins: ['localhost', '127.0.0.1', '[::1]'],
  allowedHosts: [],
  logLevel: 'info',
  limits: DEFAULT_LIMITS,
});

/** One served path: its upstream, core and dialects. */
export interface GatewayMount {
  /** Upstream name (config key), `default` for flag-configured gateways, `aggregate` for the aggregate mount. */
  readonly name: string;
  /** `http://host:port/path`. */
  readonly url: string;
  readonly upstream: Upstream;
  readonly executor: Executor;
  readonly registry: DialectRegistry;
}

/** A running gateway. */
export interface Gateway {
  readonly http: HttpTransport;
  /** The first mount's upstream, executor and registry (the only mount without a config file). */
  readonly upstream: Upstream;
  readonly registry: DialectRegistry;
  readonly executor: Executor;
  readonly log: Logger;
  /** The first mount's URL, `http://host:port/path`. */
  readonly url: string;
  /** Every mount, in config order (upstreams, then the aggregate). */
  readonly mounts: readonly GatewayMount[];
  /**
   * Graceful stop: refuse new work, let in-flight requests finish within
   * `limits.shutdownGraceMs`, close streams and sessions, stop the listener and upstreams.
   */
  close(): Promise<void>;
}

/** What one mount is built from. */
interface MountSpec {
  name: string;
  path: string;
  ssePath: string;
  messagesPath: string;
  dialects: readonly DialectId[];
  limits: Limits;
  upstream: Upstream;
}

/** Listener-wide settings. */
interface ListenSpec {
  host: string;
  port: number;
  allowedOrigins: readonly string[];
  allowedHosts: readonly string[];
  limits: Limits;
}

/**
 * Starts upstreams (owned: closed on failure and on close), builds one core and registry per
 * mount, and listens.
 */
async function assemble(
  listen: ListenSpec,
  owned: readonly Upstream[],
  specs: readonly MountSpec[],
  held: HeldCalls,
  log: Logger,
  strictMode?: 'log' | 'reject',
): Promise<Gateway> {
  // Loaded only when asked for: ajv and the schemas cost start-up time (issue 5, target 6).
  const strict = strictMode ? (await import('./strict/validator.js')).createStrictValidator({ mode: strictMode, log }) : undefined;
  try {
    await Promise.all(
      owned.map(async (u) => {
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
    for (const s of specs) if (!owned.includes(s.upstream)) await s.upstream.start();
  } catch (err) {
    await Promise.all(owned.map((u) => u.close().catch(() => {})));
    throw err;
  }
  const built = specs.map((s) => {
    const router = new Router(s.upstream, [MODERN_REVISION]);
    s.upstream.subscribe({ toolsListChanged: true }, () => router.invalidateTools());
    const executor = new Executor(router, s.limits);
    const registry = createRegistry(
      { executor, limits: s.limits, log, mcpPath: s.path, legacyMessagePath: s.messagesPath, modernRevisions: [MODERN_REVISION], strict },
      { enabled: s.dialects, modern: { cache: { ttlMs: 0, cacheScope: 'private' } } },
    );
    return { spec: s, executor, registry };
  });
  let http: HttpTransport;
  try {
    http = await startHttpTransport({
      host: listen.host,
      port: listen.port,
      mounts: built.map((b) => ({
        path: b.spec.path,
        legacySsePath: b.spec.ssePath,
        legacyMessagePath: b.spec.messagesPath,
        router: b.registry,
        maxBodyBytes: b.spec.limits.maxBodyBytes,
      })),
      limits: listen.limits,
      origin: { allowedOrigins: listen.allowedOrigins, allowedHosts: listen.allowedHosts },
      log,
    });
  } catch (err) {
    await Promise.all(owned.map((u) => u.close().catch(() => {})));
    throw err;
  }
  const addr = http.address();
  const hostForUrl = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  const mounts: GatewayMount[] = built.map((b) => ({
    name: b.spec.name,
    url: `http://${hostForUrl}:${addr.port}${b.spec.path}`,
    upstream: b.spec.upstream,
    executor: b.executor,
    registry: b.registry,
  }));
  let closing: Promise<void> | undefined;
  return {
    http,
    upstream: mounts[0].upstream,
    registry: mounts[0].registry,
    executor: mounts[0].executor,
    log,
    url: mounts[0].url,
    mounts,
    close() {
      closing ??= (async () => {
        log.info({ inFlight: mounts.reduce((n, m) => n + m.executor.inFlight, 0) }, Lines.shuttingDown);
        await Promise.all(mounts.map((m) => m.executor.close(listen.limits.shutdownGraceMs)));
        await Promise.all(mounts.map((m) => m.registry.close()));
        await http.close();
        held.clear();
        await Promise.all(owned.map((u) => u.close()));
        log.info({}, Lines.stopped);
      })();
      return closing;
    },
  };
}

/** The upstream flags name: an HTTP server, a stdio child, or the embedded demo. */
export type UpstreamChoice = Partial<Pick<GatewayOptions, 'stdio' | 'upstreamUrl' | 'upstreamEra' | 'isolation' | 'upstreamHeaders'>> &
  Pick<GatewayOptions, 'limits'>;

/** The era clients every upstream is built with: what Switchyard sends an upstream of each era (dialects/<era>/client.ts). */
export function eraClients(): EraClients {
  return { stateless: statelessClient, sessions: sessionClient, httpSse: createHttpSseClient(sessionClient) };
}

/**
 * Builds (does not start) the upstream `o` names: `upstreamUrl` ⇒ HTTP (probed unless an era is
 * given), `stdio` ⇒ a child process, neither ⇒ the embedded demo.
 */
export async function createUpstream(o: UpstreamChoice, log: Logger, held: HeldCalls): Promise<Upstream> {
  const clientInfo = { name: 'switchyard', version: VERSION };
  if (o.upstreamUrl) {
    // Loaded only for HTTP upstreams: undici costs start-up time (issue 5, target 6).
    const { createHttpUpstream } = await import('./upstreams/http/index.js');
    return createHttpUpstream({
      name: 'http',
      url: o.upstreamUrl,
      era: o.upstreamEra ?? 'auto',
      isolation: o.isolation ?? 'per-session',
      headers: o.upstreamHeaders,
      log,
      limits: o.limits,
      clientInfo,
      held,
      eras: eraClients(),
    });
  }
  if (o.stdio) return createStdioUpstream({ command: o.stdio, log, limits: o.limits, clientInfo, held, eras: eraClients(), era: o.upstreamEra ?? 'auto' });
  return createDemoUpstream({ version: VERSION });
}

/** Held calls with a key derived from `key` (SHA-256), or a random one. */
export function heldCalls(key: string | undefined, limits: Limits): HeldCalls {
  return new HeldCalls(key ? createHash('sha256').update(key).digest() : undefined, 1024, limits.clientRequestTimeoutMs);
}

/**
 * Starts a gateway from flags: one upstream (the demo, a stdio child, or an HTTP server) on
 * one path.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE
 */
export async function startGateway(partial: Partial<GatewayOptions> = {}, logger?: Logger): Promise<Gateway> {
  const opts: GatewayOptions = { ...DEFAULT_OPTIONS, ...partial, limits: { ...DEFAULT_LIMITS, ...partial.limits } };
  const log = logger ?? createLogger(opts.logLevel);
  const held = heldCalls(opts.requestStateKey, opts.limits);
  const upstream = await createUpstream(opts, log, held);
  return assemble(
    opts,
    [upstream],
    [
      {
        name: 'default',
        path: opts.path,
        ssePath: opts.legacySsePath,
        messagesPath: opts.legacyMessagePath,
        dialects: opts.dialects,
        limits: opts.limits,
        upstream,
      },
    ],
    held,
    log,
    opts.strict,
  );
}

function dialectIds(d: DialectSwitches): DialectId[] {
  const out: DialectId[] = [];
  if (d.modern) out.push('2026-07-28');
  if (d.streamable) out.push('2025-03-26');
  if (d.legacySse) out.push('2024-11-05');
  return out;
}

/**
 * Starts a gateway from a validated config file: every upstream on its own mount
 * (`/NAME/mcp`, and `/NAME/sse` + `/NAME/messages` when it serves 2024-11-05), plus the
 * aggregate mount when configured.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE, SWY_ERR_CONFIG_INVALID
 */
export async function startGatewayFromConfig(config: FrozenConfig, logger?: Logger): Promise<Gateway> {
  const log = logger ?? createLogger(config.logLevel);
  const clientInfo = { name: 'switchyard', version: VERSION };
  const held = heldCalls(config.requestStateKey, config.limits);
  const { listMounts } = await import('./config/load.js');
  const { createHttpUpstream } = await import('./upstreams/http/index.js');
  const eras = eraClients();
  const upstreams = new Map<string, Upstream>();
  for (const [name, u] of Object.entries(config.upstreams)) {
    upstreams.set(
      name,
      u.transport === 'stdio'
        ? createStdioUpstream({
            command: u.command,
            argv: [u.command, ...u.args],
            env: { ...u.env },
            cwd: u.cwd,
            name,
            log,
            limits: u.limits,
            clientInfo,
            held,
            eras,
          })
        : createHttpUpstream({
            name,
            url: u.url,
            headers: { ...u.headers },
            era: u.era,
            isolation: u.isolation,
            forwardAuthorization: u.forwardAuthorization,
            log,
            limits: u.limits,
            clientInfo,
            held,
            eras,
          }),
    );
  }
  const specs: MountSpec[] = listMounts(config).map((m) => {
    const upstream =
      m.upstream !== undefined
        ? upstreams.get(m.upstream)!
        : createAggregateUpstream(new Map(m.upstreams.map((n) => [n, upstreams.get(n)!])), config.aggregate?.separator ?? '__', VERSION);
    const base = m.mcpPath.replace(/\/[^/]*$/, '');
    return {
      name: m.upstream ?? 'aggregate',
      path: m.mcpPath,
      ssePath: m.ssePath ?? `${base}/sse`,
      messagesPath: m.messagesPath ?? `${base}/messages`,
      dialects: dialectIds(m.dialects),
      limits: { ...m.limits },
      upstream,
    };
  });
  return assemble(
    { ...config.listen, allowedOrigins: config.allowedOrigins, allowedHosts: config.allowedHosts, limits: { ...config.limits } },
    [...upstreams.values()],
    specs,
    held,
    log,
  );
}
