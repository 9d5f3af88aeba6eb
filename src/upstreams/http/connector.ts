// What every HTTP connector (one per era) is built with and offers the upstream's era pick.

import type { StreamGate } from './stream-gate.js';
import type { Dispatcher } from 'undici';
import type { CallHolder } from '../../core/calls.js';
import type { CoreLog } from '../../core/exchange.js';
import type { Limits } from '../../core/limits.js';
import type { JsonObject } from '../../core/message.js';
import type { CoreNotification, Implementation, RequestContext, SubscriptionFilter } from '../../core/request.js';
import type { ServerDescription, SessionRef, Subscription } from '../../core/upstream.js';
import type { Isolation } from './pool.js';
import { drain, type PostAnswer } from './transport.js';
import type { MessageValidator } from '../../core/strict.js';

/** Who a request to the upstream is for: a client's request (its identity and `Authorization`), or undefined for the gateway's own. */
export type CredentialRef = Pick<RequestContext, 'identity' | 'authorization'>;

/**
 * The upstream's own credential (config `credentials`), never the client's token: the headers
 * for each request, and a way to drop a token the upstream refused.
 * @see 2025-11-25 basic/authorization, Token Passthrough
 */
export interface OutboundCredentials {
  /** True when `invalidate` can change what `headers` gives (an OAuth token): a 401 is then retried once. */
  readonly refreshable: boolean;
  /** Headers for one request. @throws SwitchyardError SWY_ERR_AUTH_UPSTREAM_TOKEN, SWY_ERR_AUTH_NO_SUBJECT_TOKEN */
  headers(ref: CredentialRef | undefined): Promise<Record<string, string>>;
  /** Drops the token a request for `ref` used (the upstream answered 401). */
  invalidate(ref: CredentialRef | undefined): void;
}

/** What every HTTP connector is built with. */
export interface ConnectorOptions {
  /** Upstream name, for logs and as the description's fallback name. */
  name: string;
  /** The MCP endpoint (for HTTP+SSE: its SSE URL). */
  url: string;
  /** Headers sent on every request (configured, e.g. an Authorization for this upstream). */
  headers: Record<string, string>;
  isolation: Isolation;
  /** Forward the client's own `Authorization` on its requests (config `forwardAuthorization`). */
  forwardAuthorization: boolean;
  /** The upstream's own credential, added to every request (config `credentials`); absent: only `headers`. */
  credentials?: OutboundCredentials;
  log: CoreLog;
  limits: Limits;
  /** The gateway's Implementation: the client of shared sessions and of its own requests. */
  clientInfo: Implementation;
  /** Holds calls waiting for a 2026 client's input. */
  held: CallHolder;
  /** The upstream's own undici Agent (bounded connections, connect and keep-alive timeouts); the global dispatcher when absent. */
  dispatcher?: Dispatcher;
  /**
   * Places for the upstream's long-lived streams (2025 GET streams, HTTP+SSE session streams) on
   * that Agent, so that streams never hold every connection its calls need; unbounded when absent.
   */
  streams?: StreamGate;
  /** Strict mode's validator: what the upstream sends for a call or outside one, and what the gateway sends it, are checked against its revision's schema (its handshake is checked by the era clients: strictEraClients in core/strict.ts; docs/strict.md, "Upstreams"); absent when strict mode is off. */
  strict?: MessageValidator;
  /** How the operator pinned this upstream to HTTP+SSE, for advice when its URL serves no HTTP+SSE stream; absent when the era was probed. */
  sseSetting?: SseSetting;
}

/**
 * How an operator made an upstream HTTP+SSE (era 2024-11-05), in the words they wrote, and what
 * the same setting says to have Streamable HTTP tried instead: `type: sse` / `type: http`
 * (`transport: sse` / `transport: http`), `era: 2024-11-05` / `era: auto` in a config file, or
 * `--upstream-era 2024-11-05` / `--upstream-era auto` on the command line.
 */
export interface SseSetting {
  readonly written: string;
  readonly streamable: string;
}

/** One era's way of serving an HTTP upstream, behind the upstream's era pick. */
export interface Connector {
  /** The revision spoken (a session era's is the control session's negotiated one). */
  readonly revision: string;
  describe(): ServerDescription;
  /**
   * Sends one client request upstream and drives it to its result.
   * @throws SwitchyardError SWY_ERR_SESSION_LIMIT (stateful eras) when the request needs a new
   *   upstream session and the pool's `maxSessions` all have subscribers, or an HTTP+SSE upstream's streams hold every place
   */
  call(ctx: RequestContext): Promise<JsonObject>;
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  /** Subscribes on the client session's own upstream session (stateful eras). */
  subscribeSession?(ref: SessionRef, filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  release(sessionKey: string): void;
  /** Sends client session `sessionKey`'s notification on its own upstream session, when one is open or opening (stateful eras, `per-session`). */
  forwardNotification?(sessionKey: string, n: CoreNotification): void;
  close(): Promise<void>;
}

/** The client's Authorization header, when this upstream may receive it (config `forwardAuthorization`). */
export function authOf(o: Pick<ConnectorOptions, 'forwardAuthorization'>, ref: Pick<RequestContext, 'authorization'> | undefined): Record<string, string> {
  return o.forwardAuthorization && ref?.authorization ? { authorization: ref.authorization } : {};
}

/**
 * The configured headers plus the upstream credential's for a request (for `ref`, or the
 * gateway's own when undefined).
 * @throws SwitchyardError SWY_ERR_AUTH_UPSTREAM_TOKEN, SWY_ERR_AUTH_NO_SUBJECT_TOKEN
 */
export async function outboundHeaders(o: Pick<ConnectorOptions, 'headers' | 'credentials'>, ref: CredentialRef | undefined): Promise<Record<string, string>> {
  return o.credentials ? { ...o.headers, ...(await o.credentials.headers(ref)) } : o.headers;
}

/**
 * Sends one POST with the upstream's credential; when the upstream answers 401 and the
 * credential can be refreshed, drops it and sends once more with a fresh one. The upstream's
 * own `WWW-Authenticate` goes no further.
 * @param send the POST, given its credential headers (the configured headers included).
 * @see RFC 6750 §3.1 (invalid_token); 2025-11-25 basic/authorization (token refresh is the client's job)
 */
export async function postWithCredentials(
  o: Pick<ConnectorOptions, 'headers' | 'credentials'>,
  ref: CredentialRef | undefined,
  send: (headers: Record<string, string>) => Promise<PostAnswer>,
): Promise<PostAnswer> {
  const a = await send(await outboundHeaders(o, ref));
  if (a.status !== 401 || !o.credentials?.refreshable) return a;
  await drain(a).catch(() => {});
  o.credentials.invalidate(ref);
  return send(await outboundHeaders(o, ref));
}
