// The client side of each wire era as the upstream connectors see it: what Switchyard sends an
// upstream of that era. The era modules (dialects/<era>/client.ts) implement these interfaces;
// the composition root hands them to the upstream factories, which never import dialects/.

import type { RpcErrorObject } from './errors.js';
import type { JsonObject, RequestId } from './message.js';
import type { Implementation, RequestContext, SubscriptionFilter } from './request.js';
import type { ServerDescription } from './upstream.js';

/**
 * A tool argument a 2026-07-28 request mirrors into an `Mcp-Param-{header}` header (the tool's
 * `x-mcp-header` annotation, read by the era's codec): header suffix, property name, JSON type.
 */
export interface ParamHeader {
  /** Header suffix as annotated (`Mcp-Param-{header}`), compared case-insensitively. */
  header: string;
  /** The top-level argument property it mirrors. */
  property: string;
  /** `string`, `integer` or `boolean`. */
  type: string;
}

/** One message to send upstream, `{ method, params }`; the connector adds `jsonrpc` and its own id. */
export interface OutboundMessage {
  method: string;
  params: JsonObject;
}

/** What an era client reads of a client request to shape it for an upstream. */
export type OutboundContext = Pick<RequestContext, 'method' | 'params' | 'clientInfo' | 'clientCapabilities' | 'logLevel' | 'progressToken' | 'traceContext'>;

/**
 * A reserved MCP `_meta` key: second label `modelcontextprotocol` or `mcp`.
 * @see 2025-11-25 basic#general-fields (`_meta`); 2026-07-28 basic#meta
 */
const RESERVED_META_KEY = /^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.(?:modelcontextprotocol|mcp)(?:\.[A-Za-z0-9-]+)*\//;

/**
 * The `_meta` an outbound request carries in any era, before its era adds its own envelope: the
 * client's own keys (never a reserved one, nor its progressToken: the envelope and the progress
 * token come from the context alone), `progressToken` when given, and the trace context
 * (`traceparent`, and `tracestate` only where the context has one: with a context of ours the
 * client's `tracestate` is not sent beside a `traceparent` it does not belong to).
 * @see OTel semantic conventions for MCP, "Context propagation" (`params._meta`)
 */
export function carriedMeta(ctx: Pick<OutboundContext, 'params' | 'traceContext'>, progressToken?: RequestId): JsonObject {
  const meta: JsonObject = {};
  const trace = ctx.traceContext;
  for (const [k, v] of Object.entries((ctx.params._meta as JsonObject | undefined) ?? {}))
    if (k !== 'progressToken' && !RESERVED_META_KEY.test(k) && !(trace && k === 'tracestate')) meta[k] = v;
  if (progressToken !== undefined) meta.progressToken = progressToken;
  if (trace) {
    meta.traceparent = trace.traceparent;
    if (trace.tracestate !== undefined) meta.tracestate = trace.tracestate;
  }
  return meta;
}

/** The answer to a request, as far as an era client needs to judge it. */
export interface OutboundAnswer {
  result?: JsonObject;
  error?: RpcErrorObject;
}

/**
 * The stateless era (2026-07-28): no handshake; every request carries the protocol `_meta`
 * envelope, and over HTTP the mirrored headers.
 * @see 2026-07-28 basic#meta; basic/transports/streamable-http; server/discover
 */
export interface StatelessEraClient {
  readonly kind: 'stateless';
  /** Revisions this client speaks, newest first. */
  readonly revisions: readonly string[];
  /** The era probe: `server/discover` with the gateway's envelope (stdio probe, first HTTP probe step, HTTP start). */
  discover(gatewayInfo: Implementation): OutboundMessage;
  /**
   * Whether an answer to {@link discover} shows this era: a DiscoverResult whose
   * `supportedVersions` names one of `revisions`, or an error whose `data.supported` does
   * (-32022). Never one error code alone.
   */
  recognises(answer: OutboundAnswer): boolean;
  /** The upstream's description from a DiscoverResult (`fallbackName` when it names no serverInfo). */
  describe(result: JsonObject, fallbackName: string): ServerDescription;
  /**
   * Params of one request: the client's params with the envelope stamped from `ctx` (the
   * gateway's Implementation where the client sent none), W3C trace context in `_meta`, and
   * `progressToken` (ours, unique among our in-flight requests) in place of the client's.
   */
  requestParams(ctx: OutboundContext, gatewayInfo: Implementation, progressToken?: RequestId): JsonObject;
  /** A `subscriptions/listen` request for `filter`, with the gateway's envelope. */
  listen(filter: SubscriptionFilter, gatewayInfo: Implementation): OutboundMessage;
  /**
   * Mirrored headers of one HTTP request (lower-case names): `MCP-Protocol-Version`,
   * `Mcp-Method`, `Mcp-Name` for the named methods, `Mcp-Param-*` for the tool's `x-mcp-header`
   * `annotations`; values outside plain ASCII `=?base64?…?=`-encoded.
   */
  headers(method: string, params: JsonObject, annotations: readonly ParamHeader[]): Record<string, string>;
  /** The mirrored-argument annotations of one tool's `inputSchema` (null: invalid, the tool is unusable). */
  paramHeaders(inputSchema: unknown): ParamHeader[] | null;
  /** A server notification's params as the core sees them: protocol `_meta` keys (the listen's subscriptionId) removed. */
  notificationParams(params: JsonObject): JsonObject;
  /** The notification that cancels our request `id` where closing a stream cannot (stdio). */
  cancelled(id: RequestId, reason: string): OutboundMessage;
}

/**
 * An initialize era (2024-11-05 … 2025-11-25): a handshake opens a session whose revision,
 * capabilities and client identity hold for every later request.
 * @see 2025-11-25 basic/lifecycle; basic/transports#session-management
 */
export interface SessionEraClient {
  readonly kind: 'session';
  /** Revisions this client can negotiate, newest first. */
  readonly revisions: readonly string[];
  /** Capabilities declared on a session several clients share, so that servers offer their input tools. */
  readonly sharedCapabilities: JsonObject;
  /** The `initialize` request offering `revision` (default: the newest of `revisions`). */
  initialize(o: { revision?: string; capabilities: JsonObject; clientInfo: Implementation }): OutboundMessage;
  /** The notification that completes the handshake. */
  initialized(): OutboundMessage;
  /**
   * The revision an InitializeResult settles on.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_PROTOCOL when it is not one of `revisions`
   */
  negotiated(result: JsonObject): string;
  /**
   * The upstream's description from an InitializeResult.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_PROTOCOL when the revision is not one of `revisions`
   */
  describe(result: JsonObject, fallbackName: string): ServerDescription;
  /**
   * Params of one request: protocol `_meta` keys of other eras, `inputResponses` and
   * `requestState` removed, W3C trace context in `_meta`, `progressToken` (ours) in place of the client's.
   */
  requestParams(ctx: OutboundContext, progressToken?: RequestId): JsonObject;
  /** Headers on every HTTP request of a session after its handshake (session id, protocol version). */
  sessionHeaders(session: { id?: string; revision: string }): Record<string, string>;
  /** A server notification's params as the core sees them (`_meta` removed). */
  notificationParams(params: JsonObject): JsonObject;
  /** The notification that cancels our request `id`. */
  cancelled(id: RequestId, reason: string): OutboundMessage;
}

/** Where an HTTP+SSE client POSTs, from the stream's `endpoint` event; or why it refuses the event. */
export type EndpointVerdict = { url: string } | { refused: string };

/**
 * The 2024-11-05 HTTP+SSE transport over the initialize era's vocabulary: one GET stream per
 * session, whose first event names the URL to POST to.
 * @see 2024-11-05 basic/transports (HTTP with SSE)
 */
export interface HttpSseEraClient extends SessionEraClient {
  /** Resolves an `endpoint` event's data against the stream URL; an endpoint on another origin is refused. */
  endpoint(data: string, streamUrl: string): EndpointVerdict;
}

/** Every era's client, as the composition root builds them from dialects/ and hands them on. */
export interface EraClients {
  /** 2026-07-28 (HTTP and stdio). */
  stateless: StatelessEraClient;
  /** The initialize era: Streamable HTTP sessions (2025-03-26 … 2025-11-25) and stdio children. */
  sessions: SessionEraClient;
  /** 2024-11-05 HTTP+SSE. */
  httpSse: HttpSseEraClient;
}
