// The Origin/Host guard of the HTTP front door over node:http requests: every field line, the
// absolute-form target, and the loopback Host allowlist pinned to the port actually bound.

import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BoundedMemo } from '../core/memo.js';
import { isLoopbackHost } from '../core/loopback.js';
import { createOriginCheck, loopbackHostAllowlist, type OriginCheck, type OriginPolicy, type OriginVerdict } from './origin.js';

/** A request target split into its parts (RFC 9112 §3.2). */
export interface RequestTarget {
  /** The path, starting with `/` (origin-form, or the path of an absolute-form target). */
  path: string;
  /** The query without its `?` (`''` when none). */
  query: string;
  /** The authority of an absolute-form target (`http://h:1/mcp` → `h:1`); absent for origin-form. */
  authority?: string;
}

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/;

/**
 * Splits a request target as Node received it (`req.url`): origin-form `/p?q`, or absolute-form
 * `http://authority/p?q`, whose authority a server must use in place of `Host` (RFC 9112 §3.2.2).
 * An absolute-form target with an empty path stands for `/`.
 * @see RFC 9112 §3.2.1 (origin-form), §3.2.2 (absolute-form); RFC 3986 §3
 */
export function splitTarget(url: string): RequestTarget {
  if (url.charCodeAt(0) !== 47 /* / */) {
    const m = ABSOLUTE_FORM.exec(url);
    if (m) return { authority: m[1], path: m[2] === '' ? '/' : m[2], query: m[3] ?? '' };
  }
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/** Checks one request; null when allowed. */
export type RequestGuard = (req: IncomingMessage) => OriginVerdict;

/** Local listeners whose loopback default a guard remembers when it never listens itself. */
const MAX_SOCKET_BINDS = 16;

/** (Origin, Host, target authority) combinations whose verdict one check remembers. */
export const MAX_REMEMBERED_VERDICTS = 256;

/**
 * The value of every field line named `name` (lower case) in Node's `rawHeaders`: undefined, one
 * string, or the list of several. Cheaper than `req.headersDistinct`, which copies every field.
 */
export function fieldLines(raw: readonly string[], name: string): string | string[] | undefined {
  let one: string | undefined;
  let many: string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const n = raw[i];
    if (n.length !== name.length || n.toLowerCase() !== name) continue;
    if (one === undefined) one = raw[i + 1];
    else (many ??= [one]).push(raw[i + 1]);
  }
  return many ?? one;
}

/**
 * The field lines that name a node:http request's authority: its `Host` lines, or for an HTTP/2
 * request (a fastify application created with `http2: true`) its `:authority` pseudo-header, which
 * carries the authority there and which clients send instead of `Host`; `Host` when it has none.
 * Shape as {@link fieldLines}: undefined when absent, an array when repeated.
 * @see RFC 9113 §8.3.1 (`:authority`; a `Host` is used only without it)
 */
export function hostFieldLines(req: Pick<IncomingMessage, 'rawHeaders' | 'httpVersionMajor'>): string | string[] | undefined {
  if (req.httpVersionMajor === 2) {
    const authority = fieldLines(req.rawHeaders, ':authority');
    if (authority !== undefined) return authority;
  }
  return fieldLines(req.rawHeaders, 'host');
}

function part(s: string | undefined): string {
  return s === undefined ? '-' : `${s.length}:${s}`;
}

/** `check` with its verdicts remembered per single-valued (Origin, Host, authority); lists are checked each time. */
function remembered(check: OriginCheck): OriginCheck {
  const seen = new BoundedMemo<OriginVerdict>(MAX_REMEMBERED_VERDICTS);
  return (origin, host, authority) => {
    if (typeof origin === 'object' || typeof host === 'object') return check(origin, host, authority);
    // Each part length-prefixed (absent: `-`), so no two combinations share a key.
    return seen.get(`${part(origin)}${part(host)}${part(authority)}`, () => check(origin, host, authority));
  };
}

/**
 * Compiles the Origin/Host policy for a listener; the returned function checks one request.
 *
 * - `Origin` and `Host` are read from every field line of `req.rawHeaders` (`req.headers.host`
 *   keeps only the first of several, which would let a second one pass unseen).
 * - Verdicts are remembered per (Origin, Host, target authority) for at most
 *   {@link MAX_REMEMBERED_VERDICTS} combinations, so a client sending the same fields again is
 *   not parsed again; past the bound the memory is emptied, never grown.
 * - An absolute-form target's authority is checked in place of `Host` (RFC 9112 §3.2.2).
 * - An HTTP/1.1 request without `Host` is 400 `SWY_ERR_HTTP_HOST_INVALID` (RFC 9112 §3.2 MUST);
 *   the listener turns Node's own bare 400 for it off so that this answer carries a JSON-RPC body.
 * - When `policy.allowedHosts` is empty and the listener is bound to a loopback address, the
 *   allowlist is `loopbackHostAllowlist(port, address)` with the port the listener actually
 *   bound (port 0 resolved). The address is read lazily from `boundAddress()` until it is known,
 *   so the guard can be built before `listen`. On any other bind an empty list checks nothing.
 *   A guard whose `boundAddress()` stays null (the library's Node handler, which never listens)
 *   takes the bind from each request's socket (`localAddress`, `localPort`) instead.
 * @param boundAddress the listener's address (`server.address()`), null before it listens.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when an allowlist entry is not a valid `host[:port]`
 * @see 2025-11-25 basic/transports#security-warning (validate Origin; bind to localhost against DNS rebinding)
 * @see RFC 9112 §3.2 (exactly one valid Host, else 400)
 */
export function createRequestGuard(policy: OriginPolicy, boundAddress: () => AddressInfo | string | null): RequestGuard {
  let check = policy.allowedHosts.length > 0 ? remembered(createOriginCheck(policy)) : undefined;
  const compiled = (): ReturnType<typeof createOriginCheck> | undefined => {
    if (check) return check;
    const addr = boundAddress();
    if (addr === null || typeof addr === 'string') return undefined;
    const hosts = isLoopbackHost(addr.address) ? loopbackHostAllowlist(addr.port, addr.address) : [];
    check = remembered(createOriginCheck({ ...policy, allowedHosts: hosts }));
    return check;
  };
  // A handler that never listens itself (the library's Node handler, mounted on the host's
  // server) knows its bind only from each request's socket: the same default from there,
  // remembered for a few listeners (one per local address and port), never more.
  const bySocket = new Map<string, ReturnType<typeof createOriginCheck>>();
  const forSocket = (req: IncomingMessage): ReturnType<typeof createOriginCheck> | undefined => {
    const address = req.socket?.localAddress;
    const port = req.socket?.localPort;
    if (address === undefined || port === undefined) return undefined;
    const key = `${address} ${port}`;
    let c = bySocket.get(key);
    if (!c) {
      c = remembered(createOriginCheck({ ...policy, allowedHosts: isLoopbackHost(address) ? loopbackHostAllowlist(port, address) : [] }));
      if (bySocket.size < MAX_SOCKET_BINDS) bySocket.set(key, c);
    }
    return c;
  };
  // Until the address is known (never, for a pipe), the policy as configured.
  const unbound = remembered(createOriginCheck(policy));
  return (req) => {
    const host = hostFieldLines(req);
    const { authority } = splitTarget(req.url ?? '/');
    if (host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      return { which: 'host', reason: 'Host missing', code: 'SWY_ERR_HTTP_HOST_INVALID' };
    }
    return (compiled() ?? (policy.allowedHosts.length === 0 ? forSocket(req) : undefined) ?? unbound)(fieldLines(req.rawHeaders, 'origin'), host, authority);
  };
}
