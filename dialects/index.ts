// The dialect registry: an allowlist of era dialects per mount, and the rules that assign each
// request to an era (docs/dialects.md states them in prose): on HTTP by method, headers and
// body; on a message channel (stdio) by the message alone.

import type { Dialect } from '../src/core/dialect.js';
import type { ErrorCode } from '../src/core/errors.js';
import type { CoreLog, HeaderBag, HttpExchange } from '../src/core/exchange.js';
import type { Executor } from '../src/core/executor.js';
import type { Limits } from '../src/core/limits.js';
import type { JsonObject } from '../src/core/message.js';
import type { ReplicaServices } from '../src/core/replica.js';
import type { MessageValidator } from '../src/core/strict.js';
import { createHttpSse } from './2024-11-05/http.js';
import { isInitializeRevision } from './2025-03-26/codec.js';
import { createStreamableHttp } from './2025-03-26/http.js';
import { hasModernMeta, REVISIONS as STATELESS_REVISIONS, type CacheDefaults } from './2026-07-28/codec.js';
import { createStatelessHttp } from './2026-07-28/http.js';

export { createMessagePeer, type MessagePeerOptions } from './peer.js';
export { hasModernMeta } from './2026-07-28/codec.js';

/** Dialect ids, one per folder. */
export const DIALECT_IDS = ['2026-07-28', '2025-03-26', '2024-11-05'] as const;
/** A dialect id. */
export type DialectId = (typeof DIALECT_IDS)[number];

/** The revisions served statelessly. */
export const MODERN_REVISIONS: readonly string[] = STATELESS_REVISIONS;

/** What every dialect of a mount is built with. */
export interface RegistryDeps {
  /** The mount's executor. */
  executor: Executor;
  limits: Limits;
  log: CoreLog;
  /** Strict mode: validates client messages both ways; undefined when off. */
  strict?: MessageValidator;
  /** Path HTTP+SSE POSTs go to (named by the `endpoint` event). */
  messagePath: string;
  /** 2026-07-28 caching fields for results that carry none. */
  cache: CacheDefaults;
  /** Sessions that span replicas (sealed ids, shared ledger, buffers, bus); absent: sessions in this process. */
  replicas?: ReplicaServices;
}

/** Which dialects to build. The 2024-11-05 dialect is gated: off unless listed. */
export interface RegistryOptions {
  enabled: readonly DialectId[];
}

/** The built registry of one mount. */
export interface DialectRegistry {
  readonly dialects: ReadonlyMap<DialectId, Dialect>;
  /** The HTTP+SSE dialect, when enabled. */
  readonly httpSse: Dialect | undefined;
  /** The dialect for a request on the MCP path, or the error code to refuse it with. */
  forMcpPath(ex: Pick<HttpExchange, 'method' | 'headers' | 'body'>): Dialect | ErrorCode;
  close(): Promise<void>;
}

/**
 * Assigns a request on the MCP path to an era (docs/dialects.md; dual-era server rules):
 * - POST: a JSON array ⇒ 2025; a modern `_meta` protocolVersion ⇒ 2026-07-28 (an
 *   `Mcp-Session-Id` with it is ignored); an `Mcp-Session-Id` header ⇒ 2025; `initialize` ⇒ 2025;
 *   an `Mcp-Method` header, or an `MCP-Protocol-Version`
 *   that is not an initialize-era revision ⇒ 2026-07-28; anything else ⇒ 2025 (which answers
 *   400, session required) when enabled, else 2026-07-28.
 * - GET: `Mcp-Session-Id` ⇒ 2025 GET stream; otherwise HTTP+SSE when enabled (the spec's
 *   client fallback GETs the same URL), else 405.
 * - DELETE: `Mcp-Session-Id` ⇒ 2025; otherwise 405.
 */
export function classifyMcpRequest(method: string, headers: HeaderBag, body: unknown): DialectId | 'method-not-allowed' {
  const session = headers.get('mcp-session-id');
  if (method === 'GET') return session !== undefined ? '2025-03-26' : '2024-11-05';
  if (method === 'DELETE') return session !== undefined ? '2025-03-26' : 'method-not-allowed';
  if (method !== 'POST') return 'method-not-allowed';
  if (Array.isArray(body)) return '2025-03-26';
  const msg = body as JsonObject | null;
  // A request with modern _meta is served statelessly, whatever session id comes with it: a
  // 2026-07-28 server ignores `Mcp-Session-Id` (never minting or echoing one), and an initialize-era
  // client never sends that _meta (stateless-2026-07-28 §10; the stdio front door does the same).
  if (hasModernMeta(msg?.params)) return '2026-07-28';
  if (session !== undefined) return '2025-03-26';
  // initialize without modern _meta opens an initialize-era session, whatever headers come with
  // it (mcp-remote 0.15.1 sends `Mcp-Method: initialize`).
  if (msg?.method === 'initialize') return '2025-03-26';
  if (headers.get('mcp-method') !== undefined) return '2026-07-28';
  const hv = headers.get('mcp-protocol-version');
  if (hv !== undefined && !isInitializeRevision(hv.trim())) return '2026-07-28';
  return '2025-03-26';
}

/**
 * The methods the MCP path serves with `enabled` dialects, by the assignment of
 * {@link classifyMcpRequest}: GET opens an HTTP+SSE stream (2024-11-05) or a session's stream
 * (2025); POST carries 2025 or 2026-07-28 messages; DELETE ends a 2025 session. A method no
 * enabled dialect serves gets 405 there, so it is not listed: HTTP+SSE alone is `GET`,
 * 2026-07-28 alone is `POST`.
 * @see RFC 9110 §10.2.1 (Allow), §15.5.6 (405)
 */
export function mcpMethodsOf(enabled: Iterable<string>): Array<'GET' | 'POST' | 'DELETE'> {
  const on = new Set(enabled);
  const methods: Array<'GET' | 'POST' | 'DELETE'> = [];
  if (on.has('2024-11-05') || on.has('2025-03-26')) methods.push('GET');
  if (on.has('2025-03-26') || on.has('2026-07-28')) methods.push('POST');
  if (on.has('2025-03-26')) methods.push('DELETE');
  return methods;
}

/** {@link mcpMethodsOf} as an `Allow` value (`GET, POST, DELETE`). */
export function mcpAllowOf(enabled: Iterable<string>): string {
  return mcpMethodsOf(enabled).join(', ');
}

/** Builds the dialects named in `enabled` (an allowlist) for one mount. */
export function createRegistry(deps: RegistryDeps, opts: RegistryOptions): DialectRegistry {
  const dialects = new Map<DialectId, Dialect>();
  const sessionOwner = (id: string) => {
    for (const [k, d] of dialects) if (d.hasSession(id)) return k;
    return undefined;
  };
  const { executor, limits, log, strict, replicas } = deps;
  if (opts.enabled.includes('2026-07-28')) dialects.set('2026-07-28', createStatelessHttp({ executor, limits, log, strict, cache: deps.cache }));
  const httpSse = opts.enabled.includes('2024-11-05')
    ? createHttpSse({ executor, limits, log, strict, messagePath: deps.messagePath, sessionOwner, replicas })
    : undefined;
  if (httpSse) dialects.set('2024-11-05', httpSse);
  if (opts.enabled.includes('2025-03-26')) dialects.set('2025-03-26', createStreamableHttp({ executor, limits, log, strict, sessionOwner, replicas }));
  return {
    dialects,
    httpSse,
    forMcpPath(ex) {
      const want = classifyMcpRequest(ex.method, ex.headers, ex.body);
      if (want === 'method-not-allowed') return 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED';
      const d = dialects.get(want);
      if (d) return d;
      if (ex.method !== 'POST') return 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED';
      // The era it looks like is off: let the other POST dialect answer in its own terms.
      return dialects.get('2026-07-28') ?? dialects.get('2025-03-26') ?? 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED';
    },
    async close() {
      await Promise.all([...dialects.values()].map((d) => d.close()));
    },
  };
}
