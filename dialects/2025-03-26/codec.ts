// The initialize era's wire rules (2024-11-05 … 2025-11-25): revisions, version negotiation,
// the initialize result, error codes of the era, and the per-revision flags.

import { PeerRpcError, SwitchyardError, toRpcError, type RpcErrorObject } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/message.js';
import type { ServerDescription } from '../../src/core/upstream.js';

export { INITIALIZE_REVISIONS, isInitializeRevision, STREAMABLE_REVISIONS, HTTP_SSE_REVISION } from '../../src/core/versions.js';

/** Per-revision flags: the smaller differences inside the era, each with a test. */
export const FLAGS = {
  /** JSON-RPC batches: 2025-03-26 only (2025-06-18 changelog: removed). */
  batches: (v: string) => v === '2025-03-26',
  /** The SSE priming event (an id and empty data) for clients at 2025-11-25 or later. */
  priming: (v: string) => v >= '2025-11-25',
  /** `mode` on elicitation requests (URL elicitation) from 2025-11-25 on. */
  elicitationMode: (v: string) => v >= '2025-11-25',
} as const;

/**
 * The revision each server-to-client request method first appeared in; a session that
 * negotiated an older revision never receives it.
 * @see 2025-06-18 changelog (elicitation added); 2024-11-05 client/sampling, client/roots
 */
const SERVER_REQUEST_SINCE: Readonly<Record<string, string>> = Object.freeze({
  'sampling/createMessage': '2024-11-05',
  'roots/list': '2024-11-05',
  'elicitation/create': '2025-06-18',
  ping: '2024-11-05',
});

/** True when a session at revision `version` can receive server request `method`. */
export function eraHasServerRequest(version: string, method: string): boolean {
  const since = SERVER_REQUEST_SINCE[method];
  return since !== undefined && version >= since;
}

/**
 * Negotiates a revision: the requested one when it is in `revisions`, else the newest as the
 * counter-offer. @see 2025-11-25 basic/lifecycle#version-negotiation
 */
export function negotiate(requested: unknown, revisions: readonly string[]): string {
  return typeof requested === 'string' && revisions.includes(requested) ? requested : revisions[0];
}

/** The InitializeResult for `version` (2025-11-25 basic/lifecycle#initialization). */
export function initializeResult(version: string, desc: ServerDescription): JsonObject {
  const out: JsonObject = { protocolVersion: version, capabilities: desc.capabilities, serverInfo: desc.serverInfo };
  if (desc.instructions !== undefined) out.instructions = desc.instructions;
  return out;
}

/**
 * Errors toward initialize-era clients, in the era's codes: resource not found is -32002
 * (also when a 2026-07-28 upstream said -32602 with `data.uri`), and a missing client capability
 * (-32021 exists only in 2026-07-28) is reported as the input-unsupported error.
 * @see 2025-11-25 server/resources#error-handling
 */
export function encodeError(err: unknown): RpcErrorObject {
  if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_RESOURCE_NOT_FOUND') return { ...err.toRpcError(), code: -32002 };
  if (err instanceof SwitchyardError && err.code === 'SWY_ERR_MODERN_CAPABILITY') {
    const need = Object.keys((err.data?.requiredCapabilities as Record<string, unknown> | undefined) ?? {}).join(', ');
    return new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: `client did not declare ${need}` }).toRpcError();
  }
  const rpc = toRpcError(err);
  if (err instanceof PeerRpcError && rpc.code === -32602 && typeof (rpc.data as { uri?: unknown } | undefined)?.uri === 'string')
    return { ...rpc, code: -32002 };
  return rpc;
}

/**
 * The HTTP status of an error answer that travels alone as a POST's JSON reply: 429 for a rate
 * limit (with its `Retry-After`), so that HTTP clients and proxies can back off; undefined (the
 * exchange's 200) for every other error, and wherever the reply shares a stream or a batch.
 * @see RFC 6585 §4 (429 Too Many Requests); 2025-11-25 basic/transports#sending-messages-to-the-server
 */
export function replyStatusOf(err: unknown): number | undefined {
  return err instanceof SwitchyardError && err.code === 'SWY_ERR_RATE_LIMITED' ? err.status : undefined;
}

/**
 * Result fields that exist only in 2026-07-28 (caching hints, the result type marker), removed
 * from results toward this era's clients.
 * @see 2026-07-28 server/utilities/caching; basic#resulttype
 */
export function encodeResult(result: JsonObject): JsonObject {
  if (!('ttlMs' in result) && !('cacheScope' in result) && result.resultType !== 'complete') return result;
  // A copy without them, not a spread and `delete`: an object that lost a property is in V8's
  // dictionary mode, which JSON.stringify serializes about 0.4 µs slower per result.
  const out: JsonObject = {};
  for (const k in result) {
    if (k === 'ttlMs' || k === 'cacheScope' || (k === 'resultType' && result[k] === 'complete')) continue;
    out[k] = result[k];
  }
  return out;
}
