// OpenTelemetry traces: a SERVER span per client request (from the request channels) and a
// CLIENT span per upstream call (an interceptor). Off unless the OTEL_* environment turns it on;
// the SDK and the exporter are loaded with import() only then.

import type * as OtelApi from '@opentelemetry/api';
import type { SpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { PeerRpcError, SwitchyardError } from '../core/errors.js';
import type { UpstreamStateMessage } from '../core/diagnostics.js';
import { sessionLogId } from '../core/identity.js';
import { deriveTraceContext, isDecisionOnly, type Dispatch, type Interceptor } from '../core/interceptor.js';
import type { JsonObject } from '../core/message.js';
import type { RequestContext } from '../core/request.js';
import type { ServerEndpoint } from '../core/url-text.js';
import { STATELESS_REVISION } from '../core/versions.js';
import type { Logger } from '../log/logger.js';
import { clientErrorType, isErrorOutcome, methodLiteral, networkTransport, rpcCodeOf, serverErrorType, type Outcome } from './names.js';
import { subscribeChannels } from './subscribe.js';
import { parseTraceparent } from './trace-context.js';
import { FLAG_SAMPLED, randomId, Span, type Decide, type SpanParent, type SpanScope } from './spans.js';

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
  /** `service.version` of the resource. */
  serviceVersion?: string;
  /**
   * Open server spans remembered, once their traceparent has been read, for a request that names
   * one to become its local child (evicted oldest first above it; default 10000).
   */
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
  /**
   * Unsubscribes, exports what is left and shuts the SDK down. With `timeoutMs`, gives up after
   * that many ms (a collector that does not answer would hold the exit for the export timeout,
   * retries included): the spans not yet out are dropped, and the rejection says so.
   * @throws Error when the export fails or `timeoutMs` passes first
   */
  close(timeoutMs?: number): Promise<void>;
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

/** An HTTP field name (RFC 9110 §5.1, a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * True when every entry of an `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS` value is a `key=value` pair
 * the exporter will send as it reads: a field name, and a non-empty percent-encoded value without
 * CR, LF or NUL once decoded (W3C Baggage format, `;` properties ignored). The exporter's parser
 * (`parseKeyPairsIntoRecord`) drops any other entry without a word.
 * @see OTel specification, OTLP exporter configuration (`OTEL_EXPORTER_OTLP_HEADERS`)
 */
function headersWellFormed(raw: string): boolean {
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const pair = entry.split(';')[0];
    const eq = pair.indexOf('=');
    if (eq <= 0) return false;
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    let decoded: string;
    try {
      if (!HEADER_NAME.test(decodeURIComponent(key))) return false;
      decoded = decodeURIComponent(value);
    } catch {
      return false;
    }
    if (decoded === '' || /[\r\n\0]/.test(decoded)) return false;
  }
  return true;
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
 * signal-specific variable wins over the general one, used as is; the general endpoint gets `v1/traces`
 * appended to its path (its query kept after it).
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
  const given = signal || general;
  if (given) {
    let parsed: URL;
    try {
      parsed = new URL(given);
    } catch {
      throw bad(variable, 'is not a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw bad(variable, 'must be an http or https URL');
    if (signal) url = signal;
    else {
      // The signal path goes after the base URL's path, not after its query
      // (`http://c/base?k=X` → `http://c/base/v1/traces?k=X`).
      // @see OpenTelemetry specification, protocol/exporter ("Endpoint URLs for OTLP/HTTP")
      parsed.pathname = parsed.pathname.endsWith('/') ? `${parsed.pathname}v1/traces` : `${parsed.pathname}/v1/traces`;
      url = parsed.href;
    }
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
  // Named, never shown: the value is a secret.
  const headersName = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS' : 'OTEL_EXPORTER_OTLP_HEADERS';
  const headers = env[headersName];
  if (headers !== undefined && !headersWellFormed(headers))
    throw bad(headersName, 'must be key=value pairs separated by commas, values percent-encoded (e.g. authorization=Bearer%20TOKEN)');
  const lengthName = env.OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT !== undefined ? 'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT' : 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT';
  return {
    url,
    headers,
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

/** Tracers subscribed to the request channels in this process now (see `byCtx` in {@link createTracing}). */
let subscribedTracers = 0;

/** Longest tool or prompt name used in a span name, characters (the attribute keeps it, up to the attribute limit). */
const MAX_TARGET_CHARS = 128;
/** Longest status description, characters. */
const MAX_DESCRIPTION_CHARS = 256;
/** Upstreams whose revision and transport are remembered for client spans. */
const MAX_UPSTREAMS = 256;

/** OTel SpanKind SERVER and CLIENT, and SpanStatusCode ERROR (numbers: the API module is loaded only when tracing is on). */
const SPAN_SERVER = 1 as OtelApi.SpanKind.SERVER;
const SPAN_CLIENT = 2 as OtelApi.SpanKind.CLIENT;
const STATUS_ERROR = 2 as OtelApi.SpanStatusCode.ERROR;

/** What one upstream's client spans carry beside the call's own attributes (see `noteUpstream`). */
interface UpstreamInfo {
  readonly revision?: string;
  readonly transport?: string;
  /** `network.transport`. */
  readonly network?: 'pipe' | 'tcp';
  /** `server.address` and `server.port`: HTTP upstreams only. */
  readonly server?: ServerEndpoint;
}

/** A request context's `traceContext`: the W3C fields, as the transports make it or as a {@link Span} of ours carries them. */
type TraceContextValue = NonNullable<RequestContext['traceContext']>;

/** A server span's marks: a tools/call result said `isError`; kept in the by-context map; traceparent read while open. */
const MARK_TOOL_ERROR = 1;
const MARK_BY_CTX = 2;
const MARK_ESCAPED = 4;
/** A client span's mark: its call is a tools/call. */
const MARK_TOOLS_CALL = 8;

/**
 * The class of one tracer's spans: a {@link Span} with the tracer's bookkeeping (private, so never
 * spread or serialized with the trace context). A class per tracer, so that gateways tracing in
 * one process never take each other's spans for their own (`instanceof`).
 * @param escaped called once when an open server span's `traceparent` is first read: from then on
 *   a request may come back naming it (its tracer keeps it by span id until it ends)
 */
function tracerSpanClass(escaped: (span: Span) => void) {
  return class TracerSpan extends Span {
    /** The marks below as bits of one small integer (one field per span, not three). */
    #marks = 0;
    #ctx: RequestContext | undefined = undefined;
    /**
     * Read where the span's context leaves the tracer (an upstream, a client, a log line): an open
     * server span is then remembered by its span id, so that a request naming it becomes its local
     * child. One never read cannot come back, and costs no entry.
     */
    override get traceparent(): string {
      if (this.#ctx !== undefined && (this.#marks & MARK_ESCAPED) === 0) {
        this.#marks |= MARK_ESCAPED;
        escaped(this);
      }
      return super.traceparent;
    }
    /** True once an open server span's traceparent was read (its tracer keeps it by span id). */
    get escaped(): boolean {
      return (this.#marks & MARK_ESCAPED) !== 0;
    }
    /** An upstream call marked the result `isError` (server spans: the tool_error mark). */
    get toolError(): boolean {
      return (this.#marks & MARK_TOOL_ERROR) !== 0;
    }
    set toolError(v: boolean) {
      this.#marks = v ? this.#marks | MARK_TOOL_ERROR : this.#marks & ~MARK_TOOL_ERROR;
    }
    /** A server span: the request context it was opened for, until its request ends. */
    get ctx(): RequestContext | undefined {
      return this.#ctx;
    }
    set ctx(v: RequestContext | undefined) {
      this.#ctx = v;
    }
    /** A server span also kept in its tracer's by-context map (more than one tracer subscribed at its start). */
    get byCtx(): boolean {
      return (this.#marks & MARK_BY_CTX) !== 0;
    }
    set byCtx(v: boolean) {
      this.#marks = v ? this.#marks | MARK_BY_CTX : this.#marks & ~MARK_BY_CTX;
    }
    /** A client span of a `tools/call` (whose result's `isError` marks it). */
    get toolsCall(): boolean {
      return (this.#marks & MARK_TOOLS_CALL) !== 0;
    }
    set toolsCall(v: boolean) {
      this.#marks = v ? this.#marks | MARK_TOOLS_CALL : this.#marks & ~MARK_TOOLS_CALL;
    }
  };
}

/**
 * The sampling decision of the configured sampler (see {@link Decide}); `ratio` is the SDK's
 * TraceIdRatioBasedSampler, whose decision reads the trace id alone.
 * @see OpenTelemetry specification, trace/sdk.md "Built-in samplers"
 */
function samplerOf(
  config: TracingConfig,
  ratio: { shouldSample(context: OtelApi.Context, traceId: string): { decision: number } },
  root: OtelApi.Context,
): Decide {
  const RECORD_AND_SAMPLED = 2;
  const rootDecision = config.sampler.endsWith('always_off')
    ? () => false
    : config.sampler.endsWith('traceidratio')
      ? (traceId: string) => ratio.shouldSample(root, traceId).decision === RECORD_AND_SAMPLED
      : () => true;
  if (!config.sampler.startsWith('parentbased_')) return (_parent, traceId) => rootDecision(traceId);
  // ParentBased's default delegates: a sampled parent (remote or local) samples, an unsampled one does not.
  return (parent, traceId) => (parent ? (parent.traceFlags & FLAG_SAMPLED) !== 0 : rootDecision(traceId));
}

/** The attribute naming the tool or prompt a method invokes (`tools/call`, `prompts/get`), else undefined. */
function targetKey(method: string): 'gen_ai.tool.name' | 'gen_ai.prompt.name' | undefined {
  return method === 'tools/call' ? 'gen_ai.tool.name' : method === 'prompts/get' ? 'gen_ai.prompt.name' : undefined;
}

/** The tool or prompt a request names (a non-empty string), for the methods {@link targetKey} knows. */
function targetName(method: string, params: JsonObject | undefined, componentName?: string): string | undefined {
  if (method !== 'tools/call' && method !== 'prompts/get') return undefined;
  const name = componentName ?? params?.name;
  return typeof name !== 'string' || name === '' ? undefined : name;
}

/** Span names of targeted requests remembered per tracer (past it the memory is emptied, never grown). */
const MAX_SPAN_NAMES = 1_024;

/**
 * `{method} {target}`, or the method alone without a target or with one longer than
 * {@link MAX_TARGET_CHARS}; remembered in `names` (by method, then target), so that a request for
 * a known tool builds no string.
 */
function spanName(names: Map<string, Map<string, string>>, method: string, target: string | undefined): string {
  if (target === undefined || target.length > MAX_TARGET_CHARS) return method;
  let byTarget = names.get(method);
  if (byTarget === undefined) names.set(method, (byTarget = new Map<string, string>()));
  let name = byTarget.get(target);
  if (name === undefined) {
    if (byTarget.size >= MAX_SPAN_NAMES) byTarget.clear();
    byTarget.set(target, (name = `${method} ${target}`));
  }
  return name;
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
 * A request's server span is found at its end as its ctx's `traceContext` (the span itself is the
 * trace context that propagates), and by the ctx object in a WeakMap while more than one tracer
 * is subscribed in the process:
 * requests published with the same ctx object at start and end, whose `traceContext` nothing but
 * a tracer replaces in between, are traced.
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
          if (result.code !== core.ExportResultCode.SUCCESS) log?.warn({ ...exportFailure(result.error), spans: spans.length }, 'trace export failed');
          done(result);
        });
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush(),
    };
  }

  const decide = samplerOf(config, new sdk.TraceIdRatioBasedSampler(config.samplerRatio), api.ROOT_CONTEXT);
  const resource = resources.defaultResource().merge(
    resources.resourceFromAttributes({
      ...core.parseKeyPairsIntoRecord(config.resourceAttributes),
      'service.name': config.serviceName,
      ...(options.serviceVersion !== undefined ? { 'service.version': options.serviceVersion } : {}),
    }),
  );
  // The SDK batches and exports; the spans themselves are recorded by src/telemetry/spans.ts.
  const processor = new sdk.BatchSpanProcessor(exporter, {
    scheduledDelayMillis: config.scheduleDelayMs,
    exportTimeoutMillis: config.exportTimeoutMs,
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: config.maxExportBatchSize,
  });
  const scope: SpanScope = {
    resource,
    scope: { name: 'switchyard', version: options.serviceVersion },
    attributeValueLengthLimit: config.attributeValueLengthLimit,
    onEnd: (span) => processor.onEnd(span),
  };
  if (config.url !== undefined) {
    const u = new URL(config.url);
    // The origin only: the URL may carry credentials, in its userinfo, query or path (a collector
    // may take its key as a path segment), and the headers always stay out of logs.
    log?.info({ exporter: 'otlp', endpoint: u.origin, pathWithheld: true, serviceName: config.serviceName, sampler: config.sampler }, 'tracing on');
    if (config.protobufRequested) log?.warn({ protocol: 'http/protobuf' }, 'tracing exports http/json; the protobuf encoding is not bundled');
  } else {
    // The drop exporter traces (and costs) as the OTLP one does: say so, and that nothing is exported.
    log?.info({ exporter: 'drop', serviceName: config.serviceName, sampler: config.sampler }, 'tracing on');
  }

  // Open server spans whose traceparent has been read, by span id, oldest first (Map keeps
  // insertion order): a request naming one is its local child. A span whose context never left
  // cannot be named, so most requests add no entry. At the bound the oldest is forgotten, which
  // only costs a request that names it as its parent the local-parent link.
  const maxOpenSpans = options.maxOpenSpans ?? 10_000;
  const bySpanId = new Map<string, TracerSpan>();
  const remember = (state: TracerSpan): void => {
    if (bySpanId.size >= maxOpenSpans) bySpanId.delete(bySpanId.keys().next().value as string);
    bySpanId.set(state.spanId, state);
  };
  /**
   * Per upstream, what its client spans carry beside the call's own attributes, noted from its
   * lifecycle messages (never per request): its revision, the `network.transport` (pipe for
   * stdio children, tcp for HTTP upstreams; telemetry digest §6 and §8) and, for an HTTP
   * upstream, the `server.address` and `server.port` of its URL (digest §2 and §8: the upstream's
   * address; a stdio child has no network peer and carries neither, docs/operations.md).
   */
  const upstreams = new Map<string, UpstreamInfo>();
  const noteUpstream = (m: UpstreamStateMessage): void => {
    if (upstreams.size >= MAX_UPSTREAMS && !upstreams.has(m.upstream)) return;
    const was = upstreams.get(m.upstream);
    const transport = m.transport ?? was?.transport;
    const http = transport === 'http';
    upstreams.set(m.upstream, {
      revision: m.revision ?? was?.revision,
      transport,
      network: networkTransport(transport),
      server:
        http && m.serverAddress !== undefined && m.serverPort !== undefined ? { address: m.serverAddress, port: m.serverPort } : http ? was?.server : undefined,
    });
  };
  const TracerSpan = tracerSpanClass((span) => remember(span as TracerSpan));
  type TracerSpan = InstanceType<typeof TracerSpan>;
  const spanNames = new Map<string, Map<string, string>>();
  // The server span of a request is found at its end as the context's traceContext: the span
  // itself. Another tracer in this process (another gateway) replaces that span
  // with its own after this one set it, so while more than one tracer is subscribed the spans
  // opened are also kept by their context (a WeakMap set and delete cost about 0.5 µs a request).
  const byCtx = new WeakMap<RequestContext, TracerSpan>();
  subscribedTracers++;
  let subscribed = true;

  /**
   * What a trace context names: one of our open spans (itself, or by its traceparent when that
   * names an open server span), else the remote parent it describes, if well formed; a
   * {@link TracerSpan} is local (`instanceof`), anything else remote.
   */
  const resolve = (traceContext: TraceContextValue | undefined): TracerSpan | SpanParent | undefined => {
    if (traceContext instanceof TracerSpan) return traceContext;
    const tp = parseTraceparent(traceContext?.traceparent);
    if (!tp) return undefined;
    const local = bySpanId.get(tp.spanId);
    if (local && local.traceId === tp.traceId) return local;
    return { traceId: tp.traceId, spanId: tp.spanId, traceFlags: tp.traceFlags, tracestate: traceContext?.tracestate, remote: true };
  };
  /** Starts a span under `parent` (recorded when sampled; otherwise only its context propagates). */
  const open = (
    name: string,
    kind: OtelApi.SpanKind,
    parent: TracerSpan | SpanParent | undefined,
    startedAt: number,
    attributes: OtelApi.Attributes,
  ): TracerSpan => {
    const traceId = parent?.traceId ?? randomId(16);
    const sampled = decide(parent, traceId);
    const local = parent instanceof TracerSpan;
    const parentState = local ? undefined : parent?.tracestate;
    // A local parent's tracestate is parsed already; a remote one's is parsed here (invalid members dropped).
    const traceState = local ? parent.traceState : parentState ? new core.TraceState(parentState) : undefined;
    // A local parent is its own span context; a remote one is described.
    const parentContext: OtelApi.SpanContext | undefined =
      parent === undefined || local ? parent : { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.traceFlags, isRemote: parent.remote };
    return new TracerSpan(
      sampled ? scope : undefined,
      name,
      kind,
      traceId,
      randomId(8),
      sampled ? FLAG_SAMPLED : 0,
      traceState,
      parentContext,
      startedAt,
      attributes,
    );
  };
  const endWithError = (span: Span, errorType: string | undefined, o: Outcome): void => {
    if (!span.recording) return;
    const rpc = isErrorOutcome(o) ? rpcCodeOf(o) : undefined;
    if (rpc !== undefined) span.setAttribute('rpc.response.status_code', String(rpc));
    if (errorType !== undefined) {
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: STATUS_ERROR, message: errorMessage(o.error) });
    }
  };

  const unsubscribe = subscribeChannels(
    {
      requestStart({ ctx, startedAt }) {
        const method = methodLiteral(ctx.method);
        const target = targetName(method, ctx.params);
        const session = ctx.sessionKey !== undefined && ctx.protocolVersion !== STATELESS_REVISION;
        const rpcId = ctx.rpcId;
        let attributes: OtelApi.Attributes;
        if (
          method === 'tools/call' &&
          target !== undefined &&
          !session &&
          typeof ctx.protocolVersion === 'string' &&
          rpcId !== undefined &&
          rpcId !== null &&
          ctx.mount !== undefined &&
          ctx.dialect !== undefined
        ) {
          // The common case, every attribute present: one literal, the same keys in the same order
          // as the general case below builds them one by one (each added key grew the object).
          attributes = {
            'mcp.method.name': method,
            'mcp.protocol.version': ctx.protocolVersion,
            'jsonrpc.request.id': String(rpcId),
            'gen_ai.tool.name': target,
            'gen_ai.operation.name': 'execute_tool',
            'switchyard.mount': ctx.mount,
            'switchyard.dialect': ctx.dialect,
          };
        } else {
          attributes = { 'mcp.method.name': method };
          if (typeof ctx.protocolVersion === 'string') attributes['mcp.protocol.version'] = ctx.protocolVersion;
          // @see telemetry digest §2: mcp.session.id MUST NOT be set for 2026-07-28 (no sessions exist)
          // A 2025 session id is a bearer-like value (whoever has it may use the session): the
          // span carries its log name, the digest the log lines of the same session carry.
          // @see telemetry digest §8 (Sessions); authorization digest R9
          if (session) attributes['mcp.session.id'] = sessionLogId(ctx.sessionKey!);
          // @see telemetry digest §2: requests only (not for id null), numbers stringified
          if (rpcId !== undefined && rpcId !== null) attributes['jsonrpc.request.id'] = String(rpcId);
          if (target !== undefined) attributes[targetKey(method)!] = target;
          if (method === 'tools/call') attributes['gen_ai.operation.name'] = 'execute_tool';
          if (ctx.mount !== undefined) attributes['switchyard.mount'] = ctx.mount;
          if (ctx.dialect !== undefined) attributes['switchyard.dialect'] = ctx.dialect;
        }
        const state = open(spanName(spanNames, method, target), SPAN_SERVER, resolve(ctx.traceContext), startedAt, attributes);
        state.ctx = ctx;
        if (subscribedTracers > 1) {
          state.byCtx = true;
          byCtx.set(ctx, state);
        }
        // Subscribers run inside publish, before the request goes on: upstream calls now carry
        // the server span as their parent.
        ctx.traceContext = state;
      },
      requestEnd(m) {
        const tc = m.ctx.traceContext;
        const state = tc instanceof TracerSpan && tc.ctx === m.ctx ? tc : byCtx.get(m.ctx);
        if (!state || state.ctx !== m.ctx) return;
        state.ctx = undefined;
        if (state.byCtx) byCtx.delete(m.ctx);
        if (state.escaped) bySpanId.delete(state.spanId);
        const span = state;
        if (!span.recording) return;
        const errorType = serverErrorType(m);
        if (errorType === undefined && state.toolError && !isErrorOutcome(m)) {
          // @see telemetry digest §3: CallToolResult.isError ⇒ error.type tool_error
          span.setAttribute('error.type', 'tool_error');
          span.setStatus({ code: STATUS_ERROR });
        } else endWithError(span, errorType, m);
        span.end(m.startedAt + m.durationMs);
      },
      upstreamSpawn: noteUpstream,
      upstreamReady: noteUpstream,
    },
    (err, channel) => log?.error({ err, channel }, 'tracing observer failed'),
  );

  /**
   * Ends a client span with its upstream's result; a tools/call's `isError` marks it and its server
   * span (its local parent, which is its own span context).
   */
  const clientDone = (client: TracerSpan, result: JsonObject): JsonObject => {
    if (client.toolsCall && result?.isError === true) {
      // @see telemetry digest §3: CallToolResult.isError ⇒ error.type tool_error
      client.setAttribute('error.type', 'tool_error');
      client.setStatus({ code: STATUS_ERROR });
      const server = client.parentSpanContext;
      if (server instanceof TracerSpan) server.toolError = true;
    }
    client.end();
    return result;
  };
  /** Ends a client span with its upstream's error, which the caller rethrows. */
  const clientFailed = (client: TracerSpan, err: unknown): void => {
    const o = outcomeOfError(err);
    endWithError(client, clientErrorType(o), o);
    client.end();
  };

  // Not an async function: the client span ends in the upstream promise's own reactions (an
  // async frame and its awaits cost more per request); what is thrown before becomes a
  // rejection, as from an async function.
  const interceptor: Interceptor = (next) => (ctx) => {
    // The only variable the reactions below keep: what they need is on the client span.
    let client: TracerSpan;
    try {
      // A subscription decision ends before any upstream: there is no outgoing call to span.
      if (isDecisionOnly(ctx.method)) return next(ctx);
      const method = methodLiteral(ctx.method);
      const target = targetName(method, ctx.params, ctx.component?.kind === 'tool' || ctx.component?.kind === 'prompt' ? ctx.component.name : undefined);
      let attributes: OtelApi.Attributes;
      const info = ctx.upstream !== undefined ? upstreams.get(ctx.upstream) : undefined;
      const endpoint = info?.server;
      if (method === 'tools/call' && target !== undefined && ctx.upstream !== undefined && info?.revision)
        // The common case: one literal, the keys in the order the general case adds them (each
        // key added to a literal changes its shape and may grow its property store).
        attributes =
          endpoint !== undefined && info.network !== undefined
            ? {
                'mcp.method.name': method,
                'gen_ai.tool.name': target,
                'gen_ai.operation.name': 'execute_tool',
                'switchyard.upstream': ctx.upstream,
                'mcp.protocol.version': info.revision,
                'network.transport': info.network,
                'server.address': endpoint.address,
                'server.port': endpoint.port,
              }
            : info.network !== undefined
              ? {
                  'mcp.method.name': method,
                  'gen_ai.tool.name': target,
                  'gen_ai.operation.name': 'execute_tool',
                  'switchyard.upstream': ctx.upstream,
                  'mcp.protocol.version': info.revision,
                  'network.transport': info.network,
                }
              : {
                  'mcp.method.name': method,
                  'gen_ai.tool.name': target,
                  'gen_ai.operation.name': 'execute_tool',
                  'switchyard.upstream': ctx.upstream,
                  'mcp.protocol.version': info.revision,
                };
      else {
        attributes = { 'mcp.method.name': method };
        if (target !== undefined) attributes[targetKey(method)!] = target;
        if (method === 'tools/call') attributes['gen_ai.operation.name'] = 'execute_tool';
        if (ctx.upstream !== undefined) attributes['switchyard.upstream'] = ctx.upstream;
        if (info?.revision) attributes['mcp.protocol.version'] = info.revision;
        if (info?.network !== undefined) attributes['network.transport'] = info.network;
        // @see telemetry digest §2 (server.address, and server.port when it is set) and §8 (the upstream)
        if (endpoint !== undefined) {
          attributes['server.address'] = endpoint.address;
          attributes['server.port'] = endpoint.port;
        }
      }
      const parent = resolve(ctx.traceContext);
      client = open(spanName(spanNames, method, target), SPAN_CLIENT, parent, performance.now(), attributes);
      if (method === 'tools/call') client.toolsCall = true;
    } catch (err) {
      return Promise.reject(err);
    }
    let pending: Promise<JsonObject>;
    try {
      // @see telemetry digest §8: overwrite traceparent toward the upstream with the client span's context
      pending = next(deriveTraceContext(ctx, client));
    } catch (err) {
      clientFailed(client, err);
      return Promise.reject(err);
    }
    return pending.then(
      (result) => clientDone(client, result),
      (err: unknown) => {
        clientFailed(client, err);
        throw err;
      },
    );
  };

  let closed: Promise<void> | undefined;
  return {
    enabled: true,
    interceptor,
    flush: () => processor.forceFlush(),
    close(timeoutMs?: number) {
      closed ??= (async () => {
        unsubscribe();
        if (subscribed) {
          subscribed = false;
          subscribedTracers--;
        }
        const shutdown = processor.shutdown();
        if (timeoutMs === undefined) return shutdown;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`trace export still unfinished after ${timeoutMs} ms; the spans not yet exported are dropped`)), timeoutMs);
        });
        try {
          await Promise.race([shutdown, late]);
        } finally {
          clearTimeout(timer);
        }
      })();
      return closed;
    },
  };
}

/**
 * What the `trace export failed` line says of an export's error: its type and the status line's
 * reason (200 characters at most) as `err`, the HTTP status (or the socket error's code) and the
 * body's length, never the collector's response body. The
 * exporter keeps that body in the error's `data` (up to its own 4 MiB bound); logged as it was, a
 * collector or proxy that echoes the request (`Cannot POST /<key>/v1/traces`, or its headers)
 * wrote the endpoint's path, query or export headers into the log, which the `tracing on` line
 * withholds on purpose (`test/regressions/trace-export-failure-body.test.ts`).
 */
export function exportFailure(error: Error | undefined): Record<string, unknown> {
  if (error === undefined) return {};
  const code = (error as { code?: unknown }).code;
  const data = (error as { data?: unknown }).data;
  return {
    err: `${error.name}: ${String(error.message).slice(0, 200)}`,
    ...(typeof code === 'number' || typeof code === 'string' ? { code } : {}),
    ...(typeof data === 'string' ? { bodyChars: data.length } : {}),
  };
}
