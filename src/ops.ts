// The operational side of a standalone gateway: Prometheus metrics, OpenTelemetry tracing, the
// access log, the status recorder and the admin listener, all fed by the gateway's real state.

import type { AdminServer } from './admin/server.js';
import type { ClusterStatus, Readiness, StatusRecorder, StatusSource, UpstreamStatus } from './admin/status.js';
import type { FrozenConfig } from './config/load.js';
import type { Interceptor } from './core/interceptor.js';
import type { JsonObject } from './core/message.js';
import type { RequestContext } from './core/request.js';
import type { GatewayMount } from './gateway.js';
import type { Logger } from './log/logger.js';
import { createAccessLog, type AccessLog } from './telemetry/access-log.js';
import type { Metrics } from './telemetry/metrics.js';
import { createTracing, type Env, type Tracing } from './telemetry/tracing.js';
import type { SupervisedUpstream } from './upstreams/supervisor.js';

/** The parts of a running gateway the operational side reads (every call returns what holds now). */
export interface OperatedGateway {
  readonly config: FrozenConfig;
  readonly mounts: readonly (GatewayMount & { readonly url: string })[];
  readonly supervised: ReadonlyMap<string, SupervisedUpstream>;
  readonly draining: boolean;
  readonly listening: boolean;
  /** Replicas: why this one is not ready, or only degraded, on the cluster's account (both empty when alone or when Redis is up). */
  readonly cluster: {
    /** This replica's id and sealing key id; undefined without a `cluster` section. */
    readonly replicaId: string | undefined;
    readonly keyId: string | undefined;
    /** Redis state: `off` without `cluster.redis`; `writesRefused` while it is up but full. */
    status(): { redis: 'off' | 'up' | 'down'; writesRefused?: { readonly sinceMs: number } };
    notReady(): string[];
    degraded(): string[];
  };
}

/** Inputs of {@link prepareOperations}. */
export interface OperationsOptions {
  config: FrozenConfig;
  /** The gateway's logger; its level is read once (the access log is left out below it) and must not change while the gateway runs. */
  log: Logger;
  /** Where the tracer reads `OTEL_*` (the CLI passes the process environment). */
  env: Env;
  /** `service.version` of traces. */
  version: string;
}

/** The operational side, created before the gateway (so that it sees every upstream's first state) and attached to it once it listens. */
export interface Operations {
  /** Interceptors closest to the upstream (AssembleOptions.observers): names the upstreams listed, and tracing's client span. */
  readonly observers: readonly Interceptor[];
  /** Interceptors outermost on each upstream's calls (after AssembleOptions.interceptors): names its lists show clients after curation. */
  readonly interceptors: readonly Interceptor[];
  /** The Prometheus metrics; undefined with `config.admin` false (only the admin listener serves them). */
  readonly metrics: Metrics | undefined;
  readonly tracing: Tracing;
  /**
   * Starts the admin listener over `gateway` when `config.admin` is on.
   * @throws SwitchyardError SWY_ERR_LISTEN_FAILED
   */
  attach(gateway: OperatedGateway): Promise<AdminServer | undefined>;
  /** Closes the admin listener, flushes traces, unsubscribes everything. */
  close(): Promise<void>;
}

/** Tool and prompt names kept per upstream for the metric labels (later ones count as `_other`). */
const MAX_NAMES_PER_UPSTREAM = 1000;
/** Upstreams whose listed names are kept. */
const MAX_UPSTREAMS = 256;
/** Characters of a last error in a readiness reason. */
const MAX_REASON_ERROR_CHARS = 200;

/**
 * The names each upstream listed (`tools/list`, `prompts/list`), the only values the
 * `gen_ai_tool_name` / `gen_ai_prompt_name` labels may take; bounded per upstream and in upstreams.
 * `interceptor` sits innermost and learns the upstream's own names (the client series' values);
 * `shown` sits outermost and learns the names its lists show clients after curation (a renamed
 * tool's new name, which the server series names a call by), into the same set.
 */
function createNameBook(): { interceptor: Interceptor; shown: Interceptor; known: (upstream: string) => ReadonlySet<string> | undefined } {
  const book = new Map<string, Set<string>>();
  // Only lists are read; other requests pass straight through, without an async frame of their own.
  const interceptor: Interceptor = (next) => (ctx) => {
    const key = ctx.method === 'tools/list' ? 'tools' : ctx.method === 'prompts/list' ? 'prompts' : undefined;
    return key === undefined ? next(ctx) : next(ctx).then((result) => noted(ctx, key, result));
  };
  const noted = (ctx: RequestContext, key: 'tools' | 'prompts', result: JsonObject): JsonObject => {
    if (ctx.upstream !== undefined && Array.isArray(result[key])) {
      let names = book.get(ctx.upstream);
      if (!names && book.size < MAX_UPSTREAMS) book.set(ctx.upstream, (names = new Set()));
      for (const item of result[key] as JsonObject[]) {
        if (!names || names.size >= MAX_NAMES_PER_UPSTREAM) break;
        if (typeof item?.name === 'string') names.add(item.name);
      }
    }
    return result;
  };
  return { interceptor, shown: interceptor, known: (upstream) => book.get(upstream) };
}

/**
 * The StatusSource of a running gateway: upstreams from their supervisors, mounts with each
 * dialect's sessions and streams, readiness (listening, and every non-optional upstream up;
 * each that is not is a reason; a shared Redis that is down is `degraded`), draining from the
 * moment shutdown began.
 * @see docs/operations.md, "/readyz" and "/status.json"
 */
export function statusSourceOf(gw: OperatedGateway): StatusSource {
  const optional = (name: string) => gw.config.upstreams[name]?.optional === true;
  return {
    upstreams: () =>
      [...gw.supervised.values()].map((u): UpstreamStatus => {
        const out: UpstreamStatus = {
          name: u.name,
          era: u.revision ?? 'unknown',
          transport: u.transport,
          state: u.state === 'stopped' ? 'down' : u.state,
          inFlight: u.inFlight,
        };
        if (u.lastError !== undefined) out.lastError = u.lastError;
        if (u.serverInfo) {
          out.serverInfo = { name: String(u.serverInfo.name), version: String(u.serverInfo.version) };
          if (typeof u.serverInfo.title === 'string') out.serverInfo.title = u.serverInfo.title;
        }
        return out;
      }),
    mounts: () =>
      gw.mounts.map((m) => ({
        name: m.name,
        url: m.url,
        dialects: [...m.registry.dialects].map(([id, d]) => ({ id, sessions: d.sessionCount, streams: d.streamCount() })),
      })),
    ready(): Readiness {
      const reasons: string[] = [];
      if (!gw.listening) reasons.push('not listening');
      for (const u of gw.supervised.values()) {
        // An optional upstream is no reason, except while its first attempt holds the start back
        // (the MCP listener waits for every first attempt: docs/operations.md, "Start-up").
        if (u.state === 'up' || (optional(u.name) && (gw.listening || u.state !== 'starting'))) continue;
        const why = u.lastError !== undefined ? `: ${u.lastError.slice(0, MAX_REASON_ERROR_CHARS)}` : '';
        reasons.push(`upstream ${u.name} is ${u.state === 'stopped' ? 'down' : u.state}${why}`);
      }
      // Replicas: the shared Redis being down is `degraded`, not a reason, unless
      // `cluster.readinessRequiresRedis` (docs/scaling.md, "Readiness").
      reasons.push(...gw.cluster.notReady());
      return { ready: reasons.length === 0, reasons, degraded: gw.cluster.degraded() };
    },
    draining: () => gw.draining,
    cluster: () => clusterOf(gw),
  };
}

/** A replica's identity and Redis state for `/status.json` and `/metrics`; undefined without a `cluster` section. */
function clusterOf(gw: OperatedGateway): ClusterStatus | undefined {
  const { replicaId, keyId } = gw.cluster;
  if (replicaId === undefined || keyId === undefined) return undefined;
  const s = gw.cluster.status();
  return s.writesRefused
    ? { replicaId, keyId, redis: s.redis, writes: 'refused', writesRefusedAt: new Date(s.writesRefused.sinceMs).toISOString() }
    : { replicaId, keyId, redis: s.redis };
}

/**
 * Creates the tracer (from `env`; nothing of OpenTelemetry is loaded while it is off), the access
 * log (`config.accessLogLevel`, none when `off` or below the level of `log`, which must not change
 * while the gateway runs) and, when `config.admin` is on, the metrics
 * (subscribed to the channels at once) and the status recorder. `attach` then starts the admin
 * listener. With `admin: false` nobody can read the metrics or the status recorder, so neither
 * is created: prom-client and the admin modules are not loaded, and no request pays for them.
 * @throws SwitchyardError SWY_ERR_TELEMETRY_CONFIG (an OTEL_* value that cannot be honoured)
 */
export async function prepareOperations(o: OperationsOptions): Promise<Operations> {
  const { log } = o;
  let gw: OperatedGateway | undefined;
  const tracing = await createTracing({ env: o.env, log, serviceVersion: o.version });
  // `admin` is restart-only (src/runtime.ts), so what is not created here is never needed later.
  const served = o.config.admin === false ? undefined : await serveAdmin();
  async function serveAdmin() {
    const [{ createMetrics }, { createStatusRecorder }, { startAdminServer }] = await Promise.all([
      import('./telemetry/metrics.js'),
      import('./admin/status.js'),
      import('./admin/server.js'),
    ]);
    const book = createNameBook();
    // The label lists are asked on every observation: computed once per config (a reload brings a new one).
    let names: { config: FrozenConfig; attached: boolean; mounts: string[]; upstreams: string[] } | undefined;
    const namesNow = () => {
      const config = gw?.config ?? o.config;
      if (names?.config !== config || names.attached !== (gw !== undefined))
        names = {
          config,
          attached: gw !== undefined,
          mounts: gw ? gw.mounts.map((m) => m.name) : [...Object.keys(o.config.upstreams), 'aggregate'],
          upstreams: Object.keys(config.upstreams),
        };
      return names;
    };
    const metrics = createMetrics({
      mounts: () => namesNow().mounts,
      upstreams: () => namesNow().upstreams,
      knownNames: book.known,
      collect: () => (gw ? gw.mounts.map((m) => ({ mount: m.name, inFlight: m.executor.inFlight, queued: m.executor.queued })) : []),
      // The supervisors, not the channels: they know which instance of a name serves (src/telemetry/metrics.ts).
      upstreamStates: () => (gw ? [...gw.supervised.values()].map((u) => ({ upstream: u.name, state: u.state })) : []),
      cluster: () => (gw ? clusterOf(gw) : undefined),
      log,
    });
    const recorder: StatusRecorder = createStatusRecorder({ log });
    return { book, metrics, recorder, startAdminServer };
  }
  // An access log its logger would drop is not created: `logLevel` and `accessLogLevel` are
  // restart-only (src/runtime.ts) and the CLI's logger keeps its level, so it would write nothing
  // for the process's life, while its subscription to `requestEnd` made every request, and every
  // answer the gateway gives itself (`initialize` of each HTTP+SSE session), build and publish its
  // start and end messages (about 6 KB allocated per idle HTTP+SSE session opened, much of it
  // promoted to the old generation before it died; docs/performance.md).
  const access: AccessLog | undefined =
    o.config.accessLogLevel === 'off' || !log.isLevelEnabled(o.config.accessLogLevel) ? undefined : createAccessLog({ log, level: o.config.accessLogLevel });
  let admin: AdminServer | undefined;
  let closed: Promise<void> | undefined;
  return {
    // The name book inside, so that it sees the upstream's own list; the client span outside it.
    observers: served ? [served.book.interceptor, tracing.interceptor] : [tracing.interceptor],
    // Outside curation, so that a renamed tool's new name is known too (the server series names a call as called).
    interceptors: served ? [served.book.shown] : [],
    metrics: served?.metrics,
    tracing,
    async attach(gateway) {
      gw = gateway;
      const a = gateway.config.admin;
      if (a === false || !served) return undefined;
      const { metrics, recorder } = served;
      admin = await served.startAdminServer({
        host: a.host,
        port: a.port,
        maxConnectionsPerAddress: a.maxConnectionsPerAddress,
        source: statusSourceOf(gateway),
        metrics,
        recorder,
        log,
      });
      return admin;
    },
    close() {
      closed ??= (async () => {
        await admin?.close();
        access?.close();
        served?.recorder.close();
        // Bounded like the answers still going out: a collector that does not answer must not
        // hold the exit for the export timeout (10 s by default, retries included).
        const bound = (gw?.config ?? o.config).limits.shutdownGraceMs;
        await tracing.close(bound).catch((err: unknown) => log.warn({ err }, 'trace export at shutdown failed'));
        served?.metrics.close();
      })();
      return closed;
    },
  };
}
