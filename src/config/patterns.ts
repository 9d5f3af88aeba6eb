// The host and URL patterns of the config schema, in one place. schema.json and its fragments
// (src/auth/schema.json, src/auth/outbound-schema.json) carry these exact strings as `pattern`
// (JSON Schema has no shared constants across files); test/invariants/config-schema.test.ts
// checks that every host and URL property of theirs uses one of them, and load.ts puts each in
// words. Patterns rather than custom formats: they work the same in the schema compiled at start,
// in the build's standalone validator and in editors, with nothing to import at run time.
//
// A host is what Node can bind or connect to and WHATWG URL parses alike (src/transports/authority.ts
// holds the request-time rules): a DNS-style name of labels of [A-Za-z0-9_-] (no empty label, no
// label starting or ending with `-`, the last label not numeric: RFC 3696 §2, and WHATWG reads
// such a name as an IPv4 address; at most 63 characters a label and 253 in all, 254 with the
// trailing dot: RFC 1035 §2.3.4), a dotted-decimal IPv4 address, or an IPv6 address (in
// brackets inside a URL or host[:port]). An http(s) URL needs a host (RFC 9110 §4.2.1). Schemes
// match in any case (RFC 3986 §3.1); WHATWG URL, and so node-redis, lower-cases them.

const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
/** The last label may not be numeric (decimal, or 0x hex) and end the name there. */
const TOP_LABEL = `(?!(?:[0-9]+|0[xX][0-9A-Fa-f]*)\\.?(?![A-Za-z0-9_.-]))${LABEL}`;
/**
 * RFC 1035 §2.3.4: a name is at most 255 octets on the wire, 253 characters as text (254 with the
 * trailing dot). Refused ahead: 255 name characters in a row, or 254 whose last is not that dot.
 */
const NAME_LENGTH = '(?![A-Za-z0-9_.-]{255}|[A-Za-z0-9_.-]{253}[A-Za-z0-9_-])';
const HOSTNAME = `${NAME_LENGTH}(?:${LABEL}\\.)*${TOP_LABEL}\\.?`;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H = '[0-9A-Fa-f]{1,4}';
/** RFC 3986 §3.2.2 IPv6address: eight groups, `::` for a run of zeros, the last 32 bits maybe dotted IPv4. */
const LS32 = `(?:${H}:${H}|${IPV4})`;
const IPV6 = [
  `(?:${H}:){6}${LS32}`,
  `::(?:${H}:){5}${LS32}`,
  `(?:${H})?::(?:${H}:){4}${LS32}`,
  `(?:(?:${H}:){0,1}${H})?::(?:${H}:){3}${LS32}`,
  `(?:(?:${H}:){0,2}${H})?::(?:${H}:){2}${LS32}`,
  `(?:(?:${H}:){0,3}${H})?::${H}:${LS32}`,
  `(?:(?:${H}:){0,4}${H})?::${LS32}`,
  `(?:(?:${H}:){0,5}${H})?::${H}`,
  `(?:(?:${H}:){0,6}${H})?::`,
].join('|');
/** A port a URL can name: 1–65535, no leading zero (port 0 names no server). */
const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})';
/** A URL's host: bracketed IPv6, IPv4 or a name, then an optional port. */
const URL_HOST_PORT = `(?:\\[(?:${IPV6})\\]|${IPV4}|${HOSTNAME})(?::${PORT})?`;
const HTTP = '[hH][tT][tT][pP][sS]?://';
/** userinfo: anything up to the authority's last `@` (as WHATWG URL reads it). */
const USERINFO = '(?:[^/?#\\s]*@)?';

/** A bind address (`listen.host`, `admin.host`, `--host`): a host name, an IPv4 or an IPv6 address, no brackets. */
export const HOST_PATTERN = `^(?:${IPV4}|(?:${IPV6})|${HOSTNAME})$`;

/** An `Origin`/`Host` allowlist entry (`allowedOrigins`, `allowedHosts`): host, IPv6 in brackets, optional `:port`. */
export const HOST_PORT_PATTERN = `^${URL_HOST_PORT}$`;

/** An http(s) URL with a host (upstream `url`, issuers, token and introspection endpoints). */
export const HTTP_URL_PATTERN = `^${HTTP}${USERINFO}${URL_HOST_PORT}(?:[/?#]\\S*)?$`;

/**
 * A clean path (as `isCleanPath` in src/transports/public-url.ts): `/`, or non-empty segments of
 * unreserved and sub-delim characters (no percent-encoding), none `.` or `..`, maybe a final `/`.
 */
const CLEAN_PATH = "(?:/|(?:/(?!\\.\\.?(?:/|$))[A-Za-z0-9\\-._~!$&'()*+,;=:@]+)+/?)";

/** `publicBaseUrl`: an http(s) URL with a host and a clean path, and no userinfo, query or fragment. */
export const PUBLIC_BASE_URL_PATTERN = `^${HTTP}${URL_HOST_PORT}${CLEAN_PATH}?$`;

/** `cluster.redis`: a redis:// or rediss:// URL (scheme in any case) with a host. */
export const REDIS_URL_PATTERN = `^[rR][eE][dD][iI][sS][sS]?://${USERINFO}${URL_HOST_PORT}(?:[/?#]\\S*)?$`;

/** An RFC 8707 `resource`: any absolute URI (format `uri` checks that), but an http(s) one needs a host. */
export const RESOURCE_URI_PATTERN = `^(?:(?![hH][tT][tT][pP][sS]?:)[\\s\\S]*|${HTTP}${USERINFO}${URL_HOST_PORT}(?:[/?#]\\S*)?)$`;

/** Each pattern, in words (the message of a value that does not match it). */
export const HOST_AND_URL_WORDS: Readonly<Record<string, string>> = {
  [HOST_PATTERN]: 'must be a host name or an IP address (e.g. localhost, my-host.example, 127.0.0.1, ::1)',
  [HOST_PORT_PATTERN]: 'must be a host, optionally with :port (e.g. app.example.com:443 or [::1])',
  [HTTP_URL_PATTERN]: 'must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)',
  [PUBLIC_BASE_URL_PATTERN]:
    'must be an http:// or https:// URL with a host and a clean path (no empty, . or .. segment, no percent-encoding), without userinfo, query or fragment',
  [REDIS_URL_PATTERN]: 'must be a redis:// or rediss:// URL with a host (e.g. redis://redis:6379)',
  [RESOURCE_URI_PATTERN]: 'must be an absolute URI; an http:// or https:// one needs a host',
};
