// Origin and Host allowlists against DNS rebinding.

/** Allowlist settings. Entries are host names (`localhost`, `[::1]`), optionally with `:port`. */
export interface OriginPolicy {
  /** Hosts an `Origin` may name (default localhost, 127.0.0.1, [::1]). */
  allowedOrigins: readonly string[];
  /** When non-empty, `Host` must be one of these (same entry syntax). */
  allowedHosts: readonly string[];
}

/** Why a request was refused, or null when allowed. */
export type OriginVerdict = null | { which: 'origin' | 'host'; reason: string };

interface Entry {
  host: string;
  port: string | undefined;
}

function parseEntry(s: string): Entry {
  const v = s.trim().toLowerCase();
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(v);
  return m ? { host: m[1], port: m[2] } : { host: v, port: undefined };
}

function matches(list: readonly Entry[], host: string, port: string): boolean {
  return list.some((e) => e.host === host && (e.port === undefined || e.port === port));
}

/**
 * Compiles a policy once; the returned function checks one request's `Origin` and `Host`.
 * - No `Origin`: allowed (non-browser clients send none).
 * - `Origin` present: it must parse as a URL without userinfo and its host must be listed;
 *   an entry with a port pins the port (the scheme's default port when the Origin has none).
 * - `allowedHosts` non-empty: `Host` must be listed too.
 * @see 2025-11-25 basic/transports#security-warning (present and invalid Origin: 403)
 */
export function createOriginCheck(policy: OriginPolicy): (origin: string | undefined, host: string | undefined) => OriginVerdict {
  const origins = policy.allowedOrigins.map(parseEntry);
  const hosts = policy.allowedHosts.map(parseEntry);
  return (origin, host) => {
    if (origin !== undefined) {
      if (origin === 'null') return { which: 'origin', reason: 'opaque origin' };
      let u: URL;
      try {
        u = new URL(origin);
      } catch {
        return { which: 'origin', reason: 'malformed Origin' };
      }
      if (u.username || u.password || /@/.test(origin)) return { which: 'origin', reason: 'Origin carries userinfo' };
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return { which: 'origin', reason: 'Origin scheme not http(s)' };
      if (u.pathname !== '/' || u.search || u.hash) return { which: 'origin', reason: 'Origin has a path' };
      const port = u.port || (u.protocol === 'https:' ? '443' : '80');
      if (!matches(origins, u.hostname.toLowerCase(), port)) return { which: 'origin', reason: `Origin ${u.hostname} not allowed` };
    }
    if (hosts.length > 0) {
      if (host === undefined) return { which: 'host', reason: 'Host missing' };
      const h = parseEntry(host);
      if (!matches(hosts, h.host, h.port ?? '80')) return { which: 'host', reason: `Host ${h.host} not allowed` };
    }
    return null;
  };
}
