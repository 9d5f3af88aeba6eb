// W3C trace context of an inbound request, as the front doors find it: in `_meta` (every MCP
// era carries it there) or, failing that, in the HTTP `traceparent` / `tracestate` headers.

import type { HeaderBag } from './exchange.js';
import type { RequestContext } from './request.js';

/** The trace context a request carries: `traceparent` and, when present, `tracestate`. */
export type TraceContext = NonNullable<RequestContext['traceContext']>;

/** The fields a `traceparent` carries in every version. */
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

/**
 * The longest `traceparent` of a later version accepted, characters. The spec sets no bound on
 * what a later version appends; ours keeps what is forwarded upstream bounded.
 */
export const MAX_TRACEPARENT_LENGTH = 512;

/** Version 00: 2-hex version, 32-hex trace id, 16-hex parent id, 2-hex flags, nothing after. @see W3C Trace Context §3.2.2 */
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/**
 * A later version (01–fe): the version-00 fields at the same places, then either the end or a
 * `-` and fields this version does not know (visible ASCII, not parsed).
 */
const LATER_VERSION = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-[\x21-\x7e]*)?$/;
/** All-zero ids are invalid. @see W3C Trace Context §3.2.2.3, §3.2.2.4 */
export const ZERO_TRACE_ID = '0'.repeat(32);
export const ZERO_SPAN_ID = '0'.repeat(16);
/** `tracestate`: at most 32 list members of at most 256 characters; printable ASCII only. @see W3C Trace Context §3.3 */
const TRACESTATE = /^[\x20-\x7e]{0,8192}$/;

/**
 * Parses a `traceparent` (lower-case hex, `-` separators, neither id all zeros). Version 00 must be
 * exactly 55 characters. A later version is read as the spec asks of a vendor that meets one: the
 * trace id, parent id and flags at version 00's places, followed by the end or a `-`; what comes
 * after is not parsed. Version `ff` is invalid. Anything else is refused (undefined), and the
 * caller starts a new trace.
 * @see W3C Trace Context §3.2.2 (traceparent header field values), §3.2.2.3 (trace-id),
 *   §3.2.2.4 (parent-id), "Versioning of traceparent" (a higher version SHOULD be parsed this way)
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length < TRACEPARENT_LENGTH || value.length > MAX_TRACEPARENT_LENGTH) return undefined;
  const m = value.startsWith('00') ? VERSION_00.exec(value) : LATER_VERSION.exec(value);
  if (!m) return undefined;
  const [traceId, spanId, flags] = m.length === 5 ? [m[2], m[3], m[4]] : [m[1], m[2], m[3]];
  if (m.length === 5 && m[1] === 'ff') return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

function of(traceparent: unknown, tracestate: unknown): TraceContext | undefined {
  if (typeof traceparent !== 'string' || parseTraceparent(traceparent) === undefined) return undefined;
  return typeof tracestate === 'string' && tracestate !== '' && TRACESTATE.test(tracestate) ? { traceparent, tracestate } : { traceparent };
}

/**
 * A trace context from its two values as carried elsewhere (a message between replicas): the
 * `traceparent` when well formed, with the `tracestate` when that is visible ASCII of at most 8192
 * characters; undefined otherwise (a new trace starts).
 * @see W3C Trace Context §3.2 (traceparent), §3.3 (tracestate)
 */
export function traceContextOf(traceparent: unknown, tracestate: unknown): TraceContext | undefined {
  return of(traceparent, tracestate);
}

/**
 * The trace context in a request's `params._meta` (`traceparent`, `tracestate`), when well formed.
 * @see OTel semantic conventions for MCP, "Context propagation" (`params._meta`); MCP 2026-07-28 basic#meta
 */
export function traceContextOfMeta(params: unknown): TraceContext | undefined {
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  if (meta === null || typeof meta !== 'object') return undefined;
  const m = meta as Record<string, unknown>;
  return of(m.traceparent, m.tracestate);
}

/**
 * The trace context of the HTTP request's `traceparent` / `tracestate` headers, when well formed
 * (one `traceparent` field line only). Used where `_meta` carries none.
 * @see W3C Trace Context §3.2 (traceparent header), §3.3 (tracestate header)
 */
export function traceContextOfHeaders(headers: HeaderBag | undefined): TraceContext | undefined {
  if (!headers || headers.count('traceparent') !== 1) return undefined;
  return of(headers.get('traceparent')?.trim(), headers.get('tracestate'));
}
