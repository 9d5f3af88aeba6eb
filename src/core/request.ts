// The protocol-neutral request context that dialects build and upstreams consume.

import type { Identity } from './identity.js';
import type { Component } from './interceptor.js';
import type { JsonObject, RequestId } from './message.js';

/** `{ name, version, title? }` of a client or server (MCP Implementation). */
export interface Implementation {
  name: string;
  version: string;
  [k: string]: unknown;
}

/** Params of a progress notification, without the token (the dialect adds the client's). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Params of a `notifications/message` log message (RFC 5424 level names). */
export interface LogMessage {
  level: string;
  logger?: string;
  data: unknown;
}

/**
 * One client request as the core sees it, shaped after the 2026-07-28 model: every request is
 * self-describing (version, client info and capabilities travel with it) and server input needs
 * come back as `input_required` results. Older dialects fill it from their session state.
 * Its optional fields say `| undefined` as well: the context class holds each one (undefined when
 * absent), and a consumer compiled with `exactOptionalPropertyTypes` checks the declarations.
 * @see MCP 2026-07-28 basic#meta
 * @see test/regressions/library-types-exact-optional.test.ts
 */
export interface RequestContext {
  /** JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** Params without the protocol `_meta` keys (other `_meta` keys, e.g. traceparent, stay). */
  params: JsonObject;
  /** The client's protocol revision. */
  protocolVersion: string;
  /** The client's Implementation, when it sent one. */
  clientInfo: Implementation | undefined;
  /** The client's declared capabilities (`{}` = none). */
  clientCapabilities: JsonObject;
  /** Requested log level (RFC 5424 name); no log messages when undefined. */
  logLevel: string | undefined;
  /** The verified caller (authentication, or the embedding host); null when unauthenticated. */
  identity: Identity | null;
  /** The mount the request arrived on (config name; `default` for a flag-configured gateway). */
  mount?: string | undefined;
  /** The client's dialect id (`2026-07-28`, `2025-03-26`, `2024-11-05`). */
  dialect?: string | undefined;
  /** The upstream this dispatch goes to (config name); set by the executor per upstream call. */
  upstream?: string | undefined;
  /** The component the request names (set by the executor per upstream call; see componentOf). */
  component?: Component | undefined;
  /**
   * W3C trace context to propagate upstream (`traceparent`, optional `tracestate`), set by the
   * tracing interceptor; upstream connectors send it as headers and, where the era carries it, in `_meta`.
   * @see W3C Trace Context §3
   */
  traceContext?: { traceparent: string; tracestate?: string } | undefined;
  /**
   * The client session this request belongs to (2025-era and HTTP+SSE sessions, the stdio
   * front door); undefined for stateless 2026-07-28 requests. Stateful upstreams key their
   * upstream sessions on it.
   */
  sessionKey?: string | undefined;
  /**
   * The client's `Authorization` header. Upstreams forward it only when configured to
   * (`forwardAuthorization`); by default no token passes through (2025-11-25 basic/authorization,
   * token passthrough is forbidden).
   */
  authorization?: string | undefined;
  /**
   * The JSON-RPC id of the client's request (a string, or an integer: a bigint beyond 2^53), for
   * telemetry (`jsonrpc.request.id` on the server span); undefined for what the gateway asks on
   * its own behalf. Upstreams never see it: each connector numbers its own requests.
   * @see telemetry digest §2 (jsonrpc.request.id); JSON-RPC 2.0 §4 (id)
   */
  rpcId?: RequestId | undefined;
  /** Aborted when the client cancels, goes away, or the deadline passes. */
  signal: AbortSignal;
  /** The client's progress token, when it asked for progress. */
  progressToken: RequestId | undefined;
  /** Sends a progress update on the request's own channel. Never throws. */
  onProgress(update: ProgressUpdate): void;
  /** Sends a log message on the request's own channel, if `logLevel` admits it. Never throws. */
  onLog(message: LogMessage): void;
  /**
   * Sends a real server-to-client request (elicitation/create, sampling/createMessage,
   * roots/list) and resolves with the client's result. Present only for dialects whose
   * transport can carry server requests (2025 era, HTTP+SSE); 2026 clients get
   * `input_required` results instead.
   * @throws SwitchyardError SWY_ERR_REQ_INPUT_UNSUPPORTED, PeerRpcError from the client
   */
  ask: ((method: string, params: JsonObject, signal: AbortSignal) => Promise<JsonObject>) | undefined;
  /**
   * Sends the client a server notification that concerns a server request it was sent with
   * `ask` (2025-11-25 `notifications/elicitation/complete`), on the request's own stream while it
   * is open, else on the session's stream; false when nothing carried it (the session ended, has
   * no stream open, or its revision has no such notification). Present where `ask` is (2025 era,
   * HTTP+SSE, the stdio front door); 2026-07-28 clients have none (stateless-2026-07-28 §5: no
   * `elicitationId`, no completion notification).
   * @see 2025-11-25 client/elicitation#url-mode (completion notifications)
   */
  notifyClient?: ((method: string, params: JsonObject) => boolean) | undefined;
  /**
   * True for a request the gateway makes on a client request's behalf, not one the client sent
   * (the 2026-07-28 door's `tools/list` for a `tools/call`'s x-mcp-header annotations): rate
   * limits take no token for it; policy and curation apply to it as to that caller's own.
   */
  onBehalf?: boolean | undefined;
  /**
   * The rate-limit buckets this client request has already paid a token from (each limiter's own
   * keys), shared by every call the gateway makes for the one request: an aggregate mount's member
   * calls, each page of a member's list, each member tried for a read. A limiter takes a bucket's
   * token once per request and skips it on the calls after. Set by the aggregate for each request
   * it serves; undefined where one client request is one upstream call (each call pays its own).
   * @see docs/policy.md (Rate limits: what an aggregate request costs)
   */
  charged?: Set<string> | undefined;
}

/** A notification the core hands to subscribers: `{ method, params }`. */
export interface CoreNotification {
  method: string;
  params: JsonObject;
}

/**
 * What a subscriber wants (2026-07-28 basic/patterns/subscriptions `notifications` param).
 */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /**
   * Log messages (`notifications/message`) the upstream sends on the client's own upstream
   * session outside any request. Only a client session's own notification stream asks for them
   * (its level filter applies); nothing gateway-wide carries them (docs/upstreams.md, the routing table).
   */
  logMessages?: boolean;
}

/** RFC 5424 level names in increasing severity (MCP server/utilities/logging). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;

/** True when a message at `level` passes a threshold `min`. */
export function levelAdmits(min: string | undefined, level: string): boolean {
  if (min === undefined) return false;
  return LOG_LEVELS.indexOf(level as (typeof LOG_LEVELS)[number]) >= LOG_LEVELS.indexOf(min as (typeof LOG_LEVELS)[number]);
}
