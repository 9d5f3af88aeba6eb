// How an upstream's URL appears in error messages, logs and status reports.

/**
 * An upstream URL as errors (which reach clients), logs and the status page show it: its origin
 * only, `scheme://host[:port]`. Userinfo, path and query can all hold credentials (hosted MCP
 * servers put their key in the path or in `?api_key=`), so none of them is shown; the upstream's
 * config name tells which one it is.
 * @returns the origin, or `[unparsable url]`
 * @see RFC 3986 §3.2.1 (userinfo: passwords in URLs deprecated), §4.3 (origin parts); RFC 6750 §5.3 (tokens in logs)
 */
export function urlForDisplay(url: string | URL): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return u.origin === 'null' ? '[unparsable url]' : u.origin;
  } catch {
    return '[unparsable url]';
  }
}
