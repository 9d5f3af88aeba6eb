// How an upstream's URL and a stdio child's command line appear in error messages, logs and status reports.

/**
 * `host:port` as a URL's authority: an IPv6 address in brackets, anything else as it is.
 * @see RFC 3986 §3.2.2 (IP-literal)
 */
export function authority(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

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

/**
 * A client's request target (`req.url`) as a log line names it: the path, and `?…` for a query.
 * A query is where a client puts what it should not (`?access_token=`, RFC 6750 §2.3) and where
 * an HTTP+SSE session's id travels (`/messages?sessionId=…`, a bearer for that session).
 * @see RFC 6750 §5.3 (tokens in logs)
 */
export function targetForLog(target: string): string {
  const q = target.indexOf('?');
  return q < 0 ? target : `${target.slice(0, q)}?…`;
}

/** The server an HTTP upstream's URL names, as its client spans record it. */
export interface ServerEndpoint {
  /** Host name or IP address as written in the URL (an IPv6 address without its brackets). */
  readonly address: string;
  /** TCP port: the URL's own, else its scheme's default (80 for http, 443 for https). */
  readonly port: number;
}

/** Default ports of the schemes an HTTP upstream may have. @see RFC 9110 §4.2.1 (http: 80), §4.2.2 (https: 443) */
const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/**
 * The `server.address` and `server.port` of an HTTP upstream: the host and port of its URL's
 * origin, the port explicit or the scheme's default. Only those two parts are read: userinfo,
 * path and query (which may hold credentials) never leave here. An IPv6 literal loses its
 * brackets (`http://[::1]:3000/mcp` is address `::1`, port 3000): the attribute is an address,
 * not a URL part.
 * @returns undefined for a URL that does not parse or whose scheme is neither http nor https
 * @see OTel semantic conventions, `server.address` / `server.port` (registry "server"; HTTP client
 *   spans: the host and port of the URI origin the request is sent to); telemetry digest §2, §8
 */
export function serverOfUrl(url: string): ServerEndpoint | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const fallback = DEFAULT_PORTS[u.protocol];
  if (fallback === undefined || u.hostname === '') return undefined;
  const host = u.hostname;
  return {
    address: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host,
    port: u.port === '' ? fallback : Number(u.port),
  };
}

/** What a hidden value is shown as. */
export const REDACTED = '[redacted]';

/**
 * Names whose values are credentials: query parameters (RFC 6750 §2.3 `access_token`, API keys,
 * signatures) and command-line flags (`--api-key`, `--db-password`, `--auth-token`). The one list
 * for both, so that `emulate`'s recorded queries and a stdio child's logged argv hide the same names.
 * A name holding one of the words, in any case; or exactly `code` (an OAuth authorization code in a
 * redirect's query) or `sig` (a signed URL's signature, e.g. an Azure SAS), which are too short to
 * look for inside other names (`unicode`, `signal`).
 * @see RFC 6749 §4.1.2 (authorization response: `code`); RFC 6750 §2.3
 */
export const CREDENTIAL_NAME = /token|key|secret|password|passwd|pwd|auth|signature|credential|^(?:code|sig)$/i;

/**
 * A query string as recorded: the value of every parameter whose name says it is a credential
 * ({@link CREDENTIAL_NAME}) becomes `[redacted]`; the rest, `sessionId` among them, is kept.
 * @param query the query string without `?`
 * @see RFC 6750 §2.3 (an access token in the query), §5.3 (tokens in logs)
 */
export function redactQuery(query: string): string {
  if (!query) return query;
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: the raw name is judged
      }
      return CREDENTIAL_NAME.test(name) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    })
    .join('&');
}

/**
 * A URL as a report to the user who gave it shows it (`switchyard probe --json`): whole, but with
 * its userinfo replaced by `[redacted]` and the values of its query's credential parameters
 * redacted ({@link redactQuery}), so that a report pasted into an issue or a CI log carries no
 * password or token. The path is kept: it is what the user probed.
 * @returns the URL so shown, or `[unparsable url]`
 * @see RFC 3986 §3.2.1 (userinfo: passwords in URLs deprecated); RFC 6750 §2.3, §5.3
 */
export function urlForReport(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '[unparsable url]';
  }
  const userinfo = u.username !== '' || u.password !== '' ? `${REDACTED}@` : '';
  const query = u.search === '' ? '' : `?${redactQuery(u.search.slice(1))}`;
  return `${u.protocol}//${userinfo}${u.host}${u.pathname}${query}${u.hash}`;
}

/** `scheme://` anywhere in a word (the start of a URL, possibly after `--flag=`). */
const URL_START = /[A-Za-z][A-Za-z0-9+.-]*:\/\//g;

/**
 * One word with the credentials of every URL in it hidden: the userinfo's password (or, without
 * one, the whole userinfo: `https://TOKEN@host` carries a token as the user name) and the value
 * of each query parameter named like a credential. Everything else is kept, so the word still
 * says which database or server it names.
 * @see RFC 3986 §3.2.1 (userinfo), §3.4 (query)
 */
export function argForDisplay(arg: string): string {
  let out = '';
  let at = 0;
  URL_START.lastIndex = 0;
  for (let m = URL_START.exec(arg); m; m = URL_START.exec(arg)) {
    const start = m.index + m[0].length;
    // The authority ends at the first `/`, `?` or `#` (RFC 3986 §3.2); userinfo ends at its last `@`.
    let end = start;
    while (end < arg.length && !'/?#'.includes(arg[end])) end++;
    const authority = arg.slice(start, end);
    const atSign = authority.lastIndexOf('@');
    out += arg.slice(at, start);
    if (atSign >= 0) {
      const userinfo = authority.slice(0, atSign);
      const colon = userinfo.indexOf(':');
      out += (colon >= 0 ? `${userinfo.slice(0, colon)}:${REDACTED}` : REDACTED) + authority.slice(atSign);
    } else out += authority;
    // The path is kept; the query (up to `#` or the end of the word) is redacted by name.
    let q = end;
    while (q < arg.length && arg[q] !== '?' && arg[q] !== '#') q++;
    out += arg.slice(end, q);
    at = q;
    if (arg[q] === '?') {
      let f = q + 1;
      while (f < arg.length && arg[f] !== '#') f++;
      out += '?' + redactQuery(arg.slice(q + 1, f));
      at = f;
    }
    URL_START.lastIndex = at;
  }
  return out + arg.slice(at);
}

/** `--flag=value`, `-f=value` or `NAME=value` (an assignment, as `env NAME=value cmd` takes): the part up to `=`. */
const ASSIGNMENT = /^(?:--?[A-Za-z][^=\s]*|[A-Za-z_][A-Za-z0-9_.-]*)=/;
/** A flag that takes its value as the next word. */
const FLAG = /^--?[A-Za-z][^=\s]*$/;
/** A header given as one word, `Authorization: Bearer …` (curl-style `-H` values). */
const HEADER = /^[A-Za-z][A-Za-z0-9-]*:\s/;

/** Whether a flag, variable or header name says its value is a credential (`--no-…` flags take none). */
function namesCredential(name: string): boolean {
  const bare = name.replace(/^-+/, '');
  return CREDENTIAL_NAME.test(bare) && !/^no-/i.test(bare);
}

/**
 * A stdio child's argv as logs, errors and the status page show it. After the program
 * (`argv[0]`, shown through {@link argForDisplay}), the value of every flag, variable or header
 * named like a credential ({@link CREDENTIAL_NAME}) becomes `[redacted]`: `--api-key=…`,
 * `--api-key …` (the next word, unless it starts with `--`), `DB_PASSWORD=…`,
 * `Authorization: …`. Every other word goes through {@link argForDisplay} (URL passwords and
 * credential query parameters). The child's environment is never shown at all.
 * @see RFC 6750 §5.3 (tokens in logs)
 */
export function argvForDisplay(argv: readonly string[]): string[] {
  const out: string[] = [];
  let hideNext = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (i === 0) {
      out.push(argForDisplay(arg));
      continue;
    }
    if (hideNext) {
      hideNext = false;
      if (!arg.startsWith('--')) {
        out.push(REDACTED);
        continue;
      }
    }
    const assignment = ASSIGNMENT.exec(arg);
    if (assignment && namesCredential(assignment[0].slice(0, -1))) out.push(assignment[0] + REDACTED);
    else if (FLAG.test(arg) && namesCredential(arg)) {
      out.push(arg);
      hideNext = true;
    } else if (HEADER.test(arg) && namesCredential(arg.slice(0, arg.indexOf(':')))) out.push(`${arg.slice(0, arg.indexOf(':'))}: ${REDACTED}`);
    else out.push(argForDisplay(arg));
  }
  return out;
}

/**
 * Whether `text` is a serialized origin in the form browsers send in `Origin` (RFC 6454 §6.2,
 * WHATWG URL "ASCII serialization of an origin"): `http` or `https`, a lowercase host (an IDN in
 * punycode, IPv6 in brackets), a port only when it is not the scheme's default, and no path
 * (not even `/`), userinfo, query or fragment. Returns `true` when it is one, the form to give
 * instead when `text` names an origin in another spelling (`HTTPS://App.Example:443/` →
 * `https://app.example`), or `false` when it names none.
 * @see RFC 6454 §6.2; WHATWG URL §4.3 (origin serialization)
 */
export function serializedOrigin(text: string): boolean | string {
  if (!/^https?:\/\//i.test(text)) return false;
  const u = URL.parse(text);
  if (!u || u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '' || u.pathname !== '/' || text.includes('?') || text.includes('#'))
    return false;
  return u.origin === text ? true : u.origin;
}
