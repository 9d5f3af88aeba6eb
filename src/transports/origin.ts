// Origin and Host allowlists against DNS rebinding, on the strict authority parser.

import { SwitchyardError } from '../core/errors.js';
import { isLoopbackHost } from '../core/loopback.js';
import { parseAuthority, type Authority } from './authority.js';

/**
 * Allowlist settings. Entries are authorities as `parseAuthority` reads them (`localhost`,
 * `127.0.0.1`, `[::1]`, `app.example.com`), optionally with `:port`; an entry with a port pins it.
 */
export interface OriginPolicy {
  /** Hosts an `Origin` may name (the gateway defaults to localhost, 127.0.0.1, [::1]). */
  allowedOrigins: readonly string[];
  /** When non-empty, the request's host (`Host`, or an absolute-form target's authority) must be one of these. */
  allowedHosts: readonly string[];
  /**
   * Port a `Host` without one stands for: 80 for plain HTTP (the default), 443 behind TLS
   * (RFC 9110 §4.2.1, §4.2.2). Used only to match entries that pin a port.
   */
  defaultHostPort?: number;
}

/**
 * Why a request was refused, or null when allowed. `code` is the catalogue entry the transport
 * answers with: `SWY_ERR_HTTP_ORIGIN_FORBIDDEN` (403), `SWY_ERR_HTTP_HOST_FORBIDDEN` (403) or
 * `SWY_ERR_HTTP_HOST_INVALID` (400).
 */
export type OriginVerdict = null | {
  which: 'origin' | 'host';
  reason: string;
  code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN' | 'SWY_ERR_HTTP_HOST_FORBIDDEN' | 'SWY_ERR_HTTP_HOST_INVALID';
};

/**
 * Checks one request. `origin` and `host` take the raw field values as received: a string, or
 * the list of every field line (Node's `req.headersDistinct`; `req.headers.host` keeps only the
 * first of several). `targetAuthority` is the authority of an absolute-form request target
 * (`GET http://h:1/mcp HTTP/1.1`), which is checked in place of `Host`.
 */
export type OriginCheck = (
  origin: string | readonly string[] | undefined,
  host: string | readonly string[] | undefined,
  targetAuthority?: string,
) => OriginVerdict;

interface Entry {
  host: string;
  port: number | undefined;
}

function parseEntry(list: string, s: string): Entry {
  const a = parseAuthority(s.trim());
  if (!a) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `${list}: ${JSON.stringify(s)} is not a host[:port]` });
  return { host: a.host, port: a.port };
}

function listed(list: readonly Entry[], a: Authority, defaultPort: number): boolean {
  const port = a.port ?? defaultPort;
  return list.some((e) => e.host === a.host && (e.port === undefined || e.port === port));
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s;

function originVerdict(reason: string): OriginVerdict {
  return { which: 'origin', reason, code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN' };
}

function hostVerdict(reason: string, code: 'SWY_ERR_HTTP_HOST_FORBIDDEN' | 'SWY_ERR_HTTP_HOST_INVALID'): OriginVerdict {
  return { which: 'host', reason, code };
}

/**
 * Compiles a policy once; the returned function checks one request.
 *
 * Origin (RFC 6454 §7: `scheme "://" host [ ":" port ]`, nothing else):
 * - absent: allowed (non-browser clients send none);
 * - more than one field line, `null` (opaque), malformed, userinfo, a scheme other than http(s),
 *   a path, query or fragment (a trailing `/` included), or a host not listed: 403;
 * - an entry with a port pins it (the scheme's default port when the Origin has none).
 *
 * Host (RFC 9112 §3.2), whatever the allowlist:
 * - two or more `Host` field lines, or a value that is not a valid authority: 400
 *   `SWY_ERR_HTTP_HOST_INVALID`; with an absolute-form target its authority must be valid
 *   instead, and `Host` is ignored (RFC 9112 §3.2.2) but still counted.
 * When `allowedHosts` is non-empty:
 * - no host at all (HTTP/1.0 without `Host`): 400 `SWY_ERR_HTTP_HOST_INVALID`;
 * - a host not listed: 403 `SWY_ERR_HTTP_HOST_FORBIDDEN`. Case and one trailing dot are
 *   normalized on both sides, so neither gets around the list; an entry with a port pins it.
 *
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when an entry is not a valid `host[:port]`
 * @see 2025-11-25 basic/transports#security-warning (present and invalid Origin: 403)
 * @see RFC 6454 §7 (Origin), RFC 9112 §3.2 (exactly one valid Host, else 400), §3.2.2 (absolute-form)
 */
export function createOriginCheck(policy: OriginPolicy): OriginCheck {
  const origins = policy.allowedOrigins.map((s) => parseEntry('allowedOrigins', s));
  const hosts = policy.allowedHosts.map((s) => parseEntry('allowedHosts', s));
  const defaultHostPort = policy.defaultHostPort ?? 80;
  return (originField, hostField, targetAuthority) => {
    const originValues = typeof originField === 'string' ? [originField] : (originField ?? []);
    if (originValues.length > 1) return originVerdict('more than one Origin');
    if (originValues.length === 1) {
      const verdict = checkOrigin(originValues[0], origins);
      if (verdict) return verdict;
    }

    const hostValues = typeof hostField === 'string' ? [hostField] : (hostField ?? []);
    // RFC 9112 §3.2: a server MUST answer 400 to more than one Host field line.
    if (hostValues.length > 1) return hostVerdict('more than one Host', 'SWY_ERR_HTTP_HOST_INVALID');
    let authority: Authority | null = null;
    if (targetAuthority !== undefined) {
      // RFC 9112 §3.2.2: with an absolute-form target the origin server uses its authority and ignores Host.
      authority = parseAuthority(targetAuthority);
      if (!authority) return hostVerdict('request target authority invalid', 'SWY_ERR_HTTP_HOST_INVALID');
    } else if (hostValues.length === 1) {
      authority = parseAuthority(hostValues[0]);
      if (!authority) return hostVerdict('Host invalid', 'SWY_ERR_HTTP_HOST_INVALID');
    }
    if (hosts.length > 0) {
      if (!authority) return hostVerdict('Host missing', 'SWY_ERR_HTTP_HOST_INVALID');
      if (!listed(hosts, authority, defaultHostPort)) return hostVerdict(`Host ${authority.host} not allowed`, 'SWY_ERR_HTTP_HOST_FORBIDDEN');
    }
    return null;
  };
}

function checkOrigin(origin: string, origins: readonly Entry[]): OriginVerdict {
  if (origin === 'null') return originVerdict('opaque origin');
  // Whitespace or controls: an RFC 6454 origin-list of several origins, or junk.
  for (let i = 0; i < origin.length; i++) {
    const c = origin.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return originVerdict('malformed Origin');
  }
  const m = SCHEME.exec(origin);
  if (!m) return originVerdict('malformed Origin');
  const scheme = m[1].toLowerCase();
  const rest = m[2];
  if (scheme !== 'http' && scheme !== 'https') return originVerdict('Origin scheme not http(s)');
  if (/[/?#]/.test(rest)) return originVerdict('Origin has a path');
  if (rest.includes('@')) return originVerdict('Origin carries userinfo');
  const a = parseAuthority(rest);
  if (!a) return originVerdict('malformed Origin');
  if (!listed(origins, a, scheme === 'https' ? 443 : 80)) return originVerdict(`Origin ${a.host} not allowed`);
  return null;
}

/**
 * The `Host` allowlist the gateway uses by default on a loopback bind: `localhost`,
 * `127.0.0.1` and `[::1]`, each pinned to the bound port (as the MCP SDK's
 * `localhostAllowedHostnames` pins the names), plus the bound address itself when it is another
 * loopback literal (`127.0.0.2`). The rest of 127.0.0.0/8 is not listed: the listener cannot be
 * reached there, and a name that resolves to loopback (DNS rebinding) arrives as that name.
 * @param boundPort the listener's actual port (after port 0 was resolved).
 * @param boundHost the address or name it was bound to, when known.
 * @see 2025-11-25 basic/transports#security-warning (DNS rebinding; bind to localhost)
 */
export function loopbackHostAllowlist(boundPort: number, boundHost?: string): string[] {
  const out = [`localhost:${boundPort}`, `127.0.0.1:${boundPort}`, `[::1]:${boundPort}`];
  if (boundHost !== undefined && isLoopbackHost(boundHost)) {
    const a = parseAuthority(bindAuthority(boundHost));
    if (a && a.kind !== 'reg-name') {
      const entry = `${a.host}:${boundPort}`;
      if (!out.includes(entry)) out.push(entry);
    }
  }
  return out;
}

/** A bind address as an authority: bare IPv6 addresses get their brackets. */
function bindAuthority(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
