// The initialize-era client side (revisions 2024-11-05 … 2025-11-25): what Switchyard sends an
// upstream session (the `initialize` handshake, its capability declaration,
// `notifications/initialized`, the session headers, request params) and how it reads an
// InitializeResult.

import { carriedMeta, type OutboundContext, type OutboundMessage, type SessionEraClient } from '../../src/core/era.js';
import { SwitchyardError } from '../../src/core/errors.js';
import type { JsonObject, RequestId } from '../../src/core/message.js';
import type { Implementation } from '../../src/core/request.js';
import type { ServerDescription } from '../../src/core/upstream.js';
import { INITIALIZE_REVISIONS } from '../../src/core/versions.js';

/** The first revision with the `MCP-Protocol-Version` header. @see 2025-06-18 basic/transports#protocol-version-header */
const VERSION_HEADER_FROM = '2025-06-18';

/** True when `v` is an Implementation (`name` and `version` strings). */
function isImplementation(v: unknown): v is Implementation {
  return !!v && typeof v === 'object' && typeof (v as Implementation).name === 'string' && typeof (v as Implementation).version === 'string';
}

/**
 * The initialize-era client. Leaves out `roots` from the shared declaration (servers ask for
 * roots unprompted, server-everything right after initialize, and such a request names no
 * client call to route it to), `logging/setLevel` (log levels travel per request in the core;
 * a client's own level filters what reaches it), and batches (one message per POST is valid in
 * every revision).
 */
export const sessionClient: SessionEraClient = {
  kind: 'session',
  revisions: INITIALIZE_REVISIONS,
  sharedCapabilities: { elicitation: {}, sampling: {} },

  initialize(o: { revision?: string; capabilities: JsonObject; clientInfo: Implementation }): OutboundMessage {
    // basic/lifecycle#version-negotiation: offer the latest revision we speak (or the one asked for).
    return { method: 'initialize', params: { protocolVersion: o.revision ?? INITIALIZE_REVISIONS[0], capabilities: o.capabilities, clientInfo: o.clientInfo } };
  },

  initialized(): OutboundMessage {
    return { method: 'notifications/initialized', params: {} };
  },

  negotiated(result: JsonObject): string {
    const v = result.protocolVersion;
    // basic/lifecycle#version-negotiation: a client that cannot use the server's answer SHOULD disconnect.
    if (typeof v !== 'string' || !(INITIALIZE_REVISIONS as readonly string[]).includes(v)) {
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `initialize settled on ${JSON.stringify(v)}, which Switchyard does not speak` });
    }
    return v;
  },

  describe(result: JsonObject, fallbackName: string): ServerDescription {
    const caps = result.capabilities;
    return {
      serverInfo: isImplementation(result.serverInfo) ? result.serverInfo : { name: fallbackName, version: 'unknown' },
      capabilities: caps && typeof caps === 'object' && !Array.isArray(caps) ? (caps as JsonObject) : {},
      upstreamRevision: sessionClient.negotiated(result),
      ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
    };
  },

  requestParams(ctx: OutboundContext, progressToken?: RequestId): JsonObject {
    // Input answers and held-call state are the gateway's business, never this era's (2026-07-28 basic/patterns/mrtr).
    // Copied without them rather than deleted: an object that lost a property is in V8's slow dictionary mode.
    const params: JsonObject = {};
    for (const k in ctx.params) if (k !== 'inputResponses' && k !== 'requestState' && k !== '_meta') params[k] = ctx.params[k];
    const meta = carriedMeta(ctx, progressToken);
    if (Object.keys(meta).length > 0) params._meta = meta;
    return params;
  },

  sessionHeaders(session: { id?: string; revision: string }): Record<string, string> {
    const h: Record<string, string> = {};
    // basic/transports#session-management: every request after initialize carries the session id.
    if (session.id !== undefined) h['mcp-session-id'] = session.id;
    // 2025-06-18 basic/transports#protocol-version-header: MUST from that revision on; earlier ones do not define it.
    if (session.revision >= VERSION_HEADER_FROM) h['mcp-protocol-version'] = session.revision;
    return h;
  },

  notificationParams(params: JsonObject): JsonObject {
    const out: JsonObject = { ...params };
    delete out._meta;
    return out;
  },

  cancelled(id: RequestId, reason: string): OutboundMessage {
    return { method: 'notifications/cancelled', params: { requestId: id, reason } };
  },
};
