// The dialect registry: an allowlist of era dialects, and the rule that assigns each HTTP
// request on the MCP path to one of them (docs/dialects.md states it in prose).

import type { Dialect, DialectDeps, HttpExchange } from '../src/core/dialect.js';
import type { ErrorCode } from '../src/core/errors.js';
import type { JsonObject } from '../src/core/message.js';
import { isInitializeRevision } from '../src/core/versions.js';
import { createModernDialect, type ModernOptions } from './2026-07-28/index.js';
import { createStreamableDialect } from './2025-03-26/index.js';
import { createLegacySseDialect } from './2024-11-05/index.js';

/** Dialect ids, one per folder. */
export const DIALECT_IDS = ['2026-07-28', '2025-03-26', '2024-11-05'] as const;
/** A dialect id. */
export type DialectId = (typeof DIALECT_IDS)[number];

/** Which dialects to build. The 2024-11-05 dialect is gated: off unless listed. */
export interface RegistryOptions {
  enabled: readonly DialectId[];
  modern: ModernOptions;
}

/** The built registry. */
export interface DialectRegistry {
  readonly dialects: ReadonlyMap<DialectId, Dialect>;
  readonly legacy: Dialect | undefined;
  forMcpPath(ex: HttpExchange): Dialect | ErrorCode;
  close(): Promise<void>;
}

function header(ex: HttpExchange, name: string): string | undefined {
  const v = ex.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Assigns a request on the MCP path to an era (docs/dialects.md; spec digest README
 * "Era detection", dual-era server):
 * - POST: an `Mcp-Session-Id` header or a JSON array ⇒ 2025; a modern `_meta` protocolVersion
 *   ⇒ 2026-07-28; `initialize` ⇒ 2025; an `Mcp-Method` header, or an `MCP-Protocol-Version`
 *   that is not an initialize-era revision ⇒ 2026-07-28; anything else ⇒ 2025 (which answers
 *   400, session required) when enabled, else 2026-07-28.
 * - GET: `Mcp-Session-Id` ⇒ 2025 GET stream; otherwise HTTP+SSE when enabled (the spec's
 *   client fallback GETs the same URL), else 405.
 * - DELETE: `Mcp-Session-Id` ⇒ 2025; otherwise 405.
 */
export function classifyMcpRequest(ex: HttpExchange): DialectId | 'method-not-allowed' {
  const session = header(ex, 'mcp-session-id');
  if (ex.method === 'GET') return session !== undefined ? '2025-03-26' : '2024-11-05';
  if (ex.method === 'DELETE') return session !== undefined ? '2025-03-26' : 'method-not-allowed';
  if (ex.method !== 'POST') return 'method-not-allowed';
  if (session !== undefined || Array.isArray(ex.body)) return '2025-03-26';
  const body = ex.body as JsonObject | null;
  const meta = (body?.params as JsonObject | undefined)?._meta as JsonObject | undefined;
  if (meta && typeof meta === 'object' && 'io.modelcontextprotocol/protocolVersion' in meta) return '2026-07-28';
  // initialize without modern _meta opens a legacy session, whatever headers come with it
  // (mcp-remote 0.15.1 sends `Mcp-Method: initialize`).
  if (body?.method === 'initialize') return '2025-03-26';
  if (header(ex, 'mcp-method') !== undefined) return '2026-07-28';
  const hv = header(ex, 'mcp-protocol-version');
  if (hv !== undefined && !isInitializeRevision(hv.trim())) return '2026-07-28';
  return '2025-03-26';
}

/**
 * Builds the dialects named in `enabled` (an allowlist).
 */
export function createRegistry(baseDeps: DialectDeps, opts: RegistryOptions): DialectRegistry {
  const dialects = new Map<DialectId, Dialect>();
  const deps: DialectDeps = {
    ...baseDeps,
    sessionOwner: (id) => {
      for (const [k, d] of dialects) if (d.hasSession(id)) return k;
      return undefined;
    },
  };
  if (opts.enabled.includes('2026-07-28')) dialects.set('2026-07-28', createModernDialect(deps, opts.modern));
  const legacy = opts.enabled.includes('2024-11-05') ? createLegacySseDialect(deps) : undefined;
  if (legacy) dialects.set('2024-11-05', legacy);
  if (opts.enabled.includes('2025-03-26')) dialects.set('2025-03-26', createStreamableDialect(deps));
  return {
    dialects,
    legacy,
    forMcpPath(ex) {
      const want = classifyMcpRequest(ex);
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
