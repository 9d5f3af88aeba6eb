// W3C Trace Context `traceparent`: the parser (src/core/trace.ts, shared with the front doors) and
// the formatter of the version-00 values we send (no OpenTelemetry needed).

import { SwitchyardError } from '../core/errors.js';
import { ZERO_SPAN_ID, ZERO_TRACE_ID, type TraceParent } from '../core/trace.js';

export { parseTraceparent, TRACEPARENT_LENGTH, type TraceParent } from '../core/trace.js';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;

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
