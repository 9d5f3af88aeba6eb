// What every HTTP connector (one per era) is built with and offers the upstream's era pick.

import type { Dispatcher } from 'undici';
import type { HeldCalls } from '../../core/calls.js';
import type { CoreLog } from '../../core/exchange.js';
import type { Limits } from '../../core/limits.js';
import type { JsonObject } from '../../core/message.js';
import type { CoreNotification, Implementation, RequestContext, SubscriptionFilter } from '../../core/request.js';
import type { ServerDescription, SessionRef, Subscription } from '../../core/upstream.js';
import type { Isolation } from './pool.js';

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
  log: CoreLog;
  limits: Limits;
  /** The gateway's Implementation: the client of shared sessions and of its own requests. */
  clientInfo: Implementation;
  /** Holds calls waiting for a 2026 client's input. */
  held: HeldCalls;
  /** The upstream's own undici Agent (bounded connections, connect and keep-alive timeouts); the global dispatcher when absent. */
  dispatcher?: Dispatcher;
}

/** One era's way of serving an HTTP upstream, behind the upstream's era pick. */
export interface Connector {
  /** The revision spoken (a session era's is the control session's negotiated one). */
  readonly revision: string;
  describe(): ServerDescription;
  call(ctx: RequestContext): Promise<JsonObject>;
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  /** Subscribes on the client session's own upstream session (stateful eras). */
  subscribeSession?(ref: SessionRef, filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  release(sessionKey: string): void;
  close(): Promise<void>;
}

/** The client's Authorization header, when this upstream may receive it (config `forwardAuthorization`). */
export function authOf(o: Pick<ConnectorOptions, 'forwardAuthorization'>, ref: Pick<RequestContext, 'authorization'> | undefined): Record<string, string> {
  return o.forwardAuthorization && ref?.authorization ? { authorization: ref.authorization } : {};
}
