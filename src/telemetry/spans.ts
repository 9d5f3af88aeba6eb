// The spans Switchyard records: two per request (SERVER, CLIENT), made here and handed, once
// ended, to the OpenTelemetry SDK's span processor (batching) and exporter (OTLP). The SDK's own
// Tracer and Span were the largest part of tracing's price (about 12 µs of two spans per request:
// API contexts, attribute sanitizing, a time conversion per call, ids from Math.random rendered
// through a Buffer; docs/performance.md "Tracing"). What the exporter reads is the SDK's
// ReadableSpan, filled in the same way; sampling follows the OTel specification's built-in samplers.

import { randomFillSync } from 'node:crypto';
import type { Attributes, HrTime, SpanContext, SpanKind, SpanStatus, TraceState } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** W3C trace flags: sampled. @see W3C Trace Context §3.2.2.5 */
export const FLAG_SAMPLED = 1;

/** A parent as a span sees it: its ids, whether it was sampled, and whether it came from another process. */
export interface SpanParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  /** The `tracestate` that came with it, raw (absent or undefined without one). */
  readonly tracestate?: string;
  /** True for a parent from a client or another service; false for one of ours. */
  readonly remote: boolean;
}

/**
 * The sampling decision for a new span, by the sampler `OTEL_TRACES_SAMPLER` names: `always_on`,
 * `always_off`, `traceidratio` (the root decision) and their `parentbased_` forms, which follow a
 * parent's sampled flag when there is a parent (the specification's default delegates).
 * @see OpenTelemetry specification, trace/sdk.md "Built-in samplers" (ParentBased defaults)
 */
export type Decide = (parent: SpanParent | undefined, traceId: string) => boolean;

/** Random ids from a pool of crypto randomness, refilled when used up. */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
/** Bytes of the pool handed out; the pool starts used up. */
let poolAt = POOL_BYTES;
const ZERO_SPAN_ID = '0'.repeat(16);
const ZERO_TRACE_ID = '0'.repeat(32);
/** A byte's two lower-case hex digits, as character codes (high, low). */
const HI = new Uint8Array(256);
const LO = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  HI[b] = '0123456789abcdef'.charCodeAt(b >> 4);
  LO[b] = '0123456789abcdef'.charCodeAt(b & 15);
}

/**
 * A random id of `bytes` bytes as lower-case hex, never all zeros (W3C forbids those). The bytes
 * come from a pool of 4 KiB of crypto randomness; the id is written straight into one flat string
 * of its own (`String.fromCharCode`): a slice of the pool as one hex string was a view of that
 * string plus its share of it (49 and 65 B an id against 32 and 48), and slower.
 * @see W3C Trace Context §3.2.2.3 (trace-id), §3.2.2.4 (parent-id)
 */
export function randomId(bytes: 8 | 16): string {
  if (poolAt + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const p = pool;
  const i = poolAt;
  poolAt += bytes;
  // prettier-ignore
  const id = bytes === 8
    ? String.fromCharCode(HI[p[i]], LO[p[i]], HI[p[i + 1]], LO[p[i + 1]], HI[p[i + 2]], LO[p[i + 2]], HI[p[i + 3]], LO[p[i + 3]], HI[p[i + 4]], LO[p[i + 4]], HI[p[i + 5]], LO[p[i + 5]], HI[p[i + 6]], LO[p[i + 6]], HI[p[i + 7]], LO[p[i + 7]])
    : String.fromCharCode(HI[p[i]], LO[p[i]], HI[p[i + 1]], LO[p[i + 1]], HI[p[i + 2]], LO[p[i + 2]], HI[p[i + 3]], LO[p[i + 3]], HI[p[i + 4]], LO[p[i + 4]], HI[p[i + 5]], LO[p[i + 5]], HI[p[i + 6]], LO[p[i + 6]], HI[p[i + 7]], LO[p[i + 7]], HI[p[i + 8]], LO[p[i + 8]], HI[p[i + 9]], LO[p[i + 9]], HI[p[i + 10]], LO[p[i + 10]], HI[p[i + 11]], LO[p[i + 11]], HI[p[i + 12]], LO[p[i + 12]], HI[p[i + 13]], LO[p[i + 13]], HI[p[i + 14]], LO[p[i + 14]], HI[p[i + 15]], LO[p[i + 15]]);
  // A chance of 2^-64 or less; the next id is as random.
  return id === (bytes === 8 ? ZERO_SPAN_ID : ZERO_TRACE_ID) ? randomId(bytes) : id;
}

/**
 * An epoch time in ms as OpenTelemetry's `[seconds, nanoseconds]`.
 * @see @opentelemetry/core millisToHrTime (the same rounding, carried into the seconds)
 */
export function hrTimeOf(epochMs: number): HrTime {
  let s = Math.floor(epochMs / 1000);
  let ns = Math.round((epochMs - s * 1000) * 1e6);
  if (ns >= 1e9) {
    s += 1;
    ns -= 1e9;
  }
  return [s, ns];
}

/** `end - start`, where `end` is not before `start`. */
function durationOf(start: HrTime, end: HrTime): HrTime {
  let s = end[0] - start[0];
  let ns = end[1] - start[1];
  if (ns < 0) {
    s -= 1;
    ns += 1e9;
  }
  return [s, ns];
}

/** What every span of one tracer shares. */
export interface SpanScope {
  resource: Resource;
  scope: InstrumentationScope;
  /** Longest attribute value, characters (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`). */
  attributeValueLengthLimit: number;
  /** Where an ended span goes (the SDK's batch processor). */
  onEnd(span: ReadableSpan): void;
}

const NO_LINKS: never[] = [];
const NO_EVENTS: TimedEvent[] = [];
const NO_TIME: HrTime = [0, 0];
/** @see OTel trace API "Set Status" (UNSET is code 0) */
const STATUS_UNSET: SpanStatus = { code: 0 };

/**
 * One span, in one object: the context that propagates (the W3C `traceparent` and `tracestate`,
 * read through getters: it has no fields of its own to spread, and serializes as those two alone),
 * the OTel {@link SpanContext} (what `spanContext()` returns: the span itself), a local
 * {@link SpanParent} of other spans, and, when sampled, the record the SDK's processors and
 * exporters read once it has ended ({@link ReadableSpan}, read through getters). An unsampled span
 * records nothing: its attribute, status and end calls do nothing, and it never reaches the
 * processor.
 *
 * What is read seldom is made when read: the `traceparent` (a server span's is read only when its
 * request reaches no upstream call, a client span's when its upstream carries it) and the times as
 * OTel's `[seconds, nanoseconds]` (the exporter reads each once). Times are `performance.now()`
 * ms, placed on the wall clock as the SDK places them (the offset between the two clocks read
 * when the span starts).
 * @see W3C Trace Context §3.2 (traceparent), §3.3 (tracestate); OTel trace API (SpanContext, Span)
 */
export class Span implements ReadableSpan, SpanContext, SpanParent {
  readonly #traceId: string;
  readonly #spanId: string;
  readonly #traceFlags: number;
  readonly #traceState: TraceState | undefined;
  /** The traceState written again (what propagates), undefined when empty. */
  readonly #tracestate: string | undefined;
  #traceparent: string | undefined = undefined;
  /** The tracer's shared parts; undefined when the span is not sampled (not recorded). */
  readonly #scope: SpanScope | undefined;
  readonly #name: string;
  readonly #kind: SpanKind;
  readonly #parent: SpanContext | undefined;
  readonly #attributes: Attributes;
  /**
   * Start and end as given (`performance.now()` ms; the end undefined until ended), and the offset
   * that places them on the wall clock (wall − monotonic, ms). Kept as given, not added up: a
   * number computed here would be a new heap number per field, the one given is referenced (these
   * fields also hold undefined, so V8 keeps them tagged, not as boxed doubles of their own).
   */
  readonly #startedAt: number | undefined;
  readonly #offsetMs: number | undefined;
  #endedAt: number | undefined = undefined;
  #status: SpanStatus = STATUS_UNSET;

  /**
   * @param scope the tracer's shared parts when the span is sampled (recorded), else undefined
   * @param traceId 32 lower-case hex digits; `spanId` 16 (W3C Trace Context §3.2.2.3–4)
   * @param traceFlags W3C trace flags ({@link FLAG_SAMPLED} or 0)
   * @param traceState the parent's tracestate, parsed (the SDK's TraceState), as a span context holds it
   * @param parent the parent's context (a local parent: its own span), undefined for a root
   * @param startedAt `performance.now()` ms
   * @param attributes owned by the span from now on (strings longer than the scope's limit are cut)
   */
  constructor(
    scope: SpanScope | undefined,
    name: string,
    kind: SpanKind,
    traceId: string,
    spanId: string,
    traceFlags: number,
    traceState: TraceState | undefined,
    parent: SpanContext | undefined,
    startedAt: number,
    attributes: Attributes,
  ) {
    this.#traceId = traceId;
    this.#spanId = spanId;
    this.#traceFlags = traceFlags;
    this.#traceState = traceState;
    // As the SDK propagates it: the parent's tracestate, parsed (invalid members dropped) and written again.
    this.#tracestate = traceState === undefined ? undefined : traceState.serialize() || undefined;
    this.#scope = scope;
    this.#name = name;
    this.#kind = kind;
    this.#parent = parent;
    this.#attributes = attributes;
    if (scope === undefined) {
      this.#offsetMs = undefined;
      this.#startedAt = undefined;
      return;
    }
    this.#offsetMs = Date.now() - performance.now();
    this.#startedAt = startedAt;
    const limit = scope.attributeValueLengthLimit;
    for (const k in attributes) {
      const v = attributes[k];
      if (typeof v === 'string' && v.length > limit) attributes[k] = v.slice(0, limit);
    }
  }

  /** `00-{trace-id}-{parent-id}-{flags}`: this span as a parent (made on first read). @see W3C Trace Context §3.2 */
  get traceparent(): string {
    return (this.#traceparent ??= `00-${this.#traceId}-${this.#spanId}-${this.#traceFlags & FLAG_SAMPLED ? '01' : '00'}`);
  }
  /** What propagates beside it: the parent's tracestate, parsed and written again; undefined without one. */
  get tracestate(): string | undefined {
    return this.#tracestate;
  }
  get traceId(): string {
    return this.#traceId;
  }
  get spanId(): string {
    return this.#spanId;
  }
  get traceFlags(): number {
    return this.#traceFlags;
  }
  get traceState(): TraceState | undefined {
    return this.#traceState;
  }
  /** Ours: never from another process. */
  get isRemote(): boolean {
    return false;
  }
  get remote(): boolean {
    return false;
  }
  /** True when sampled: attributes, status and the end are recorded and exported. */
  get recording(): boolean {
    return this.#scope !== undefined;
  }
  get name(): string {
    return this.#name;
  }
  get kind(): SpanKind {
    return this.#kind;
  }
  get parentSpanContext(): SpanContext | undefined {
    return this.#parent;
  }
  get attributes(): Attributes {
    return this.#attributes;
  }
  get status(): SpanStatus {
    return this.#status;
  }
  get ended(): boolean {
    return this.#endedAt !== undefined;
  }
  get startTime(): HrTime {
    return this.#startedAt === undefined ? NO_TIME : hrTimeOf(this.#startedAt + this.#offsetMs!);
  }
  get endTime(): HrTime {
    return this.#endedAt === undefined ? NO_TIME : hrTimeOf(this.#endedAt + this.#offsetMs!);
  }
  get duration(): HrTime {
    return this.#endedAt === undefined ? NO_TIME : durationOf(this.startTime, this.endTime);
  }
  get resource(): Resource {
    return this.#scope!.resource;
  }
  get instrumentationScope(): InstrumentationScope {
    return this.#scope!.scope;
  }
  get links(): never[] {
    return NO_LINKS;
  }
  get events(): TimedEvent[] {
    return NO_EVENTS;
  }
  get droppedAttributesCount(): number {
    return 0;
  }
  get droppedEventsCount(): number {
    return 0;
  }
  get droppedLinksCount(): number {
    return 0;
  }

  spanContext(): SpanContext {
    return this;
  }

  /** Sets one attribute (cut to the limit); ignored once ended or when not recording. */
  setAttribute(key: string, value: string): void {
    const scope = this.#scope;
    if (this.#endedAt !== undefined || scope === undefined) return;
    const limit = scope.attributeValueLengthLimit;
    this.#attributes[key] = value.length > limit ? value.slice(0, limit) : value;
  }

  /** Sets the status; ignored once ended or when not recording. @see OTel trace API "Set Status" */
  setStatus(status: SpanStatus): void {
    if (this.#endedAt === undefined && this.#scope !== undefined) this.#status = status;
  }

  /**
   * Ends the span at `endedAt` (`performance.now()` ms; default now) and hands it to the scope's
   * processor; a second call, or a call on a span not recording, does nothing. As the SDK does,
   * an end before the start becomes the start, with no duration.
   */
  end(endedAt: number = performance.now()): void {
    const scope = this.#scope;
    if (this.#endedAt !== undefined || scope === undefined) return;
    this.#endedAt = endedAt < this.#startedAt! ? this.#startedAt : endedAt;
    scope.onEnd(this);
  }

  /** What a serialized trace context shows: the W3C fields alone (`tracestate` only with one). */
  toJSON(): { traceparent: string; tracestate?: string } {
    return this.tracestate !== undefined ? { traceparent: this.traceparent, tracestate: this.tracestate } : { traceparent: this.traceparent };
  }
}
