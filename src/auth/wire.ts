// Authentication wired into the gateway: the front door's identify step per mount, RFC 9728 metadata routes, the open-listener check, upstream credentials and the stdio identity.

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SwitchyardError } from '../core/errors.js';
import type { Identity } from '../core/identity.js';
import type { RequestContext } from '../core/request.js';
import type { Logger } from '../log/logger.js';
import { createAuthenticator, type Authenticator, type HeaderSource, type ResourceRef, type VerifyOptions } from './authenticate.js';
import type { AuthConfig, OutboundConfig } from './config.js';
import { createTokenSource } from './outbound.js';
import { httpAuthOf, type AuthMount } from './open-listener.js';
import { METADATA_ROUTE_URLS, sourcesByServer, type MetadataHeadCheck, type SharedMetadata } from './metadata-share.js';
import { PRM_WELL_KNOWN, prmDocument, prmPath, prmUrl, type ProtectedResourceMetadata } from './prm.js';
import { supportedScopes } from './scopes.js';

export type { MetadataHeadCheck } from './metadata-share.js';

/** Options of {@link createFrontDoorAuth}. */
export interface FrontDoorAuthOptions {
  mounts: readonly AuthMount[];
  log: Logger;
  /**
   * The public base URL of a request: `scheme://host[:port]` and the prefix a trusted proxy
   * stripped, no trailing `/` (see `createPublicUrl` in src/transports/public-url.ts). A mount's
   * resource URI is this plus its path.
   * @throws SwitchyardError SWY_ERR_HTTP_HOST_INVALID, SWY_ERR_HTTP_FORWARDED_INVALID (400)
   */
  baseUrl(req: FastifyRequest): string;
}

/** The front door's authentication for every mount. */
export interface FrontDoorAuth {
  /**
   * The routes plugin's `identify`: authenticates one request on `mount` (any route: the MCP
   * path, HTTP+SSE stream and message paths, every method) before its body is handled.
   * Returns null for a mount without authentication (or `auth: { none: true }`). Every
   * `Authorization` field the request carries is read: more than one is malformed.
   * @throws SwitchyardError with `WWW-Authenticate` naming the mount's metadata URL:
   *   SWY_ERR_AUTH_REQUIRED (401), SWY_ERR_AUTH_INVALID_REQUEST / SWY_ERR_AUTH_TOKEN_TOO_LONG (400),
   *   SWY_ERR_AUTH_INVALID_TOKEN (401), SWY_ERR_AUTH_INSUFFICIENT_SCOPE (403);
   *   SWY_ERR_AUTH_ISSUER_UNAVAILABLE or SWY_ERR_AUTH_INTROSPECTION_BUSY (503, `Retry-After`);
   *   SWY_ERR_HTTP_HOST_INVALID (400)
   * Answers at once (no promise) when the connection proved the same credential for the same
   * resource within the last minute, and for a mount without authentication: a keep-alive client
   * then costs no microtask.
   * @see 2025-11-25 basic/authorization (access token usage: every request); RFC 6750 §2.1, §3
   */
  identify(req: FastifyRequest, mount: { path: string }): Promise<Identity | null> | Identity | null;
  /**
   * The same decision for a request that reached no fastify route (the library's fetch
   * handler), or an open stream's credential checked again: its headers, and the public base URL
   * its resource URI starts with (`scheme://host[:port]` and any prefix; the mount's path is
   * added). `opts.waitForPlace`: wait for an introspection place instead of being refused
   * SWY_ERR_AUTH_INTROSPECTION_BUSY (a background check; `BearerVerifier.verify`).
   * @throws what {@link identify} throws
   */
  identifyHeaders(headers: HeaderSource, baseUrl: string, mount: { path: string }, opts?: VerifyOptions): Promise<Identity | null>;
  /**
   * The RFC 9728 metadata of the authenticated mount whose metadata path `path` is
   * (`/.well-known/oauth-protected-resource` + the mount's path, or the bare well-known path when
   * the gateway serves one mount), among the mounts served now (`servedPaths`, MCP paths: a
   * front door keeps the mounts a reload removes until they are gone); undefined when none is.
   * Behind a proxy with a path prefix (`publicBaseUrl`'s path, a trusted `X-Forwarded-Prefix`),
   * the metadata URL a challenge names has the prefix after the well-known suffix
   * (`/.well-known/oauth-protected-resource/tenant-7/mcp`): a proxy that passes that path on as it
   * came is answered too, not only one that strips the prefix inside it.
   * @see RFC 9728 §3.1, §3.2; 2025-11-25 basic/authorization (protected resource metadata discovery)
   */
  metadataFor(req: FastifyRequest, path: string, servedPaths: readonly string[]): ProtectedResourceMetadata | undefined;
  /**
   * The same document for a request that reached no fastify route (the library's fetch
   * handler), given the public base URL its resource URI starts with (as {@link identifyHeaders}).
   * @see RFC 9728 §3.1, §3.2
   */
  metadataForBase(baseUrl: string, path: string, servedPaths: readonly string[]): ProtectedResourceMetadata | undefined;
  /** The paths of the mounts that authenticate (bearer tokens or API keys). */
  readonly protectedPaths: readonly string[];
}

/**
 * How long a connection's last proven identity is reused for the same `Authorization` value and
 * resource, ms (never past the credential's `exp`). Within it a token the issuer revokes, or an
 * API key removed by a reload, still passes on a connection that already used it; a reload builds
 * a new front door, so its memory starts empty.
 */
export const CONNECTION_IDENTITY_MS = 1_000;

/** What one connection proved last (see {@link CONNECTION_IDENTITY_MS}). */
interface ConnectionIdentity {
  /** The exact `Authorization` value that proved it (held only while the connection lives). */
  authorization: string;
  /**
   * The public base URL of the resource it was proved for; with `entry` (one per mount path) it
   * names the resource URI, base URL + mount path, without that string being built per request.
   */
  baseUrl: string;
  /** The mount's authentication that checked it (one per mount path). */
  entry: object;
  id: Identity;
  /** Until when it is reused, ms since the epoch. */
  untilMs: number;
}

/**
 * A mount's resource as one request names it. A class: an object literal with a getter is built
 * in V8's dictionary mode, about 0.8 µs each (docs/performance.md). The metadata URL is needed
 * only for a challenge, so it is computed when one is built.
 * @see RFC 8707 (resource indicators); RFC 9728 §3 (the metadata URL)
 */
class RequestResource implements ResourceRef {
  #prmUrl: string | undefined = undefined;

  /** @param uri the canonical resource URI: the request's public base URL and the mount's path */
  constructor(readonly uri: string) {}

  get prmUrl(): string {
    return (this.#prmUrl ??= prmUrl(this.uri));
  }
}

/**
 * The path prefix of a public base URL (`https://mcp.example.com/tenant-7` → `/tenant-7`), `''`
 * without one. A mount's resource identifier is the base URL plus the mount's path, so its
 * metadata URL (RFC 9728 §3.1: the well-known suffix inserted between the host and the path) is
 * `/.well-known/oauth-protected-resource` + prefix + mount path: the path the client asks for.
 */
function publicPrefixOf(baseUrl: string): string {
  const p = new URL(baseUrl).pathname;
  return p === '/' ? '' : p.replace(/\/+$/, '');
}

/** True when `auth` authenticates requests (`bearer` or `apiKeys`; not `none`). */
function authenticates(auth: AuthConfig | undefined): auth is AuthConfig {
  return auth !== undefined && auth.none !== true && (auth.bearer !== undefined || auth.apiKeys !== undefined);
}

/**
 * One field of a request by its lower-case name from `rawHeaders` (`[name, value, …]` as
 * node:http keeps them), repeated field lines joined with `, `; undefined when absent.
 * @see RFC 9110 §5.3 (field order and combination)
 */
function fieldOf(rawHeaders: readonly string[], name: string): string | undefined {
  let first: string | undefined;
  let values: string[] | undefined;
  // The length first: most names differ in it, and comparing it allocates nothing.
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if (rawHeaders[i].length === name.length && rawHeaders[i].toLowerCase() === name) {
      if (first === undefined) first = rawHeaders[i + 1];
      else (values ??= [first]).push(rawHeaders[i + 1]);
    }
  return values ? values.join(', ') : first;
}

/**
 * A request's fields by lower-case name from `rawHeaders`, repeated fields joined with `, `
 * (Node's `req.headers` keeps only the first `Authorization`, which would hide a second one).
 * @see RFC 9110 §5.3 (field order and combination)
 */
export function rawHeaderSource(rawHeaders: readonly string[]): HeaderSource {
  return { get: (name) => fieldOf(rawHeaders, name) };
}

/**
 * Builds the authentication of every mount: one authenticator per distinct `auth` value (so
 * mounts sharing the top-level `auth` share its JWKS and introspection caches).
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when an `auth` fails its schema
 */
export function createFrontDoorAuth(opts: FrontDoorAuthOptions): FrontDoorAuth {
  const byConfig = new Map<string, Authenticator>();
  const byPath = new Map<string, { mount: AuthMount; authenticator: Authenticator; auth: AuthConfig }>();
  for (const m of opts.mounts) {
    const auth = httpAuthOf(m.auth);
    if (!authenticates(auth)) continue;
    const key = JSON.stringify(auth);
    let authenticator = byConfig.get(key);
    if (!authenticator) {
      authenticator = createAuthenticator(auth, { log: opts.log });
      byConfig.set(key, authenticator);
    }
    byPath.set(m.path, { mount: m, authenticator, auth });
  }
  // Each `auth`'s scopes_supported, made once (not per metadata request).
  const scopesOf = new Map<AuthConfig, string[]>();
  for (const { auth } of byPath.values()) if (auth.bearer && !scopesOf.has(auth)) scopesOf.set(auth, supportedScopes(auth.bearer));
  const documentOf = (baseUrl: string, path: string, auth: AuthConfig): ProtectedResourceMetadata =>
    prmDocument({
      resource: baseUrl + path,
      authorizationServers: auth.bearer ? [auth.bearer.issuer] : [],
      scopesSupported: scopesOf.get(auth),
    });

  const byMetadataPath = new Map<string, { mount: AuthMount; auth: AuthConfig }>();
  for (const { mount, auth } of byPath.values()) byMetadataPath.set(prmPath(mount.path), { mount, auth });

  // The last identity each connection proved, by the exact Authorization value and resource URI:
  // a keep-alive client sends the same token again, which then skips parsing, hashing and lookup.
  const lastOf = new WeakMap<object, ConnectionIdentity>();

  return {
    identify(req, mount) {
      const entry = byPath.get(mount.path);
      if (!entry) return null;
      const rawHeaders = req.raw.rawHeaders;
      const authorization = fieldOf(rawHeaders, 'authorization');
      const baseUrl = opts.baseUrl(req);
      const socket = req.raw.socket as object | undefined;
      const last = socket ? lastOf.get(socket) : undefined;
      // The same entry is the same mount path, so the same base URL is the same resource URI.
      if (last !== undefined && last.authorization === authorization && last.baseUrl === baseUrl && last.entry === entry && Date.now() < last.untilMs)
        return last.id;
      return entry.authenticator.authenticate(rawHeaderSource(rawHeaders), new RequestResource(baseUrl + mount.path)).then((id) => {
        if (socket && id !== null && typeof authorization === 'string')
          lastOf.set(socket, { authorization, baseUrl, entry, id, untilMs: Math.min(id.expiresAtMs ?? Infinity, Date.now() + CONNECTION_IDENTITY_MS) });
        return id;
      });
    },
    identifyHeaders(headers, baseUrl, mount, opts) {
      const entry = byPath.get(mount.path);
      if (!entry) return Promise.resolve(null);
      return entry.authenticator.authenticate(headers, new RequestResource(baseUrl + mount.path), opts);
    },
    metadataFor(req, path, servedPaths) {
      return this.metadataForBase(opts.baseUrl(req), path, servedPaths);
    },
    metadataForBase(baseUrl, path, servedPaths) {
      const prefix = publicPrefixOf(baseUrl);
      // The public form first (what the challenge names), then the form a proxy that strips the prefix passes on.
      const publicForm =
        prefix !== '' && path.startsWith(`${PRM_WELL_KNOWN}${prefix}/`)
          ? byMetadataPath.get(PRM_WELL_KNOWN + path.slice(PRM_WELL_KNOWN.length + prefix.length))
          : undefined;
      const found = publicForm ?? (path === PRM_WELL_KNOWN ? (servedPaths.length === 1 ? byPath.get(servedPaths[0]) : undefined) : byMetadataPath.get(path));
      return found && servedPaths.includes(found.mount.path) ? documentOf(baseUrl, found.mount.path, found.auth) : undefined;
    },
    protectedPaths: [...byPath.keys()],
  };
}

/** The parts of a request that choose an upstream credential: who is calling, with which header. */
export type CredentialRef = Pick<RequestContext, 'identity' | 'authorization'>;

/** What an HTTP upstream connector asks for its outbound headers (src/upstreams/http/connector.ts). */
export interface UpstreamCredentials {
  /** True when `invalidate` can make the next `headers` differ (client credentials, token exchange): a 401 is worth one retry. */
  readonly refreshable: boolean;
  /**
   * The headers for one request to the upstream: for a client's request (`ref`), or for the
   * gateway's own (`ref` undefined: probe, control session, discovery). Token exchange has no
   * subject for the gateway's own requests, which then carry no credential.
   * @throws SwitchyardError SWY_ERR_AUTH_UPSTREAM_TOKEN (502), SWY_ERR_AUTH_NO_SUBJECT_TOKEN (403)
   */
  headers(ref: CredentialRef | undefined): Promise<Record<string, string>>;
  /** Forgets the token `ref`'s request used, after the upstream answered 401. */
  invalidate(ref: CredentialRef | undefined): void;
}

/** The caller's verified OAuth access token, for token exchange: only when the identity came from one (never an API key). */
function inboundToken(ref: CredentialRef | undefined): string | undefined {
  const source = ref?.identity?.source;
  if (source !== 'jwt' && source !== 'introspection') return undefined;
  const m = /^[ \t]*bearer +([^ \t]+)[ \t]*$/i.exec(ref?.authorization ?? '');
  return m?.[1];
}

/**
 * One HTTP upstream's credentials from its `credentials` config (`createTokenSource`), in the
 * shape the connectors take.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when `config` fails its schema
 * @see 2025-11-25 basic/authorization, Token Passthrough; RFC 6749 §4.4; RFC 8693
 */
export function createUpstreamCredentials(config: OutboundConfig, deps: { log: Logger; upstream: string }): UpstreamCredentials {
  const log = deps.log.child({ upstream: deps.upstream });
  const source = createTokenSource(config, { log });
  const exchange = 'tokenExchange' in config;
  return {
    refreshable: !('headers' in config),
    async headers(ref) {
      if (exchange && ref === undefined) return {};
      return source.headers({ token: inboundToken(ref) });
    },
    invalidate(ref) {
      const token = inboundToken(ref);
      source.invalidate(token !== undefined ? { token } : undefined);
    },
  };
}

/** The warning written once at start for each upstream with `forwardAuthorization`. */
export const FORWARD_AUTHORIZATION_WARNING = "forwardAuthorization passes the client's own token to this upstream (token passthrough)";

/**
 * Warns once per upstream that forwards the client's `Authorization`: the spec forbids token
 * passthrough, so it must be a deliberate choice (docs/security.md).
 * @see 2025-11-25 basic/security_best_practices#token-passthrough
 */
export function warnTokenPassthrough(upstreams: Iterable<{ name: string; forwardAuthorization?: boolean }>, log: Logger): void {
  for (const u of upstreams) if (u.forwardAuthorization === true) log.warn({ upstream: u.name }, FORWARD_AUTHORIZATION_WARNING);
}

/** What the metadata routes ask at each request: a front door and the mount paths served now. */
export type MetadataSource = () => { door: Pick<FrontDoorAuth, 'metadataFor'>; servedPaths: readonly string[] } | undefined;

/** What the routes context registers the metadata routes plugin with: its own head check. */
export interface MetadataRoutesOptions {
  headCheck?: MetadataHeadCheck;
}

/** The path of `req`'s origin-form target (before any `?`). */
const pathOf = (req: FastifyRequest): string => {
  const q = req.url.indexOf('?');
  return q < 0 ? req.url : req.url.slice(0, q);
};

/**
 * The head check of the Switchyard whose metadata document `req` asks for, among those sharing
 * its fastify server's metadata routes (the first, in registration order, that has one at its
 * path now); undefined for any other path, or when none has a document there (the routes'
 * context then checks with its own). For `RoutesOptions.headCheckOf`: a document is then
 * decided by its owner's Origin and Host allowlists and CORS (a preflight answered, its fields
 * set) whichever Switchyard's context registered the shared routes.
 * @see RFC 9728 §3.1; WHATWG Fetch §3.2
 */
export function metadataHeadCheck(req: FastifyRequest): MetadataHeadCheck | undefined {
  if (!req.url.startsWith(PRM_WELL_KNOWN)) return undefined;
  const shared = sourcesByServer.get(req.server.server);
  if (!shared || shared.joined.length < 2) return undefined;
  const path = pathOf(req);
  const live = shared.joined.map((j) => j.current());
  const servedPaths = live.flatMap((s) => s?.servedPaths ?? []);
  for (let i = 0; i < live.length; i++) if (live[i]?.door.metadataFor(req, path, servedPaths)) return shared.joined[i].headCheck;
  return undefined;
}

/**
 * GET routes for every RFC 9728 metadata path (`/.well-known/oauth-protected-resource` and below
 * it), served without authentication from the front door and served mounts `current()` returns
 * at each request, so that a mount a reload adds has its metadata at once and one it removes has
 * none (404, the not-found handler's answer). Register it inside the routes plugin (its Origin and Host checks
 * then apply). Several Switchyards in one fastify application (each its own plugin) share the
 * first one's routes, which ask each in registration order; the bare path names a document only
 * while all of them together serve exactly one mount (RFC 9728 §3.3: its `resource` can name one URL).
 * A document's request is checked by its owner's routes context ({@link metadataHeadCheck}, given
 * as `RoutesOptions.headCheckOf`): its Origin and Host allowlists and its CORS.
 * With `o.preflight` (CORS configured) the paths take OPTIONS too (once per server: a later
 * Switchyard with CORS registers them when the first had none), so that the routes plugin's
 * hook answers a CORS preflight there; any other OPTIONS gets the not-found answer, as without.
 * @see RFC 9728 §3.1, §3.2; 2025-11-25 basic/authorization (protected resource metadata discovery)
 */
export function metadataRoutesOf(current: MetadataSource, o: { preflight?: boolean } = {}): FastifyPluginAsync<MetadataRoutesOptions> {
  return async (app, opts) => {
    /** OPTIONS on the metadata paths, for the routes context's hook to answer a CORS preflight on; any other OPTIONS gets the not-found answer, as without. */
    const takeOptions = () => {
      for (const url of METADATA_ROUTE_URLS) app.route({ method: 'OPTIONS', url, handler: (_req, reply) => reply.callNotFound() });
    };
    const shared = sourcesByServer.get(app.server);
    if (shared) {
      shared.joined.push({ current, headCheck: opts.headCheck });
      // A later Switchyard with CORS where the first had none: the OPTIONS routes go in its own
      // context (the path is free), whose hook hands a document to its owner's check.
      if (o.preflight === true && !shared.options) {
        shared.options = true;
        takeOptions();
      }
      return;
    }
    const joined: SharedMetadata['joined'] = [{ current, headCheck: opts.headCheck }];
    sourcesByServer.set(app.server, { joined, options: o.preflight === true });
    /** The metadata document `req`'s path names now, if any. */
    const documentAt = (req: FastifyRequest): ProtectedResourceMetadata | undefined => {
      // The router matched an origin-form target under the well-known path: its path is before any `?`.
      const path = pathOf(req);
      const live = joined.length === 1 ? [current()] : joined.map((j) => j.current());
      const servedPaths = live.length === 1 ? (live[0]?.servedPaths ?? []) : live.flatMap((s) => s?.servedPaths ?? []);
      for (const now of live) {
        const doc = now?.door.metadataFor(req, path, servedPaths);
        if (doc) return doc;
      }
      return undefined;
    };
    const serve = async (req: FastifyRequest, reply: FastifyReply) => {
      const doc = documentAt(req);
      if (!doc) return reply.callNotFound();
      // A Buffer, so that fastify adds no charset: RFC 9728 §3.2 names `application/json`.
      reply.header('content-type', 'application/json');
      return Buffer.from(JSON.stringify(doc));
    };
    // RFC 9110 §15.5.6: another method on a metadata URL is 405 with the methods it serves, decided
    // from the head (the body is never read); a path that names no document stays 404.
    const wrongMethod = async (req: FastifyRequest, reply: FastifyReply) => {
      if (!documentAt(req)) return reply.callNotFound();
      throw new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow: 'GET, HEAD' } });
    };
    for (const url of METADATA_ROUTE_URLS) {
      app.get(url, serve);
      app.route({ method: ['POST', 'PUT', 'DELETE', 'PATCH'], url, onRequest: wrongMethod, handler: wrongMethod });
    }
    if (o.preflight === true) takeOptions();
  };
}
