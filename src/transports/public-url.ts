// The public URL a request was sent to (behind trusted proxies), and the HTTP+SSE endpoint reference.

import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';
import { SwitchyardError } from '../core/errors.js';
import { BoundedMemo } from '../core/memo.js';
import { formatAuthority, parseAuthority, type Authority } from './authority.js';

/**
 * Which peers may set `X-Forwarded-*`:
 * - `false`: none; the socket peer is the client and `Host` names the server.
 * - a number n: the n hops nearest the listener are proxies, the socket peer included. A hop
 *   count cannot check who the socket peer is, so use it only where nothing reaches the
 *   listener but those proxies (fastify 5.12.1 dropped it from forwarded host and protocol
 *   for that reason).
 * - addresses and CIDRs (`10.0.0.0/8`, `::1`, `fd00::/8`) and the names `loopback`,
 *   `linklocal`, `uniquelocal`: a hop is trusted when its address is listed.
 */
export type TrustProxy = false | number | readonly string[];

/** Options of `createPublicUrl`. */
export interface PublicUrlOptions {
  trustProxy: TrustProxy;
  /**
   * The URL clients reach the listener's root at (`https://mcp.example.com/tenant-7`): an
   * absolute http(s) URL without userinfo, query or fragment. Overrides every forwarded header.
   */
  publicBaseUrl?: string;
}

/** What `createPublicUrl` reads from a request. */
export interface PublicUrlRequest {
  /** The socket peer's address (`req.socket.remoteAddress`). */
  remoteAddress: string | undefined;
  /** Field values by lower-case name; several field lines joined with `, ` as Node does. */
  headers: { get(name: string): string | undefined };
  /** The request path as the listener received it, starting with `/` (no query). */
  path: string;
  /** True when the connection itself is TLS (the scheme when no trusted proxy says otherwise). */
  secure?: boolean;
}

/** The public view of one request. */
export interface PublicUrl {
  /** `scheme://host[:port]` + `prefix`, no trailing `/`; the default port is left out. */
  baseUrl: string;
  /** The path prefix a proxy stripped (`/tenant-7`), or `''`. */
  prefix: string;
  /** `scheme://host[:port]`. */
  origin: string;
  /** The public URL of this request: `baseUrl` + `path`. */
  url: string;
  /** Where scheme and authority came from: `publicBaseUrl`, a trusted `X-Forwarded-Host`, or `Host`. */
  authoritySource: 'config' | 'forwarded' | 'host';
  /** Where the prefix came from: `publicBaseUrl`, a trusted `X-Forwarded-Prefix`, or nowhere. */
  prefixSource: 'config' | 'forwarded' | 'none';
  /** The client's address: the first untrusted hop of `X-Forwarded-For`, else the socket peer. */
  clientAddress: string | undefined;
  /** How many hops nearest the listener were trusted proxies (0: no forwarded header honoured). */
  trustedHops: number;
}

// RFC 3986 §3.3 pchar without pct-encoded: the characters a clean path segment may hold.
const SEGMENT = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]+$/;

/**
 * True for a clean absolute path: `/`, or `/`-separated non-empty segments of RFC 3986 pchar
 * without percent-encoding, none of them `.` or `..`, with at most one trailing `/`.
 * @see RFC 3986 §3.3 (path, pchar), §5.2.4 (dot segments)
 */
export function isCleanPath(p: string): boolean {
  if (!p.startsWith('/')) return false;
  if (p === '/') return true;
  const segs = p.slice(1, p.endsWith('/') ? -1 : undefined).split('/');
  return segs.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..');
}

function forwardedInvalid(detail: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_HTTP_FORWARDED_INVALID', { detail });
}

function originOf(scheme: 'http' | 'https', a: Authority): string {
  const dflt = scheme === 'https' ? 443 : 80;
  return `${scheme}://${formatAuthority(a.port === dflt ? { host: a.host, kind: a.kind } : a)}`;
}

/** The path prefix of a clean path: no trailing `/`, `''` for the root. */
function prefixOf(p: string): string {
  return p.endsWith('/') ? p.slice(0, -1) : p;
}

/**
 * Picks the value the outermost trusted proxy wrote from a comma-separated forwarded header.
 * Each proxy appends its own entry, so the `trustedHops` right-most entries are theirs and
 * anything to their left came from the client; a proxy that overwrites leaves one entry.
 */
function hopValue(raw: string | undefined, trustedHops: number): string | undefined {
  if (raw === undefined) return undefined;
  const values = raw.split(',').map((v) => v.trim());
  const v = values[Math.max(0, values.length - trustedHops)];
  return v === '' ? undefined : v;
}

function compileTrust(trust: TrustProxy): (addr: string, hop: number) => boolean {
  if (trust === false) return () => false;
  if (typeof trust === 'number') {
    if (!Number.isSafeInteger(trust) || trust < 0) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `trustProxy hop count ${trust}` });
    return (_addr, hop) => hop < trust;
  }
  if (trust.length === 0) return () => false;
  try {
    return proxyaddr.compile([...trust]);
  } catch (cause) {
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `trustProxy: ${(cause as Error).message}`, cause });
  }
}

function parseBaseUrl(text: string): { scheme: 'http' | 'https'; authority: Authority; prefix: string } {
  const bad = (why: string) => new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `publicBaseUrl ${JSON.stringify(text)}: ${why}` });
  const m = /^(https?):\/\/([^/?#]*)(\/[^?#]*)?$/i.exec(text);
  if (!m) throw bad('not an absolute http(s) URL without query or fragment');
  if (m[2].includes('@')) throw bad('carries userinfo');
  const authority = parseAuthority(m[2]);
  if (!authority) throw bad('invalid authority');
  const path = m[3] ?? '/';
  if (!isCleanPath(path)) throw bad('path is not clean');
  return { scheme: m[1].toLowerCase() as 'http' | 'https', authority, prefix: prefixOf(path) };
}

/**
 * Distinct `Host` values whose origin one `createPublicUrl` function remembers; past the bound
 * the memory is emptied, never grown (a client cycling through Hosts only costs the parse).
 */
export const MAX_REMEMBERED_ORIGINS = 256;

/** Longest `Host` value remembered, characters: a reg-name of 255 (RFC 1035 via RFC 3986 §3.2.2) plus a port. */
const MAX_REMEMBERED_HOST_CHARS = 262;

/** A compiled `trustProxy`: is the hop at `i` (0: the socket peer) with address `addr` trusted. */
type Trust = (addr: string, i: number) => boolean;

/**
 * The client's address through the trusted hops (`X-Forwarded-For`, walked as
 * `@fastify/proxy-addr` walks it) and how many hops were trusted; the socket peer when it is
 * not trusted (`peerTrusted` false).
 */
function forwardedClient(
  trust: Trust,
  req: Pick<PublicUrlRequest, 'remoteAddress' | 'headers'>,
  peerTrusted: boolean,
): { clientAddress: string | undefined; trustedHops: number } {
  if (!peerTrusted) return { clientAddress: req.remoteAddress, trustedHops: 0 };
  // proxyaddr.all reads only `headers['x-forwarded-for']` and `socket.remoteAddress`.
  const fake = {
    headers: { 'x-forwarded-for': req.headers.get('x-forwarded-for') },
    socket: { remoteAddress: req.remoteAddress ?? '' },
  } as unknown as IncomingMessage;
  const addrs = proxyaddr.all(fake, trust);
  return { clientAddress: addrs[addrs.length - 1], trustedHops: Math.max(1, addrs.length - 1) };
}

/**
 * Compiles the `trustProxy` rule once; the returned function gives a request's client address:
 * the first untrusted hop of `X-Forwarded-For` when the socket peer is a trusted proxy, else the
 * socket peer (the same address {@link createPublicUrl} reports as `clientAddress`). Used to
 * count a client's sessions and listen streams (`maxSessionsPerClient`).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID for a bad `trustProxy` entry
 * @see RFC 7239 §1 (X-Forwarded-For is de facto); @fastify/proxy-addr `all`
 */
export function createClientAddress(trustProxy: TrustProxy): (req: Pick<PublicUrlRequest, 'remoteAddress' | 'headers'>) => string | undefined {
  const trust = compileTrust(trustProxy);
  if (trustProxy === false) return (req) => req.remoteAddress;
  return (req) => forwardedClient(trust, req, req.remoteAddress !== undefined && trust(req.remoteAddress, 0)).clientAddress;
}

/** A compiled set of public-URL rules (see {@link createPublicUrl}). */
export interface PublicUrlRules {
  /**
   * One request's public view.
   * @throws SwitchyardError SWY_ERR_HTTP_FORWARDED_INVALID (400) for an invalid honoured forwarded
   *   value; SWY_ERR_HTTP_HOST_INVALID (400) when the authority comes from `Host` and it is
   *   missing or invalid.
   */
  (req: PublicUrlRequest): PublicUrl;
  /**
   * The view's `baseUrl` for a request whose authority comes from its `Host` value `host` alone
   * (an origin-form target): undefined when `publicBaseUrl` is set, the socket peer
   * (`remoteAddress`) is a trusted proxy, or `host` is not a valid authority; the full view then
   * says what the base URL is, or why there is none. For a `Host` value seen before it builds
   * nothing: the front door's authentication asks it on every request (src/auth/wire.ts).
   * @param secure the connection is TLS (the scheme `https`).
   * @see RFC 9110 §7.2 (Host), §4.2 (http and https URIs)
   */
  baseUrlOfHost(remoteAddress: string | undefined, secure: boolean, host: string): string | undefined;
}

/**
 * Compiles the public-URL rules once; the returned function computes one request's public URL.
 *
 * Without `publicBaseUrl`, `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Prefix`
 * are honoured only when the socket peer is a trusted proxy, and then the entry the outermost
 * trusted proxy wrote (see `TrustProxy`); `X-Forwarded-For` gives the client address through
 * the trusted hops, as `@fastify/proxy-addr` walks it. Honoured values are validated: a scheme
 * other than http/https, a host that is not a valid authority, or a prefix that is not a clean
 * path is refused, never passed on. `Forwarded` (RFC 7239) is not read.
 *
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID for a bad `trustProxy` entry or `publicBaseUrl`
 * @returns a function that throws SwitchyardError SWY_ERR_HTTP_FORWARDED_INVALID (400) for an
 *   invalid honoured forwarded value, and SWY_ERR_HTTP_HOST_INVALID (400) when the authority
 *   comes from `Host` and it is missing or invalid.
 * @see RFC 9110 §7.2 (Host and :authority), §4.2 (http and https URIs); RFC 7239 §1 (X-Forwarded-* are de facto)
 */
export function createPublicUrl(options: PublicUrlOptions): PublicUrlRules {
  const trust = compileTrust(options.trustProxy);
  const base = options.publicBaseUrl === undefined ? undefined : parseBaseUrl(options.publicBaseUrl);
  // The origin a Host value gives, remembered per scheme: clients send the same few Hosts again
  // and again. One memory per scheme, keyed by the Host value, so that a lookup builds no key
  // string and no closure; together they hold at most MAX_REMEMBERED_ORIGINS.
  const origins = { http: new BoundedMemo<string | null>(MAX_REMEMBERED_ORIGINS / 2), https: new BoundedMemo<string | null>(MAX_REMEMBERED_ORIGINS / 2) };
  const parseOrigin = (scheme: 'http' | 'https', host: string): string | null => {
    const authority = parseAuthority(host);
    return authority ? originOf(scheme, authority) : null;
  };
  /** The origin `host` names under `scheme`, null when it is not a valid authority. */
  const rememberedOrigin = (scheme: 'http' | 'https', host: string): string | null => {
    // Only values that could be valid are kept, so the memory holds at most 256 short keys.
    if (host.length > MAX_REMEMBERED_HOST_CHARS) return parseOrigin(scheme, host);
    const seen = origins[scheme];
    let origin = seen.peek(host);
    if (origin === undefined) seen.put(host, (origin = parseOrigin(scheme, host)));
    return origin;
  };
  const hostOrigin = (scheme: 'http' | 'https', host: string): string => {
    const origin = rememberedOrigin(scheme, host);
    if (origin === null) throw new SwitchyardError('SWY_ERR_HTTP_HOST_INVALID', { detail: 'Host invalid' });
    return origin;
  };
  const view = (req: PublicUrlRequest): PublicUrl => {
    const peerTrusted = req.remoteAddress !== undefined && trust(req.remoteAddress, 0);
    const { clientAddress, trustedHops } = forwardedClient(trust, req, peerTrusted);
    if (base) {
      const origin = originOf(base.scheme, base.authority);
      return {
        clientAddress,
        trustedHops,
        origin,
        prefix: base.prefix,
        baseUrl: origin + base.prefix,
        url: origin + base.prefix + req.path,
        authoritySource: 'config',
        prefixSource: 'config',
      };
    }
    let scheme: 'http' | 'https' = req.secure ? 'https' : 'http';
    let authority: Authority | null = null;
    let prefix = '';
    let authoritySource: PublicUrl['authoritySource'] = 'host';
    let prefixSource: PublicUrl['prefixSource'] = 'none';
    if (peerTrusted) {
      const proto = hopValue(req.headers.get('x-forwarded-proto'), trustedHops);
      if (proto !== undefined) {
        const p = proto.toLowerCase();
        if (p !== 'http' && p !== 'https') throw forwardedInvalid(`X-Forwarded-Proto ${JSON.stringify(proto.slice(0, 40))}`);
        scheme = p;
      }
      const host = hopValue(req.headers.get('x-forwarded-host'), trustedHops);
      if (host !== undefined) {
        authority = parseAuthority(host);
        if (!authority) throw forwardedInvalid(`X-Forwarded-Host ${JSON.stringify(host.slice(0, 80))}`);
        authoritySource = 'forwarded';
      }
      const pre = hopValue(req.headers.get('x-forwarded-prefix'), trustedHops);
      if (pre !== undefined) {
        if (!isCleanPath(pre)) throw forwardedInvalid(`X-Forwarded-Prefix ${JSON.stringify(pre.slice(0, 80))}`);
        prefix = prefixOf(pre);
        prefixSource = 'forwarded';
      }
    }
    let origin: string;
    if (authority) origin = originOf(scheme, authority);
    else {
      const host = req.headers.get('host');
      if (host === undefined) throw new SwitchyardError('SWY_ERR_HTTP_HOST_INVALID', { detail: 'Host missing' });
      origin = hostOrigin(scheme, host);
    }
    return {
      clientAddress,
      trustedHops,
      origin,
      prefix,
      baseUrl: origin + prefix,
      url: origin + prefix + req.path,
      authoritySource,
      prefixSource,
    };
  };
  // Without a base URL or a trusted peer, the view's scheme is the connection's, its authority
  // `Host`'s and its prefix empty: its baseUrl is the remembered origin itself.
  const baseUrlOfHost = (remoteAddress: string | undefined, secure: boolean, host: string): string | undefined =>
    base !== undefined || (remoteAddress !== undefined && trust(remoteAddress, 0))
      ? undefined
      : (rememberedOrigin(secure ? 'https' : 'http', host) ?? undefined);
  return Object.assign(view, { baseUrlOfHost });
}

/**
 * A URI reference to `targetPath` on this server, chosen so that it resolves right against the
 * URL the request was sent to (`fromPath` as the listener received it):
 * - with `publicUrl` from `publicBaseUrl` or a trusted `X-Forwarded-Host`: the absolute URL
 *   (`https://h/tenant-7/messages`);
 * - with only a trusted prefix: the absolute path under it (`/tenant-7/messages`);
 * - otherwise a relative path from `fromPath` to `targetPath` (`/sse` → `messages`), which a
 *   proxy that strips a prefix (`/tenant-7/sse` → `/sse`) keeps right without knowing the prefix.
 * A path that is not clean (percent-encoding, dot segments) cannot be related safely and gets
 * the absolute path (under the trusted prefix, if any).
 * @see RFC 3986 §4.2 (relative references), §5.2 (resolution)
 */
export function referenceTo(fromPath: string, targetPath: string, publicUrl?: PublicUrl): string {
  if (publicUrl && publicUrl.authoritySource !== 'host') return publicUrl.baseUrl + targetPath;
  if (publicUrl && publicUrl.prefixSource !== 'none') return publicUrl.prefix + targetPath;
  if (!isCleanPath(fromPath) || !isCleanPath(targetPath)) return targetPath;
  return relativePath(fromPath, targetPath);
}

/**
 * The URI the 2024-11-05 `endpoint` event names for a new HTTP+SSE session: `referenceTo` the
 * message path from the stream's path, with the session id in the query
 * (GET `/sse`, messages `/messages` → `messages?sessionId=…`).
 * The MCP SDK client resolves it with `new URL(data, sseUrl)` and requires the same origin.
 * @param getPath the stream's path as the listener received it (`/sse`).
 * @param messagesPath the message path as the listener serves it (`/messages`).
 * @param sessionId the session id, percent-encoded into the query.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when a path is not a clean absolute path
 * @see 2024-11-05 basic/transports#http-with-sse (endpoint event: a URI for the client's POSTs); RFC 3986 §4.2, §5.2
 */
export function endpointReference(getPath: string, messagesPath: string, sessionId: string, publicUrl?: PublicUrl): string {
  for (const p of [getPath, messagesPath]) {
    if (!isCleanPath(p)) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `${JSON.stringify(p)} is not a clean absolute path` });
  }
  return `${referenceTo(getPath, messagesPath, publicUrl)}?sessionId=${encodeURIComponent(sessionId)}`;
}

/** The relative-path reference from the document at `from` to `to` (RFC 3986 §4.2, §5.2.3). */
function relativePath(from: string, to: string): string {
  const dir = from.split('/').slice(1, -1);
  const target = to.split('/').slice(1);
  let k = 0;
  while (k < dir.length && k < target.length - 1 && dir[k] === target[k]) k++;
  const rest = target.slice(k).join('/');
  const rel = '../'.repeat(dir.length - k) + rest;
  // An empty reference would keep the stream's own path, and a first segment with `:` would
  // read as a scheme (RFC 3986 §4.2): both get a leading `./`.
  if (rel === '' || (k === dir.length && rest.split('/')[0].includes(':'))) return `./${rel}`;
  return rel;
}
