// RFC 9728 OAuth 2.0 Protected Resource Metadata: where each mount's document lives and what it says.

import { SwitchyardError } from '../core/errors.js';

/** The RFC 9728 §3 well-known path suffix. */
export const PRM_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * The path of a mount's protected resource metadata: the well-known suffix followed by the
 * mount path (its trailing `/` dropped). `/mcp` → `/.well-known/oauth-protected-resource/mcp`;
 * `/` or '' → `/.well-known/oauth-protected-resource`. Pass the full path clients use (any
 * listener prefix included).
 * @see RFC 9728 §3.1; 2025-11-25 basic/authorization (protected resource metadata discovery)
 */
export function prmPath(mountPath: string): string {
  const p = mountPath.replace(/\/+$/, '');
  if (p !== '' && !p.startsWith('/')) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'a mount path must start with /' });
  return `${PRM_WELL_KNOWN}${p}`;
}

/**
 * The metadata URL of a resource identifier: the well-known suffix inserted between the host
 * and the path; a query stays after the path. `https://gw.example.com/u/github/mcp` →
 * `https://gw.example.com/.well-known/oauth-protected-resource/u/github/mcp`.
 * @see RFC 9728 §3.1
 */
export function prmUrl(resource: string): string {
  const u = parseResource(resource);
  return `${u.origin}${prmPath(u.pathname === '/' ? '' : u.pathname)}${u.search}`;
}

/** What {@link prmDocument} describes. */
export interface PrmInput {
  /** The resource identifier: the exact URL clients call (RFC 9728 §3.3 makes them compare it). */
  resource: string;
  /** Issuer identifiers of the authorization servers that issue tokens for it; may be empty (API keys only). */
  authorizationServers: readonly string[];
  /** Scopes clients may request (RFC 9728 §2 `scopes_supported`); omitted when absent or empty. */
  scopesSupported?: readonly string[];
  /** Human-readable name (RFC 9728 §2 `resource_name`). */
  resourceName?: string;
}

/** An RFC 9728 §2 document as Switchyard serves it (JSON, `application/json`). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
  /** Always `["header"]`: tokens are accepted only in `Authorization` (RFC 6750 §2.1), never in a body or query. */
  bearer_methods_supported: ['header'];
  resource_name?: string;
}

/**
 * Builds a mount's protected resource metadata document.
 * @throws SwitchyardError SWY_ERR_INTERNAL_FAULT when `resource` is not an absolute http(s) URL
 *   without a fragment (RFC 8707 §2), or an authorization server is not an http(s) URL.
 * @see RFC 9728 §2, §3.2
 */
export function prmDocument(input: PrmInput): ProtectedResourceMetadata {
  parseResource(input.resource);
  const doc: ProtectedResourceMetadata = { resource: input.resource, bearer_methods_supported: ['header'] };
  for (const as of input.authorizationServers) parseResource(as);
  if (input.authorizationServers.length > 0) doc.authorization_servers = [...input.authorizationServers];
  if (input.scopesSupported && input.scopesSupported.length > 0) doc.scopes_supported = [...input.scopesSupported];
  if (input.resourceName !== undefined) doc.resource_name = input.resourceName;
  return doc;
}

function parseResource(s: string): URL {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: `not an absolute URL: ${s}` });
  }
  // RFC 8707 §2: an absolute URI without a fragment.
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || s.includes('#'))
    throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: `not an http(s) URL without a fragment: ${s}` });
  return u;
}

/**
 * The form of a resource URI that audiences are compared in: scheme and host lower-cased and a
 * default port dropped (as URL parsing does), a lone `/` path dropped; anything that is not an
 * http(s) URL (an Auth0 API identifier, `api://…`) is compared as written.
 * @see RFC 8707 §2; RFC 3986 §6.2.2 (case and port normalization); 2025-11-25
 *   basic/authorization (canonical server URI)
 */
export function canonicalResource(s: string): string {
  try {
    const u = new URL(s);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return s;
    return u.pathname === '/' && u.search === '' && u.hash === '' ? u.href.slice(0, -1) : u.href;
  } catch {
    return s;
  }
}
