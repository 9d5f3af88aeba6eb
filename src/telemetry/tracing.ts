// OpenTelemetry traces: a SERVER span per client request (from the request channels) and a
// CLIENT span per upstream call (an interceptor). Off unless the OTEL_* environment turns it on;
// the SDK and the exporter are loaded with import() only then.

import { createHash } from 'node:crypto';
import type * as OtelApi from '@opentelemetry/api';
import type { SpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { PeerRpcError, SwitchyardError } from '../core/errors.js';
import { deriveContext, type Dispatch, type Interceptor } from '../core/interceptor.js';
import type { JsonObject, RequestId } from '../core/message.js';
import type { RequestContext } from '../core/request.js';
import { STATELESS_REVISION } from '../core/versions.js';
import type { Logger } from '../log/logger.js';
import { clientErrorType, isErrorOutcome, methodLiteral, rpcCodeOf, serverErrorType, type Outcome } from './names.js';
import { subscribeChannels } from './subscribe.js';
import { formatTraceparent, parseTraceparent, type TraceParent } from './trace-context.js';

export { formatTraceparent, parseTraceparent, TRACEPARENT_LENGTH, type TraceParent } from './trace-context.js';

/** The environment, as the config loader read it (only the loader reads `process.env`). */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where spans go: `otlp` (OTLP/HTTP, JSON encoding) or `drop` (created, ended, then discarded: the cost of tracing without the export). */
export type TracingExporterKind = 'otlp' | 'drop';

/** Inputs of {@link createTracing}. */
export interface TracingOptions {
  /** The environment holding the standard `OTEL_*` variables. */
  env: Env;
  /** `otlp` (default) exports to the configured endpoint; `drop` turns tracing on without an endpoint and discards every span. */
  exporter?: TracingExporterKind;
  /** Logger for export failures and the startup line (headers and credentials are never logged). */
  log?: Logger;
  /** The JSON-RPC id of the request `ctx` serves, for `jsonrpc.request.id` (the context does not carry it). */
  requestIdOf?: (ctx: RequestContext) => RequestId | undefined;
  /** `service.version` of the resource. */
  serviceVersion?: string;
  /** Server spans remembered for upstream calls to find (evicted oldest first above it; default 10000). */
  maxOpenSpans?: number;
}

/** Tracing, on or off. */
export interface Tracing {
  /** True when spans are recorded and exported (or dropped, with `exporter: 'drop'`). */
  readonly enabled: boolean;
  /**
   * Wraps each upstream call in a CLIENT span, child of the request's SERVER span, and hands the
   * next stage a context whose `traceContext` is the client span's (upstream connectors send it
   * as `traceparent` and in `_meta`). The identity function when tracing is off.
   */
  readonly interceptor: Interceptor;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Unsubscribes, exports what is left and shuts the SDK down. */
  close(): Promise<void>;
}

/** What the environment asks of the tracer, once validated. */
export interface TracingConfig {
  /** OTLP/HTTP traces URL (`…/v1/traces`); undefined with the `drop` exporter. */
  url: string | undefined;
  /** Raw `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS` (secret: never logged). */
  headers: string | undefined;
  /** Export request timeout, ms. */
  timeoutMs: number;
  /** Request body compression of the export. */
  compression: 'gzip' | 'none';
  /** `service.name` of the resource. */
  serviceName: string;
  /** Raw `OTEL_RESOURCE_ATTRIBUTES`. */
  resourceAttributes: string | undefined;
  /** The sampler, by its `OTEL_TRACES_SAMPLER` name. */
  sampler: 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';
  /** Ratio for the `traceidratio` samplers, 0–1. */
  samplerRatio: number;
  /** Batch span processor: delay between exports, ms. */
  scheduleDelayMs: number;
  /** Batch span processor: time one export may take, ms. */
  exportTimeoutMs: number;
  /** Batch span processor: spans queued for export; later ones are dropped. */
  maxQueueSize: number;
  /** Batch span processor: spans per export. */
  maxExportBatchSize: number;
  /** Longest attribute value, characters. */
  attributeValueLengthLimit: number;
  /** True when the protocol asked for is http/protobuf (this exporter sends http/json). */
  protobufRequested: boolean;
}

const SAMPLERS = new Set<TracingConfig['sampler']>([
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
]);

function bad(variable: string, why: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_TELEMETRY_CONFIG', { detail: `${variable} ${why}` });
}

function intFrom(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw bad(name, 'is not a non-negative integer');
  const n = Number(raw);
  if (n < min) throw bad(name, `must be at least ${min}`);
  return n;
}

/**
 * The exporter `SWITCHYARD_TRACES_EXPORTER` names: `otlp` (unset or empty: the default) or `drop`
 * (tracing on without an endpoint, every span discarded after the batch processor: the cost of
 * tracing without serialisation or the network, for measuring it).
 * @throws SwitchyardError SWY_ERR_TELEMETRY_CONFIG for any other value
 */
export function exporterFromEnv(env: Env): TracingExporterKind {
  const v = env.SWITCHYARD_TRACES_EXPORTER?.trim().toLowerCase();
  if (!v || v === 'otlp') return 'otlp';
  if (v === 'drop') return 'drop';
  throw bad('SWITCHYARD_TRACES_EXPORTER', 'must be otlp or drop');
}

/**
 * Reads the standard OpenTelemetry variables. Tracing is off (null) when `OTEL_SDK_DISABLED` is
 * `true`, when `OTEL_TRACES_EXPORTER` is `none`, or when neither `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 * nor `OTEL_EXPORTER_OTLP_ENDPOINT` is set (with the `drop` exporter no endpoint is needed). The
 * signal-specific variable wins over the general one; the general endpoint gets `v1/traces` appended.
 * @throws SwitchyardError SWY_ERR_TELEMETRY_CONFIG for a value Switchyard cannot honour
 * @see OpenTelemetry specification, configuration/sdk-environment-variables and protocol/exporter
 */
export function tracingConfigFromEnv(env: Env, exporter: TracingExporterKind = 'otlp'): TracingConfig | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (exporters.includes('none')) return null;
  // console would write to stdout, which the stdio front door reserves; other exporters are not bundled.
  const unsupported = exporters.filter((e) => e !== 'otlp');
  if (unsupported.length > 0) throw bad('OTEL_TRACES_EXPORTER', `names an exporter other than otlp or none: ${unsupported.join(', ')}`);

  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol !== undefined && protocol !== '' && protocol !== 'http/json' && protocol !== 'http/protobuf')
    throw bad(
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL',
      'must be http/json or http/protobuf',
    );

  let url: string | undefined;
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const variable = signal ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (signal) url = signal;
  else if (general) url = general.endsWith('/') ? `${general}v1/traces` : `${general}/v1/traces`;
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw bad(variable, 'is not a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw bad(variable, 'must be an http or https URL');
  }
  if (exporter === 'drop') url = undefined;
  else if (url === undefined) return null;

  const sampler = (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on') as TracingConfig['sampler'];
  if (!SAMPLERS.has(sampler)) throw bad('OTEL_TRACES_SAMPLER', `is not one of ${[...SAMPLERS].join(', ')}`);
  let samplerRatio = 1;
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (sampler.endsWith('traceidratio') && arg !== undefined && arg !== '') {
    samplerRatio = Number(arg);
    if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1) throw bad('OTEL_TRACES_SAMPLER_ARG', 'must be a number from 0 to 1');
  }
  const compression = (env.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? env.OTEL_EXPORTER_OTLP_COMPRESSION ?? 'none').trim().toLowerCase() || 'none';
  if (compression !== 'gzip' && compression !== 'none') throw bad('OTEL_EXPORTER_OTLP_COMPRESSION', 'must be gzip or none');
  const timeoutName = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT';
  const maxQueueSize = intFrom(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1);
  const maxExportBatchSize = intFrom(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1);
  if (maxExportBatchSize > maxQueueSize) throw bad('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'must not exceed OTEL_BSP_MAX_QUEUE_SIZE');
  const lengthName = env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT !== undefined ? 'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT' : 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT';
  return {
    url,
    headers: env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS,
    timeoutMs: intFrom(env, timeoutName, 10_000, 1),
    compression,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'switchyard',
    resourceAttributes: env.OTEL_RESOURCE_ATTRIBUTES,
    sampler,
    samplerRatio,
    scheduleDelayMs: intFrom(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 0),
    exportTimeoutMs: intFrom(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1),
    maxQueueSize,
    maxExportBatchSize,
    attributeValueLengthLimit: intFrom(env, lengthName, 4096, 1),
    protobufRequested: protocol === 'http/protobuf',
  };
}

const OFF: Tracing = Object.freeze({
  enabled: false,
  interceptor: (next: Dispatch) => next,
  flush: async () => {},
  close: async () => {},
});

/** Longest tool or prompt name used in a span name, characters (the attribute keeps it, up to the attribute limit). */
const MAX_TARGET_CHARS = 128;
/** Longest status description, characters. */
const MAX_DESCRIPTION_CHARS = 256;
/** Upstreams whose revision and transport are remembered for client spans. */
const MAX_UPSTREAMS = 256;

interface ServerSpan {
  span: OtelApi.Span;
  toolError: boolean;
}

/** The tool or prompt a request names, with its attribute key. */
function targetOf(method: string, params: JsonObject | undefined, componentName?: string): { key: string; name: string } | undefined {
  if (method !== 'tools/call' && method !== 'prompts/get') return undefined;
  const name = componentName ?? params?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  return { key: method === 'tools/call' ? 'gen_ai.tool.name' : 'gen_ai.prompt.name', name };
}

function spanName(method: string, target: { name: string } | undefined): string {
  return target && target.name.length <= MAX_TARGET_CHARS ? `${method} ${target.name}` : method;
}

/**
 * `mcp.session.id`, hashed: a 2025 session id is a bearer-like value (whoever has it may use the
 * session), so traces carry a stable SHA-256 digest (32 hex digits) instead.
 * @see telemetry digest §8 (Sessions); authorization digest R9
 */
function sessionAttribute(sessionKey: string): string {
  return createHash('sha256').update(sessionKey).digest('hex').slice(0, 32);
}

function errorMessage(err: unknown): string | undefined {
  const msg = err instanceof Error ? err.message : undefined;
  return msg === undefined ? undefined : msg.slice(0, MAX_DESCRIPTION_CHARS);
}

function outcomeOfError(err: unknown): Outcome {
  if (err instanceof SwitchyardError) return { code: err.code, rpcCode: err.rpcCode, fault: err.entry.fault, error: err };
  if (err instanceof PeerRpcError) return { rpcCode: err.rpc.code, error: err };
  return { error: err };
}

/**
 * Creates tracing from the standard OTel environment. Off: nothing of OpenTelemetry is loaded,
 * the interceptor is the identity, and `ctx.traceContext` passes upstream untouched. On:
 * - at `requestStart`, a SERVER span `{mcp.method.name} {target}` whose parent is the W3C context
 *   the front door put in `ctx.traceContext` (a new trace without one); `ctx.traceContext` is then
 *   replaced by the server span's own context. Attributes: `mcp.method.name`,
 *   `mcp.protocol.version`, `mcp.session.id` (hashed; never for 2026-07-28), `jsonrpc.request.id`,
 *   `gen_ai.tool.name` / `gen_ai.prompt.name`, `gen_ai.operation.name`, `switchyard.mount`,
 *   `switchyard.dialect`; at `requestEnd`, `error.type`, `rpc.response.status_code` and the status.
 * - the interceptor: a CLIENT span per upstream call, child of that server span.
 * Spans are keyed by the ctx object in a WeakMap; requests published with the same ctx object at
 * start and end are traced.
 * @throws SwitchyardError SWY_ERR_TELEMETRY_CONFIG (see {@link tracingConfigFromEnv})
 * @see telemetry digest §1–§3, §5 and §8; W3C Trace Context §3
 */
export async function createTracing(options: TracingOptions): Promise<Tracing> {
  const kind = options.exporter ?? exporterFromEnv(options.env);
  const config = tracingConfigFromEnv(options.env, kind);
  if (config === null) return OFF;
  const log = options.log;

  const [api, sdk, core, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);

  let exporter: SpanExporter;
  if (config.url === undefined) {
    exporter = {
      export: (_spans, done) => done({ code: core.ExportResultCode.SUCCESS }),
      shutdown: async () => {},
      forceFlush: async () => {},
    };
  } else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    const inner = new OTLPTraceExporter({
      url: config.url,
      headers: core.parseKeyPairsIntoRecord(config.headers),
      timeoutMillis: config.timeoutMs,
      compression: config.compression as never,
    });
    exporter = {
      export(spans: ReadableSpan[], done) {
        inner.export(spans, (result) => {
          if (result.code !== core.ExportResultCode.SUCCESS) log?.warn({ err: result.error, spans: spans.length }, 'trace export failed');
          done(result);
        });
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush(),
    };
  }

  const ratio = new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
  const root = config.sampler.endsWith('always_off') ? new sdk.AlwaysOffSampler() : config.sampler.endsWith('traceidratio') ? ratio : new sdk.AlwaysOnSampler();
  const sampler = config.sampler.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root;
  const resource = resources.defaultResource().merge(
    resources.resourceFromAttributes({
      ...core.parseKeyPairsIntoRecord(config.resourceAttributes),
      'service.name': config.serviceName,
      ...(options.serviceVersion !== undefined ? { 'service.version': options.serviceVersion } : {}),
    }),
  );
  const provider = new sdk.BasicTracerProvider({
    resource,
    sampler,
    spanLimits: { attributeValueLengthLimit: config.attributeValueLengthLimit },
    spanProcessors: [
      new sdk.BatchSpanProcessor(exporter, {
        scheduledDelayMillis: config.scheduleDelayMs,
        exportTimeoutMillis: config.exportTimeoutMs,
        maxQueueSize: config.maxQueueSize,
        maxExportBatchSize: config.maxExportBatchSize,
      }),
    ],
  });
  const tracer = provider.getTracer('switchyard', options.serviceVersion);
  if (config.url !== undefined) {
    const u = new URL(config.url);
    // Origin and path only: the URL may carry credentials, and the headers always stay out of logs.
    log?.info({ endpoint: `${u.origin}${u.pathname}`, serviceName: config.serviceName, sampler: config.sampler }, 'tracing on');
    if (config.protobufRequested) log?.warn({ protocol: 'http/protobuf' }, 'tracing exports http/json; the protobuf encoding is not bundled');
  }

  const byCtx = new WeakMap<RequestContext, ServerSpan>();
  // Open server spans by span id, oldest first (Map keeps insertion order): at the bound the oldest
  // is forgotten, which only costs its upstream calls the tool_error mark on the server span.
  const maxOpenSpans = options.maxOpenSpans ?? 10_000;
  const bySpanId = new Map<string, ServerSpan>();
  const remember = (spanId: string, state: ServerSpan): void => {
    if (bySpanId.size >= maxOpenSpans) bySpanId.delete(bySpanId.keys().next().value as string);
    bySpanId.set(spanId, state);
  };
  const upstreams = new Map<string, { revision?: string; transport?: string }>();
  // The server span whose context a request carries, by that context object: the interceptor's
  // derived contexts share it, so it finds its parent without parsing the traceparent again.
  const byTraceContext = new WeakMap<object, ServerSpan>();

  const parentContext = (traceContext: RequestContext['traceContext']): OtelApi.Context => {
    const tp = parseTraceparent(traceContext?.traceparent);
    if (!tp) return api.ROOT_CONTEXT;
    const local = bySpanId.get(tp.spanId);
    if (local && local.span.spanContext().traceId === tp.traceId) return api.trace.setSpan(api.ROOT_CONTEXT, local.span);
    let traceState: OtelApi.TraceState | undefined;
    if (traceContext?.tracestate) traceState = new core.TraceState(traceContext.tracestate);
    return api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: tp.traceId, spanId: tp.spanId, traceFlags: tp.traceFlags, isRemote: true, traceState });
  };
  const traceContextOf = (span: OtelApi.Span): NonNullable<RequestContext['traceContext']> => {
    const sc = span.spanContext();
    const tp: TraceParent = { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags };
    const out: NonNullable<RequestContext['traceContext']> = { traceparent: formatTraceparent(tp) };
    const ts = sc.traceState?.serialize();
    if (ts) out.tracestate = ts;
    return out;
  };
  const endWithError = (span: OtelApi.Span, errorType: string | undefined, o: Outcome): void => {
    const rpc = isErrorOutcome(o) ? rpcCodeOf(o) : undefined;
    if (rpc !== undefined) span.setAttribute('rpc.response.status_code', String(rpc));
    if (errorType !== undefined) {
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorMessage(o.error) });
    }
  };

  const unsubscribe = subscribeChannels(
    {
      requestStart({ ctx, startedAt }) {
        const method = methodLiteral(ctx.method);
        const target = targetOf(method, ctx.params);
        const attributes: OtelApi.Attributes = { 'mcp.method.name': method };
        if (typeof ctx.protocolVersion === 'string') attributes['mcp.protocol.version'] = ctx.protocolVersion;
        // @see telemetry digest §2: mcp.session.id MUST NOT be set for 2026-07-28 (no sessions exist)
        if (ctx.sessionKey !== undefined && ctx.protocolVersion !== STATELESS_REVISION) attributes['mcp.session.id'] = sessionAttribute(ctx.sessionKey);
        const id = options.requestIdOf?.(ctx);
        if (id !== undefined) attributes['jsonrpc.request.id'] = String(id);
        if (target) attributes[target.key] = target.name;
        if (method === 'tools/call') attributes['gen_ai.operation.name'] = 'execute_tool';
        if (ctx.mount !== undefined) attributes['switchyard.mount'] = ctx.mount;
        if (ctx.dialect !== undefined) attributes['switchyard.dialect'] = ctx.dialect;
        const span = tracer.startSpan(
          spanName(method, target),
          { kind: api.SpanKind.SERVER, attributes, startTime: startedAt },
          parentContext(ctx.traceContext),
        );
        const state: ServerSpan = { span, toolError: false };
        byCtx.set(ctx, state);
        remember(span.spanContext().spanId, state);
        // Subscribers run inside publish, before the request goes on: upstream calls now carry
        // the server span as their parent.
        const own = traceContextOf(span);
        byTraceContext.set(own, state);
        ctx.traceContext = own;
      },
      requestEnd(m) {
        const state = byCtx.get(m.ctx);
        if (!state) return;
        byCtx.delete(m.ctx);
        bySpanId.delete(state.span.spanContext().spanId);
        const errorType = serverErrorType(m);
        if (errorType === undefined && state.toolError && !isErrorOutcome(m)) {
          // @see telemetry digest §3: CallToolResult.isError ⇒ error.type tool_error
          state.span.setAttribute('error.type', 'tool_error');
          state.span.setStatus({ code: api.SpanStatusCode.ERROR });
        } else endWithError(state.span, errorType, m);
        state.span.end(m.startedAt + m.durationMs);
      },
      upstreamSpawn(m) {
        if (upstreams.size < MAX_UPSTREAMS || upstreams.has(m.upstream))
          upstreams.set(m.upstream, {
            revision: m.revision ?? upstreams.get(m.upstream)?.revision,
            transport: m.transport ?? upstreams.get(m.upstream)?.transport,
          });
      },
      upstreamReady(m) {
        if (upstreams.size < MAX_UPSTREAMS || upstreams.has(m.upstream))
          upstreams.set(m.upstream, {
            revision: m.revision ?? upstreams.get(m.upstream)?.revision,
            transport: m.transport ?? upstreams.get(m.upstream)?.transport,
          });
      },
    },
    (err, channel) => log?.error({ err, channel }, 'tracing observer failed'),
  );

  const interceptor: Interceptor = (next) => async (ctx) => {
    const method = methodLiteral(ctx.method);
    const target = targetOf(method, ctx.params, ctx.component?.kind === 'tool' || ctx.component?.kind === 'prompt' ? ctx.component.name : undefined);
    const attributes: OtelApi.Attributes = { 'mcp.method.name': method };
    if (target) attributes[target.key] = target.name;
    if (method === 'tools/call') attributes['gen_ai.operation.name'] = 'execute_tool';
    if (ctx.upstream !== undefined) {
      attributes['switchyard.upstream'] = ctx.upstream;
      const info = upstreams.get(ctx.upstream);
      if (info?.revision) attributes['mcp.protocol.version'] = info.revision;
      // @see telemetry digest §6 and §8: pipe for stdio children, tcp for HTTP upstreams
      if (info?.transport === 'stdio') attributes['network.transport'] = 'pipe';
      else if (info?.transport === 'http') attributes['network.transport'] = 'tcp';
    }
    const own = ctx.traceContext ? byTraceContext.get(ctx.traceContext) : undefined;
    const parent = own ? api.trace.setSpan(api.ROOT_CONTEXT, own.span) : parentContext(ctx.traceContext);
    const server = own ?? bySpanId.get(parseTraceparent(ctx.traceContext?.traceparent)?.spanId ?? '');
    const span = tracer.startSpan(spanName(method, target), { kind: api.SpanKind.CLIENT, attributes }, parent);
    let result: JsonObject;
    try {
      // @see telemetry digest §8: overwrite traceparent toward the upstream with the client span's context
      result = await next(deriveContext(ctx, { traceContext: traceContextOf(span) }));
    } catch (err) {
      const o = outcomeOfError(err);
      endWithError(span, clientErrorType(o), o);
      span.end();
      throw err;
    }
    if (method === 'tools/call' && result?.isError === true) {
      // @see telemetry digest §3: CallToolResult.isError ⇒ error.type tool_error
      span.setAttribute('error.type', 'tool_error');
      span.setStatus({ code: api.SpanStatusCode.ERROR });
      if (server) server.toolError = true;
    }
    span.end();
    return result;
  };

  let closed: Promise<void> | undefined;
  return {
    enabled: true,
    interceptor,
    flush: () => provider.forceFlush(),
    close() {
      closed ??= (async () => {
        unsubscribe();
        await provider.shutdown();
      })();
      return closed;
    },
  };
}
