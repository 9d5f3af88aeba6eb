// W3C Trace Context `traceparent`: a strict parser and its formatter (no OpenTelemetry needed).

import { SwitchyardError } from '../core/errors.js';

/** The fields of a version-00 `traceparent`. */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** The parent span id: 16 lower-case hex digits, not all zero. */
  spanId: string;
  /** The trace flags byte, 0–255 (bit 0: sampled). */
  traceFlags: number;
}

/** A version-00 `traceparent` is exactly this long, characters. @see W3C Trace Context §3.2 */
export const TRACEPARENT_LENGTH = 55;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * Parses a `traceparent` strictly: version `00` only, `-` separators, exact lengths, lower-case
 * hex, and neither id all zeros. Anything else, including a later version's longer form, is
 * refused (undefined) and the caller starts a new trace.
 * @see W3C Trace Context §3.2.2 (traceparent header field values), §3.2.2.3 (trace-id), §3.2.2.4 (parent-id)
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length !== TRACEPARENT_LENGTH) return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m) return undefined;
  // @see W3C Trace Context §3.2.2.3, §3.2.2.4: all-zero trace-id and parent-id are invalid
  if (m[1] === ZERO_TRACE_ID || m[2] === ZERO_SPAN_ID) return undefined;
  return { traceId: m[1], spanId: m[2], traceFlags: Number.parseInt(m[3], 16) };
}

/**
 * Formats a version-00 `traceparent`: `00-<traceId>-<spanId>-<flags as two hex digits>`.
 * @throws SwitchyardError SWY_ERR_INTERNAL_FAULT when an id is malformed or zero, or the flags are not a byte
 * @see W3C Trace Context §3.2.2
 */
export function formatTraceparent(tp: TraceParent): string {
  const ok =
    TRACE_ID.test(tp.traceId) &&
    tp.traceId !== ZERO_TRACE_ID &&
    SPAN_ID.test(tp.spanId) &&
    tp.spanId !== ZERO_SPAN_ID &&
    Number.isInteger(tp.traceFlags) &&
    tp.traceFlags >= 0 &&
    tp.traceFlags <= 255;
  if (!ok) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'malformed trace context' });
  return `00-${tp.traceId}-${tp.spanId}-${tp.traceFlags.toString(16).padStart(2, '0')}`;
}
