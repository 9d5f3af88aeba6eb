// The 2026-07-28 client side: what Switchyard sends a stateless upstream (the `_meta` envelope,
// the mirrored HTTP headers, `server/discover`, `subscriptions/listen`) and how it reads a
// DiscoverResult.

import { carriedMeta, type OutboundAnswer, type OutboundContext, type OutboundMessage, type StatelessEraClient } from '../../src/core/era.js';
import type { JsonObject, RequestId } from '../../src/core/message.js';
import type { Implementation, SubscriptionFilter } from '../../src/core/request.js';
import type { ParamHeader } from '../../src/core/era.js';
import { withoutRootsListChanged } from '../../src/core/gate.js';
import { encodeHeaderValue, META, NAME_PARAM, paramHeadersOf, REVISIONS } from './codec.js';

export { encodeHeaderValue } from './codec.js';
import type { ServerDescription } from '../../src/core/upstream.js';

/** The revision this client speaks. */
const REVISION = REVISIONS[0];

/** Protocol `_meta` keys a client sends, and the one a result carries (the codec's vocabulary). */
export const ENVELOPE_KEYS = META;

/** The request envelope for `info` and `capabilities` (and a log level when one was asked for). */
function envelope(info: Implementation, capabilities: JsonObject, logLevel?: string): JsonObject {
  const meta: JsonObject = {
    [ENVELOPE_KEYS.protocolVersion]: REVISION,
    [ENVELOPE_KEYS.clientCapabilities]: capabilities,
    [ENVELOPE_KEYS.clientInfo]: info,
  };
  if (logLevel !== undefined) meta[ENVELOPE_KEYS.logLevel] = logLevel;
  return meta;
}

/** True when `v` is an Implementation (`name` and `version` strings). */
function isImplementation(v: unknown): v is Implementation {
  return !!v && typeof v === 'object' && typeof (v as Implementation).name === 'string' && typeof (v as Implementation).version === 'string';
}

/** Which param a method's `Mcp-Name` mirrors. @see 2026-07-28 basic/transports/streamable-http (request headers) */
function nameOf(method: string, params: JsonObject): unknown {
  const key = NAME_PARAM[method];
  return key === undefined ? undefined : params[key];
}

/**
 * The 2026-07-28 client. Leaves out what a gateway has no use for upstream: the Tasks
 * extension (not advertised), and result caching (each client request reaches the upstream;
 * the `ttlMs` of `tools/list` only bounds how long `x-mcp-header` annotations are reused).
 */
export const statelessClient: StatelessEraClient = {
  kind: 'stateless',
  revisions: [REVISION],

  discover(gatewayInfo: Implementation): OutboundMessage {
    return { method: 'server/discover', params: { _meta: envelope(gatewayInfo, {}) } };
  },

  recognises(answer: OutboundAnswer): boolean {
    const versions = answer.result?.supportedVersions;
    if (Array.isArray(versions)) return versions.includes(REVISION);
    // -32022 names the versions the server does serve (basic/versioning); the code alone is no evidence.
    const supported = (answer.error?.data as { supported?: unknown } | undefined)?.supported;
    return answer.error?.code === -32022 && Array.isArray(supported) && supported.includes(REVISION);
  },

  describe(result: JsonObject, fallbackName: string): ServerDescription {
    const info = (result._meta as JsonObject | undefined)?.[ENVELOPE_KEYS.serverInfo];
    const caps = result.capabilities;
    return {
      serverInfo: isImplementation(info) ? info : { name: fallbackName, version: 'unknown' },
      capabilities: caps && typeof caps === 'object' && !Array.isArray(caps) ? (caps as JsonObject) : {},
      upstreamRevision: REVISION,
      ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
    };
  },

  requestParams(ctx: OutboundContext, gatewayInfo: Implementation, progressToken?: RequestId): JsonObject {
    const params: JsonObject = { ...ctx.params };
    // The envelope comes from the context alone: reserved keys left in the params are not trusted.
    // W3C trace context travels in `_meta` (OTel MCP semantic conventions) as well as in headers.
    const meta = carriedMeta(ctx, progressToken);
    // An initialize-era client's `roots.listChanged` is for its own upstream sessions: no roots
    // change reaches a 2026-07-28 upstream, whose revision has none.
    Object.assign(meta, envelope(ctx.clientInfo ?? gatewayInfo, withoutRootsListChanged(ctx.clientCapabilities), ctx.logLevel));
    params._meta = meta;
    return params;
  },

  listen(filter: SubscriptionFilter, gatewayInfo: Implementation): OutboundMessage {
    return { method: 'subscriptions/listen', params: { notifications: { ...filter }, _meta: envelope(gatewayInfo, {}) } };
  },

  paramHeaders: paramHeadersOf,
  headers(method: string, params: JsonObject, annotations: readonly ParamHeader[]): Record<string, string> {
    const h: Record<string, string> = { 'mcp-protocol-version': REVISION, 'mcp-method': method };
    const name = nameOf(method, params);
    if (typeof name === 'string') h['mcp-name'] = encodeHeaderValue(name);
    const args = params.arguments as JsonObject | undefined;
    for (const a of annotations) {
      // An absent or null argument has no header (server/tools#x-mcp-header).
      const v = args?.[a.property];
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') h[`mcp-param-${a.header.toLowerCase()}`] = encodeHeaderValue(v);
    }
    return h;
  },

  notificationParams(params: JsonObject): JsonObject {
    // The subscriptionId names our listen, not the client's; the front door adds the client's own.
    const out: JsonObject = { ...params };
    delete out._meta;
    return out;
  },

  cancelled(id: RequestId, reason: string): OutboundMessage {
    return { method: 'notifications/cancelled', params: { requestId: id, reason } };
  },
};
