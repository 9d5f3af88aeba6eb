// The composition root: builds the upstream, the core, the dialect registry and the listener.

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
import { createStdioUpstream } from './upstreams/stdio.js';
import { createHttpUpstream, type HttpEra } from './upstreams/http.js';
import { HeldCalls } from './core/calls.js';
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

/** A running gateway. */
export interface Gateway {
  readonly http: HttpTransport;
  readonly upstream: Upstream;
  readonly registry: DialectRegistry;
  readonly executor: Executor;
  readonly log: Logger;
  /** `http://host:port/path`. */
  readonly url: string;
  /**
   * Graceful stop: refuse new work, let in-flight requests finish within
   * `limits.shutdownGraceMs`, close streams and sessions, stop the listener and upstream.
   */
  close(): Promise<void>;
}

/**
 * Starts a gateway.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE
 */
export async function startGateway(partial: Partial<GatewayOptions> = {}, logger?: Logger): Promise<Gateway> {
  const opts: GatewayOptions = { ...DEFAULT_OPTIONS, ...partial, limits: { ...DEFAULT_LIMITS, ...partial.limits } };
  const log = logger ?? createLogger(opts.logLevel);
  const clientInfo = { name: 'switchyard', version: VERSION };
  const held = new HeldCalls(
    opts.requestStateKey ? createHash('sha256').update(opts.requestStateKey).digest() : undefined,
    1024,
    opts.limits.clientRequestTimeoutMs,
  );
  const upstream = opts.upstreamUrl
    ? createHttpUpstream({
        name: 'http',
        url: opts.upstreamUrl,
        era: opts.upstreamEra ?? 'auto',
        isolation: opts.isolation ?? 'per-session',
        headers: opts.upstreamHeaders,
        log,
        limits: opts.limits,
        clientInfo,
        held,
      })
    : opts.stdio
      ? createStdioUpstream({ command: opts.stdio, log, limits: opts.limits, clientInfo, held })
      : createDemoUpstream({ version: VERSION });
  await upstream.start();
  log.info({ upstream: upstream.name, revision: upstream.describe().upstreamRevision }, Lines.upstreamReady);
  const router = new Router(upstream, [MODERN_REVISION]);
  upstream.subscribe({ toolsListChanged: true }, () => router.invalidateTools());
  const executor = new Executor(router, opts.limits);
  const registry = createRegistry(
    { executor, limits: opts.limits, log, mcpPath: opts.path, legacyMessagePath: opts.legacyMessagePath, modernRevisions: [MODERN_REVISION] },
    { enabled: opts.dialects, modern: { cache: { ttlMs: 0, cacheScope: 'private' } } },
  );
  let http: HttpTransport;
  try {
    http = await startHttpTransport({
      host: opts.host,
      port: opts.port,
      path: opts.path,
      legacySsePath: opts.legacySsePath,
      legacyMessagePath: opts.legacyMessagePath,
      limits: opts.limits,
      origin: { allowedOrigins: opts.allowedOrigins, allowedHosts: opts.allowedHosts },
      router: registry,
      log,
    });
  } catch (err) {
    await upstream.close();
    throw err;
  }
  const addr = http.address();
  const hostForUrl = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  let closing: Promise<void> | undefined;
  return {
    http,
    upstream,
    registry,
    executor,
    log,
    url: `http://${hostForUrl}:${addr.port}${opts.path}`,
    close() {
      closing ??= (async () => {
        log.info({ inFlight: executor.inFlight }, Lines.shuttingDown);
        await executor.close(opts.limits.shutdownGraceMs);
        await registry.close();
        await http.close();
        held.clear();
        await upstream.close();
        log.info({}, Lines.stopped);
      })();
      return closing;
    },
  };
}
