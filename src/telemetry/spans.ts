// The spans Switchyard records: two per request (SERVER, CLIENT), made here and handed, once
// ended, to the OpenTelemetry SDK's span processor (batching) and exporter (OTLP). The SDK's own
// Tracer and Span were the largest part of tracing's price (about 12 µs of two spans per request:
// API contexts, attribute sanitizing, a time conversion per call, ids from Math.random rendered
// through a Buffer; docs/performance.md "Tracing"). What the exporter reads is the SDK's
// ReadableSpan, filled in the same way; sampling follows the OTel specification's built-in samplers.

import { randomFillSync } from 'node:crypto';
import type { Attributes, HrTime, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** W3C trace flags: sampled. @see W3C Trace Context §3.2.2.5 */
export const FLAG_SAMPLED = 1;

/** A parent as a span sees it: its ids, whether it was sampled, and whether it came from another process. */
export interface SpanParent {
  traceId: string;
  spanId: string;
  traceFlags: number;
  /** The `tracestate` that came with it, raw. */
  tracestate: string | undefined;
  /** True for a parent from a client or another service; false for one of ours. */
  remote: boolean;
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
/** The pool as lower-case hex: ids are slices of it (one conversion per 4 KiB, not one per id). */
let poolHex = '';
let hexAt = 0;
const ZERO_SPAN_ID = '0'.repeat(16);
const ZERO_TRACE_ID = '0'.repeat(32);

/**
 * A random id of `bytes` bytes as lower-case hex, never all zeros (W3C forbids those). An id is a
 * slice of a hex string of 4 KiB of randomness (V8 keeps such a slice as a view of that string).
 * @see W3C Trace Context §3.2.2.3 (trace-id), §3.2.2.4 (parent-id)
 */
export function randomId(bytes: 8 | 16): string {
  const chars = bytes * 2;
  if (hexAt + chars > poolHex.length) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    hexAt = 0;
  }
  const id = poolHex.slice(hexAt, hexAt + chars);
  hexAt += chars;
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

/** `end - start`, or undefined when `end` is before `start`. */
function durationOf(start: HrTime, end: HrTime): HrTime | undefined {
  let s = end[0] - start[0];
  let ns = end[1] - start[1];
  if (ns < 0) {
    s -= 1;
    ns += 1e9;
  }
  return s < 0 ? undefined : [s, ns];
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
 * One recorded (sampled) span, readable by the SDK's processors and exporters once ended. Times
 * are `performance.now()` ms, placed on the wall clock as the SDK places them (the offset between
 * the two clocks read when the span starts).
 */
export class RecordedSpan implements ReadableSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  // Shared until the span ends or gets a status (both replace them; nothing writes into them).
  endTime: HrTime = NO_TIME;
  duration: HrTime = NO_TIME;
  ended = false;
  status: SpanStatus = STATUS_UNSET;
  readonly attributes: Attributes;
  readonly links = NO_LINKS;
  readonly events = NO_EVENTS;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly #context: SpanContext;
  readonly #scope: SpanScope;
  /** Wall clock minus monotonic clock, ms, when the span started. */
  readonly #offsetMs: number;

  /**
   * @param startedAt `performance.now()` ms
   * @param attributes owned by the span from now on (strings longer than the scope's limit are cut)
   */
  constructor(
    scope: SpanScope,
    name: string,
    kind: SpanKind,
    context: SpanContext,
    parent: SpanContext | undefined,
    startedAt: number,
    attributes: Attributes,
  ) {
    this.#scope = scope;
    this.#context = context;
    this.#offsetMs = Date.now() - performance.now();
    this.name = name;
    this.kind = kind;
    this.parentSpanContext = parent;
    this.startTime = hrTimeOf(startedAt + this.#offsetMs);
    this.resource = scope.resource;
    this.instrumentationScope = scope.scope;
    const limit = scope.attributeValueLengthLimit;
    for (const k in attributes) {
      const v = attributes[k];
      if (typeof v === 'string' && v.length > limit) attributes[k] = v.slice(0, limit);
    }
    this.attributes = attributes;
  }

  spanContext(): SpanContext {
    return this.#context;
  }

  /** Sets one attribute (cut to the limit); ignored once ended. */
  setAttribute(key: string, value: string): void {
    if (this.ended) return;
    const limit = this.#scope.attributeValueLengthLimit;
    this.attributes[key] = value.length > limit ? value.slice(0, limit) : value;
  }

  /** Sets the status; ignored once ended. @see OTel trace API "Set Status" */
  setStatus(status: SpanStatus): void {
    if (!this.ended) this.status = status;
  }

  /** Ends the span at `endedAt` (`performance.now()` ms; default now) and hands it on; a second call does nothing. */
  end(endedAt: number = performance.now()): void {
    if (this.ended) return;
    this.endTime = hrTimeOf(endedAt + this.#offsetMs);
    const duration = durationOf(this.startTime, this.endTime);
    // As the SDK does: an end before the start becomes the start, with no duration.
    if (duration) this.duration = duration;
    else this.endTime = this.startTime;
    this.ended = true;
    this.#scope.onEnd(this);
  }
}
