// Switchyard's own public URL as a request names it (behind trusted proxies), for every place
// that writes that URL: the HTTP+SSE endpoint event, OAuth resource metadata, links.

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { SwitchyardError } from '../core/errors.js';
import { authority } from '../core/url-text.js';
import { createClientAddress, createPublicUrl, referenceTo, type PublicUrl, type PublicUrlOptions, type PublicUrlRequest } from './public-url.js';
import { splitTarget } from './request-guard.js';

/**
 * The public URL of `path` (a path as the listener serves it, e.g. `/mcp`) for one request.
 * `relative`: a reference that resolves against the request's own URL instead (see
 * `referenceTo`). Takes a fastify request or anything with the raw node:http request on `raw`.
 */
export type RequestPublicUrl = (req: { readonly raw: IncomingMessage }, path: string, relative: boolean) => string;

/**
 * Compiles the public-URL rules of a listener (`trustProxy`, `publicBaseUrl`, see
 * `createPublicUrl`) into the function the routes call, computing each request's public view
 * once per run of calls for the same request (the latest request's view is kept).
 *
 * - absolute (`relative` false): `scheme://host[:port]` + the public prefix + `path`;
 * - relative: `referenceTo(requestPath, path, view)`.
 * A request without a usable `Host` (HTTP/1.0 sends none) still gets a relative reference; its
 * absolute URL then names the address the connection arrived at.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID for a bad `trustProxy` entry or `publicBaseUrl`
 * @returns a function that throws SwitchyardError SWY_ERR_HTTP_FORWARDED_INVALID (400) when a
 *   trusted proxy sent an invalid `X-Forwarded-*` value.
 * @see RFC 9110 §7.2 (Host), §4.2 (http and https URIs); RFC 3986 §4.2, §5.2
 */
export function createRequestPublicUrl(options: PublicUrlOptions): RequestPublicUrl {
  const compute = createPublicUrl(options);
  // The latest request's view only: a request names the URL once or a few times in a row, and a
  // view kept per request (a WeakMap) lived as long as its request, that is, for an HTTP+SSE
  // stream's whole life (some 250 bytes per idle stream).
  let lastRaw: IncomingMessage | undefined;
  let lastView: PublicUrl | SwitchyardError | undefined;
  const viewOf = (raw: IncomingMessage, path: string): PublicUrl | SwitchyardError => {
    let v = lastRaw === raw ? lastView : undefined;
    if (v === undefined) {
      try {
        v = compute(new NodeRequestFields(raw, path));
      } catch (err) {
        if (!(err instanceof SwitchyardError)) throw err;
        v = err;
      }
      lastRaw = raw;
      lastView = v;
    }
    return v;
  };
  return (req, path, relative) => {
    const raw = req.raw;
    // An absolute URL for an origin-form target (RFC 9112 §3.2.1: `Host` names the authority)
    // without a view: the authentication of every request asks this (src/auth/wire.ts).
    if (!relative && raw.url?.charCodeAt(0) === 47 /* / */) {
      const host = hostOf(raw);
      const base =
        host === undefined ? undefined : compute.baseUrlOfHost(raw.socket.remoteAddress, (raw.socket as Partial<TLSSocket>).encrypted === true, host);
      if (base !== undefined) return base + path;
    }
    const from = splitTarget(req.raw.url ?? '/').path;
    const view = viewOf(req.raw, from);
    if (view instanceof SwitchyardError) {
      if (view.code !== 'SWY_ERR_HTTP_HOST_INVALID') throw view;
      if (relative) return referenceTo(from, path);
      const local = req.raw.socket.localAddress ?? '127.0.0.1';
      return `http://${authority(local, req.raw.socket.localPort ?? 80)}${path}`;
    }
    return relative ? referenceTo(from, path, view) : view.baseUrl + path;
  };
}

/** The client address of a node:http request (see `createRequestClientAddress`). */
export type RequestClientAddress = (raw: IncomingMessage) => string | undefined;

/**
 * Compiles a listener's `trustProxy` rule into the function that gives a node:http request's
 * client address, as `createClientAddress` reads it: behind a trusted proxy the first untrusted
 * hop of `X-Forwarded-For`, else the socket peer.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID for a bad `trustProxy` entry
 */
export function createRequestClientAddress(options: Pick<PublicUrlOptions, 'trustProxy'>): RequestClientAddress {
  const of = createClientAddress(options.trustProxy);
  return (raw) => of({ remoteAddress: raw.socket.remoteAddress, headers: { get: (name) => joined(raw, name) } });
}

/**
 * What `createPublicUrl` reads of a node:http request: one object that is its own header reader
 * (a literal with a nested reader and its closure was three objects per request).
 */
class NodeRequestFields implements PublicUrlRequest {
  readonly remoteAddress: string | undefined;
  readonly secure: boolean;

  constructor(
    private readonly raw: IncomingMessage,
    readonly path: string,
  ) {
    this.remoteAddress = raw.socket.remoteAddress;
    this.secure = (raw.socket as Partial<TLSSocket>).encrypted === true;
  }

  get headers(): PublicUrlRequest['headers'] {
    return this;
  }

  /**
   * A field value, as {@link joined} reads it; `host` of an absolute-form request is the target's
   * authority, the one the request guard checked (RFC 9112 §3.2.2: Host is then ignored). Read
   * from the Host line, an unchecked name chose the resource URI, and with it the token audience.
   */
  get(name: string): string | undefined {
    if (name === 'host') {
      const { authority } = splitTarget(this.raw.url ?? '/');
      if (authority !== undefined) return authority;
      return hostOf(this.raw);
    }
    return joined(this.raw, name);
  }
}

/**
 * The authority an origin-form request names, as one value: its `Host`, or for an HTTP/2 request
 * its `:authority` (which clients send instead of `Host`), the one the request guard checked
 * (`hostFieldLines`); `Host` when it has none. Undefined when neither is there.
 * @see RFC 9113 §8.3.1 (`:authority`)
 */
function hostOf(raw: IncomingMessage): string | undefined {
  if (raw.httpVersionMajor === 2) {
    const authority = raw.headers[':authority'];
    if (typeof authority === 'string') return authority;
  }
  return raw.headers.host;
}

/** A field value as `createPublicUrl` reads it: several field lines joined with `, ` (Host: the first only, as Node keeps it). */
function joined(raw: IncomingMessage, name: string): string | undefined {
  const v = raw.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}
