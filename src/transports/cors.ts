// CORS for browser-based MCP clients: which Origins may read the gateway's answers, the
// preflight answer, and the headers an actual answer carries. Neutral: strings in, header fields out.

import { SwitchyardError } from '../core/errors.js';
import { serializedOrigin } from '../core/url-text.js';
import type { OriginCheck } from './origin.js';

/**
 * The `cors` config key (docs/config.md, docs/security.md "CORS").
 * @see WHATWG Fetch §3.2 (CORS protocol); RFC 6454 §6.2 (serialized origins)
 */
export interface CorsConfig {
  /** Serialized origins (`https://app.example`, `http://localhost:5173`) whose pages may read answers; exact, case as browsers send it. */
  readonly origins: readonly string[];
  /** `Access-Control-Max-Age` of a preflight answer, seconds (default 600; 0 to 86400). */
  readonly maxAgeSec: number;
  /** Send `Access-Control-Allow-Credentials: true` (a page's `fetch(…, { credentials: 'include' })`); default false. */
  readonly allowCredentials: boolean;
}

/**
 * Request headers a preflight may be granted: what MCP clients send on every era's routes
 * (lowercase, as `Access-Control-Request-Headers` lists them), besides the `Mcp-Param-*` family.
 * @see 2025-11-25 basic/transports (Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID);
 *   2026-07-28 basic/transports/streamable-http (Mcp-Method, Mcp-Name, Mcp-Param-{name})
 */
export const CORS_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'authorization',
  'content-type',
  'last-event-id',
  'mcp-method',
  'mcp-name',
  'mcp-protocol-version',
  'mcp-session-id',
]);

/** `Mcp-Param-{name}`: the name a token (RFC 9110 §5.6.2), lowercase as a preflight lists it. */
const MCP_PARAM = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** At most this many names of one `Access-Control-Request-Headers` are looked at (each granted name is echoed). */
export const MAX_PREFLIGHT_HEADER_NAMES = 64;

/**
 * Response headers a page's script may read besides the CORS-safelisted ones (`Content-Type`
 * among them): the session, the revision, the 401/403 challenge, when to retry, a 405's methods,
 * a 415's codings.
 * @see WHATWG Fetch §3.2.3 (Access-Control-Expose-Headers); RFC 6750 §3 (WWW-Authenticate)
 */
export const CORS_EXPOSED_HEADERS = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After, Allow, Accept-Encoding';

/** Every answer's `Vary` while CORS is on: what it says depends on `Origin` (RFC 9110 §12.5.5). */
export const CORS_VARY = 'Origin';

/** A preflight answer's `Vary`: it also depends on what the preflight asked for. */
const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

/** Compiled CORS settings. */
export interface Cors {
  /**
   * The header fields of an actual answer to a request whose `Origin` is `origin` (a single field
   * line's value, as received): `Access-Control-Allow-Origin` (the origin itself, never `*`),
   * `-Expose-Headers`, `-Allow-Credentials` when configured. Undefined when the origin is not listed.
   * One object per origin, shared: do not change it.
   */
  actual(origin: string | undefined): Readonly<Record<string, string>> | undefined;
  /**
   * The header fields of the answer to a preflight from `origin` (listed: see `actual`), for a
   * resource serving `allow` (an `Allow` value): the allowed methods, the requested headers among
   * those granted ({@link CORS_REQUEST_HEADERS}, `Mcp-Param-*`; others are left out and the browser
   * refuses the request), `Access-Control-Max-Age`, `Vary`. Undefined when the origin is not listed.
   * @param requestHeaders the `Access-Control-Request-Headers` value, if any
   */
  preflight(origin: string | undefined, requestHeaders: string | undefined, allow: string): Record<string, string> | undefined;
}

/**
 * Compiles the CORS settings once. Every origin must be a serialized origin as browsers send it
 * (`serializedOrigin`, src/core/url-text.ts) that `originCheck` (the listener's `allowedOrigins`)
 * lets through: CORS grants the pages of an allowed origin their answers, it never widens that
 * allowlist. The config loader checks the same at load; this check is the listener's own.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID naming the first origin that is not such
 * @see WHATWG Fetch §3.2.2 (HTTP requests), §3.2.3 (HTTP responses), §4.8 (CORS-preflight fetch);
 *   `*` is never sent (it would not allow credentials, and it names no origin the allowlist checked)
 */
export function createCors(config: CorsConfig, originCheck: OriginCheck): Cors {
  const byOrigin = new Map<string, Readonly<Record<string, string>>>();
  config.origins.forEach((origin, i) => {
    const form = serializedOrigin(origin);
    if (form !== true)
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
        detail: `cors.origins/${i}: ${JSON.stringify(origin)} is not a serialized origin${typeof form === 'string' ? `: give ${form}` : ''}`,
      });
    const verdict = originCheck(origin, undefined);
    if (verdict)
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
        detail: `cors.origins/${i}: ${origin} is refused by allowedOrigins (${verdict.reason}); CORS never widens that allowlist`,
      });
    const fields: Record<string, string> = {
      'access-control-allow-origin': origin,
      'access-control-expose-headers': CORS_EXPOSED_HEADERS,
    };
    if (config.allowCredentials) fields['access-control-allow-credentials'] = 'true';
    byOrigin.set(origin, Object.freeze(fields));
  });
  const maxAge = String(config.maxAgeSec);
  return {
    actual: (origin) => (origin === undefined ? undefined : byOrigin.get(origin)),
    preflight(origin, requestHeaders, allow) {
      const base = origin === undefined ? undefined : byOrigin.get(origin);
      if (!base) return undefined;
      const out: Record<string, string> = {
        'access-control-allow-origin': base['access-control-allow-origin'],
        'access-control-allow-methods': allow,
        'access-control-max-age': maxAge,
        vary: PREFLIGHT_VARY,
      };
      if (config.allowCredentials) out['access-control-allow-credentials'] = 'true';
      const granted = grantedHeaders(requestHeaders);
      if (granted !== '') out['access-control-allow-headers'] = granted;
      return out;
    },
  };
}

/** The names of an `Access-Control-Request-Headers` value that are granted, joined with `, ` (at most MAX_PREFLIGHT_HEADER_NAMES looked at). */
function grantedHeaders(requested: string | undefined): string {
  if (requested === undefined) return '';
  const out: string[] = [];
  const names = requested.split(',', MAX_PREFLIGHT_HEADER_NAMES);
  for (const raw of names) {
    const name = raw.trim().toLowerCase();
    if ((CORS_REQUEST_HEADERS.has(name) || MCP_PARAM.test(name)) && !out.includes(name)) out.push(name);
  }
  return out.join(', ');
}

/**
 * Whether a request is a CORS preflight: `OPTIONS` with `Access-Control-Request-Method`
 * (WHATWG Fetch §4.8). Any other `OPTIONS` keeps the answer it always had.
 */
export function isPreflight(method: string, accessControlRequestMethod: string | undefined): boolean {
  return method === 'OPTIONS' && accessControlRequestMethod !== undefined;
}
