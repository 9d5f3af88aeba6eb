// W3C trace context of an inbound request, as the front doors find it: in `_meta` (every MCP
// era carries it there) or, failing that, in the HTTP `traceparent` / `tracestate` headers.

import type { HeaderBag } from './exchange.js';
import type { RequestContext } from './request.js';

/** The trace context a request carries: `traceparent` and, when present, `tracestate`. */
export type TraceContext = NonNullable<RequestContext['traceContext']>;

/** A version-00 `traceparent`: 2-hex version, 32-hex trace id, 16-hex parent id, 2-hex flags. @see W3C Trace Context §3.2.2 */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** `tracestate`: at most 32 list members of at most 256 characters; printable ASCII only. @see W3C Trace Context §3.3 */
const TRACESTATE = /^[\x20-\x7e]{0,8192}$/;

function of(traceparent: unknown, tracestate: unknown): TraceContext | undefined {
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  // All-zero ids are invalid (W3C Trace Context §3.2.2.3, §3.2.2.4).
  if (traceparent.slice(3, 35) === '0'.repeat(32) || traceparent.slice(36, 52) === '0'.repeat(16)) return undefined;
  return typeof tracestate === 'string' && tracestate !== '' && TRACESTATE.test(tracestate) ? { traceparent, tracestate } : { traceparent };
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
