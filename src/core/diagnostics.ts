// Diagnostics channels: what observers (metrics, traces, the status page, access logs) subscribe
// to. Publishing costs nothing while no one subscribes (node:diagnostics_channel `hasSubscribers`).

import diagnostics from 'node:diagnostics_channel';
import type { ErrorCode, Fault } from './errors.js';
import type { RequestContext } from './request.js';

/**
 * A client request, from admission to its answer. `startedAt` is `performance.now()` ms; `ctx`
 * is the request's context (identity included: observers must not log its claims).
 */
export interface RequestStartMessage {
  ctx: RequestContext;
  startedAt: number;
}

/** The end of a client request: its result, or the error it was answered with. */
export interface RequestEndMessage {
  ctx: RequestContext;
  startedAt: number;
  /** Duration, ms. */
  durationMs: number;
  /** The catalogue code when Switchyard refused or failed it; undefined on success or an upstream JSON-RPC error. */
  code?: ErrorCode;
  /** The JSON-RPC error code sent, when the answer was an error. */
  rpcCode?: number;
  /** Who is at fault, when the answer was an error. */
  fault?: Fault;
  /** The error, when the answer was an error. */
  error?: unknown;
}

/** One call to an upstream (inside a client request; an aggregate mount makes several). */
export interface UpstreamCallMessage {
  ctx: RequestContext;
  /** The upstream's config name. */
  upstream: string;
  startedAt: number;
  durationMs?: number;
  code?: ErrorCode;
  rpcCode?: number;
  error?: unknown;
}

/** An upstream's lifecycle. */
export interface UpstreamStateMessage {
  upstream: string;
  /** `spawn`: a child process or connection attempt began; `ready`: it serves; `down`: it failed. */
  state: 'spawn' | 'ready' | 'down';
  /** The revision it speaks, once known. */
  revision?: string;
  /** Transport: `stdio`, `http`, `embedded`, `aggregate`. */
  transport?: string;
  /**
   * An HTTP upstream's server: its URL's host (an IPv6 address without brackets) and port (the
   * scheme's default when the URL has none), from `serverOfUrl` in src/core/url-text.ts. Absent
   * for the other transports, which have no network peer.
   */
  serverAddress?: string;
  /** With `serverAddress`: the TCP port. */
  serverPort?: number;
  /** Why it is down. */
  error?: unknown;
}

/** A client session (2025 era, HTTP+SSE, stdio) opened or closed. */
export interface SessionMessage {
  mount: string;
  dialect: string;
  sessionId: string;
  /** Why it closed: `delete`, `expired`, `revoked`, `idle`, `stream-closed`, `slow-reader`, `credential-refused`, `auth-removed`, `shutdown` (docs/operations.md, "Session lines"). */
  reason?: string;
}

/** A stream (GET, listen, HTTP+SSE, request-scoped SSE) opened or closed. */
export interface StreamMessage {
  mount: string;
  dialect: string;
  /** `get`, `listen`, `http-sse`, `request`. */
  kind: string;
}

/**
 * Events a resumable SSE stream dropped from its buffer (oldest first, at its bounds), or could
 * not keep, before any connection carried them: a client that resumes the stream with
 * `Last-Event-ID` gets the rest without them.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery
 */
export interface StreamDropMessage {
  mount: string;
  dialect: string;
  /** `get` (a 2025 session's GET stream) or `request` (a POST's answer stream). */
  kind: string;
  /** How many events, at least 1. */
  events: number;
}

/**
 * A request refused before it reached the executor (Origin, Host, framing, body size,
 * authentication, session lookup): the catalogue code and the HTTP status sent.
 */
export interface RefusalMessage {
  code: ErrorCode;
  status: number;
  mount?: string;
  dialect?: string;
}

/**
 * The protocol faults an upstream commits that no call sees, each counted on
 * `switchyard_upstream_protocol_faults_total` by `kind` (docs/operations.md, "Metrics"):
 * - `batch_dropped`: a request or notification inside a JSON array from an upstream that does not speak 2025-03-26;
 * - `batched_response`: a response inside a JSON array that answers no call in flight;
 * - `duplicate_response`: a second response for a request already answered;
 * - `oversize`: an SSE event longer than `maxUpstreamMessageBytes` characters (a POST's answer, a GET stream, a listen stream, the HTTP+SSE stream);
 * - `unknown_id`: a response whose id names no request Switchyard sent on that connection;
 * - `unparsable`: a message that is not JSON: a stdio line, a Streamable HTTP JSON body, an SSE event's data (a POST's answer, a GET stream, the HTTP+SSE stream),
 *   an HTTP+SSE POST's answer body that starts as JSON (`{`, `[`), the answer to a message POSTed with no answer awaited.
 * @see JSON-RPC 2.0 §5 (a response's id is the request's), §6 (Batch)
 */
export const UPSTREAM_FAULT_KINDS = ['batch_dropped', 'batched_response', 'duplicate_response', 'oversize', 'unknown_id', 'unparsable'] as const;

/** One of {@link UPSTREAM_FAULT_KINDS}. */
export type UpstreamFaultKind = (typeof UPSTREAM_FAULT_KINDS)[number];

/** One protocol fault an upstream committed outside any call ({@link UPSTREAM_FAULT_KINDS}). */
export interface UpstreamFaultMessage {
  /** The upstream's config name. */
  upstream: string;
  kind: UpstreamFaultKind;
}

/** Channel names, `switchyard:<area>:<event>` as undici names its own (`undici:request:create`). */
export const CHANNELS = {
  requestStart: 'switchyard:request:start',
  requestEnd: 'switchyard:request:end',
  upstreamCallStart: 'switchyard:upstream:call:start',
  upstreamCallEnd: 'switchyard:upstream:call:end',
  upstreamSpawn: 'switchyard:upstream:spawn',
  upstreamReady: 'switchyard:upstream:ready',
  upstreamDown: 'switchyard:upstream:down',
  sessionOpen: 'switchyard:session:open',
  sessionClose: 'switchyard:session:close',
  streamOpen: 'switchyard:stream:open',
  streamClose: 'switchyard:stream:close',
  streamDrop: 'switchyard:stream:drop',
  refusal: 'switchyard:refusal',
  upstreamFault: 'switchyard:upstream:fault',
  reload: 'switchyard:config:reload',
} as const;

/** The channels, created once. Publish with `if (ch.hasSubscribers) ch.publish(msg)`. */
export const channels = {
  requestStart: diagnostics.channel(CHANNELS.requestStart),
  requestEnd: diagnostics.channel(CHANNELS.requestEnd),
  upstreamCallStart: diagnostics.channel(CHANNELS.upstreamCallStart),
  upstreamCallEnd: diagnostics.channel(CHANNELS.upstreamCallEnd),
  upstreamSpawn: diagnostics.channel(CHANNELS.upstreamSpawn),
  upstreamReady: diagnostics.channel(CHANNELS.upstreamReady),
  upstreamDown: diagnostics.channel(CHANNELS.upstreamDown),
  sessionOpen: diagnostics.channel(CHANNELS.sessionOpen),
  sessionClose: diagnostics.channel(CHANNELS.sessionClose),
  streamOpen: diagnostics.channel(CHANNELS.streamOpen),
  streamClose: diagnostics.channel(CHANNELS.streamClose),
  streamDrop: diagnostics.channel(CHANNELS.streamDrop),
  refusal: diagnostics.channel(CHANNELS.refusal),
  upstreamFault: diagnostics.channel(CHANNELS.upstreamFault),
  reload: diagnostics.channel(CHANNELS.reload),
} as const;
