// Switchyard as a library: `createSwitchyard(config)` builds one gateway from a config and serves
// it as an encapsulated fastify plugin, a web-standard fetch handler and a Node (req, res) handler.

import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listMounts, ruleIssuesNow, validateConfig, type ConfigInput, type FrozenConfig, type Mount } from './config/load.js';
import { operatorText, SwitchyardError, toWireError } from './core/errors.js';
import { targetForLog } from './core/url-text.js';
import { checkHostIdentity, hostRefusal, type Identity } from './core/identity.js';
import type { Interceptor } from './core/interceptor.js';
import type { RequestContext } from './core/request.js';
import { errorResponse, serialize, type JsonObject, type RequestId } from './core/message.js';
import { metadataRouteTaken } from './auth/metadata-share.js';
import { PRM_WELL_KNOWN, prmPath } from './auth/prm.js';
import { assemble, type GatewayCore } from './gateway.js';
import { authMounts } from './config/compile.js';
import { createLogger, type Logger } from './log/logger.js';
import { Lines } from './log/lines.js';
import { answerError } from './transports/answer-error.js';
import { createFetchHandler, refusalResponse, type FetchHandler } from './transports/fetch.js';
import { createHttpServer, requestIdOfBody, switchyardRoutes, writeRefusal } from './transports/http.js';

export { SwitchyardError, PeerRpcError, Catalogue, type ErrorCode, type Fault, type RpcErrorObject } from './core/errors.js';
export type { Identity, IdentitySource } from './core/identity.js';
export type { Interceptor, Dispatch, Component, ComponentKind, ContextPatch } from './core/interceptor.js';
export { deriveContext } from './core/interceptor.js';
export type { RequestContext, Implementation } from './core/request.js';
export type { JsonObject } from './core/message.js';
export type { Limits } from './core/limits.js';
export { CHANNELS } from './core/diagnostics.js';
export type {
  RequestStartMessage,
  RequestEndMessage,
  UpstreamCallMessage,
  UpstreamStateMessage,
  SessionMessage,
  StreamMessage,
  StreamDropMessage,
  RefusalMessage,
  UpstreamFaultMessage,
} from './core/diagnostics.js';
export type { ConfigInput, FrozenConfig, UpstreamConfig, UpstreamInput } from './config/load.js';
export type { FetchHandler, FetchRequestOptions } from './transports/fetch.js';
export type { Logger } from './log/logger.js';
export { VERSION } from './version.js';

/**
 * A config as a file holds it (docs/config.md; the Switchyard shape or the `mcpServers` shape),
 * as a plain value ({@link ConfigInput}: every key of `schema.json`, typed, all optional). `{}`
 * serves the embedded demo at `/mcp`. `listen.host` and `listen.port` do not apply (the host
 * application listens); `listen.path` prefixes every mount path. What the types cannot say (a
 * pattern, a bound, a cross-field rule) is checked when the gateway is made:
 * SWY_ERR_CONFIG_INVALID listing every failing place.
 */
export type SwitchyardConfig = ConfigInput;

/** Extra parts the host application plugs in. */
export interface SwitchyardOptions {
  /**
   * pino logger, or fastify's `app.log` (typed `FastifyBaseLogger`, which lacks pino's `msgPrefix`
   * and the rest Switchyard does not call: it logs with `error`, `warn`, `info` and `debug`, and
   * makes children with `child`); default: JSON lines on stderr at `config.logLevel`.
   */
  log?: Logger | FastifyBaseLogger;
  /** Interceptors on every upstream call, after those the config asks for (the last is outermost). */
  interceptors?: readonly Interceptor[];
}

/** Options of {@link Switchyard.plugin}, given to `app.register`. */
export interface SwitchyardPluginOptions {
  /**
   * The caller the host verified, for each MCP request: typically read from what the host's own
   * authentication hook put on the request, built with {@link hostIdentity}; null: unauthenticated.
   * Absent: every request is unauthenticated. Anything that is not an {@link Identity} (a string,
   * `{ id }`) refuses the request with 500 `SWY_ERR_HOST_IDENTITY_INVALID`, in every era. Switchyard
   * never derives an identity from headers itself (unless the config's `auth` is set).
   * To refuse the request, throw an error whose `statusCode` is 401 or 403 (as fastify's and
   * `http-errors`' errors carry it; a `WWW-Authenticate` in its `headers` is sent along): it is
   * answered 401 `SWY_ERR_HOST_UNAUTHENTICATED` (with `WWW-Authenticate: Bearer` unless the error
   * names its own challenge) or 403 `SWY_ERR_HOST_FORBIDDEN`, a JSON-RPC error with id null and
   * code -32000, in every era. Anything else thrown is answered 500 `SWY_ERR_INTERNAL_FAULT` and
   * logged at error as the host's (`the identity() of the host application threw`).
   */
  identity?: (request: FastifyRequest) => Identity | null | Promise<Identity | null>;
}

/** What the caller of the Node handler says about one request. */
export interface NodeRequestOptions {
  /**
   * The caller the host verified itself, built with {@link hostIdentity}; null or absent:
   * unauthenticated. Anything else refuses the request with 500 `SWY_ERR_HOST_IDENTITY_INVALID`.
   */
  identity?: Identity | null;
}

/** A gateway built for embedding: one config, three ways to serve it, one lifecycle. */
export interface Switchyard {
  /** The validated, normalized, frozen config. */
  readonly config: FrozenConfig;
  /**
   * Every path served (for routing in the host): each MCP path, then its HTTP+SSE paths where
   * enabled, in mount order; then, for each mount with `auth`, its RFC 9728 metadata path
   * (`/.well-known/oauth-protected-resource` + the MCP path), and the bare well-known path when
   * that is the only mount (GET only; docs/security.md). Once {@link Switchyard.plugin} is
   * registered under a fastify `prefix`, the paths its routes are at (`/api/mcp`); `fetch` and
   * `handle` serve the config's paths whatever the plugin does.
   */
  readonly paths: readonly string[];
  /**
   * A fastify plugin serving every mount. Its routes, hooks, body parser and error handler live in
   * its own encapsulated context: the host's error handler, parsers and server settings are
   * untouched, and the host's own hooks (`onRequest`, `onResponse`) see MCP traffic. Closing the
   * host app closes the gateway (a `preClose` hook), so open streams do not hold the server open.
   * It can be registered once per instance.
   * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when registered with a `prefix` while HTTP+SSE is on
   *   (its `endpoint` event names the config's paths; use `listen.path` instead) or `auth` is set;
   *   SWY_ERR_HOST_PLUGIN_REUSED when this instance's plugin is registered already (in any application);
   *   SWY_ERR_HOST_PATH_TAKEN when one of its MCP or HTTP+SSE paths has a route in the application
   *   already (another instance with the same `listen.path`, or the host's own), naming the path;
   *   with `auth`, also when the host has a route of its own at a URL of the RFC 9728 metadata
   *   routes (`/.well-known/oauth-protected-resource` or `…/*`; its OPTIONS there only counts
   *   with `cors`), which this instance would add or share (`metadataRouteTaken`)
   */
  readonly plugin: FastifyPluginAsync<SwitchyardPluginOptions>;
  /**
   * The web-standard handler: resolves with the `Response` as soon as its answer starts; SSE
   * answers stream as a bounded `ReadableStream`; `request.signal` aborting cancels the work.
   */
  readonly fetch: FetchHandler;
  /** The Node handler: serves `req` on `res` (the same fastify routes, without a listener). */
  readonly handle: (req: IncomingMessage, res: ServerResponse, opts?: NodeRequestOptions) => Promise<void>;
  /**
   * Starts every upstream now (spawns stdio children, probes HTTP servers); otherwise they start on
   * the first request. Resolves once each has made its first attempt: by default one that failed
   * is down (its mount answers 503 `SWY_ERR_UPSTREAM_DOWN`) and reconnects in the background; with
   * `requireUpstreams: true` a failed start is final (this rejects, and every request then gets its
   * error, 502 `SWY_ERR_UPSTREAM_UNAVAILABLE`, and it is logged once at error as `start failed`). A
   * stdio child's last stderr line is in that log line and in the rejection's `operatorMessage`, never
   * in its `message` nor in what a client is sent. A config error found when the gateway assembles
   * (policy keys, docs/embedding.md) is final too.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE naming the upstream (requireUpstreams), SWY_ERR_CONFIG_INVALID (policy keys),
   *   SWY_ERR_ADMISSION_SHUTTING_DOWN once close() has begun, also for a call still waiting then
   *   (it rejects at once, never settling with the start that close() ends)
   */
  ready(): Promise<void>;
  /**
   * Graceful stop: new requests are refused (503), in-flight ones get `shutdownGraceMs` to finish,
   * streams and sessions close, upstreams stop. Idempotent.
   */
  close(): Promise<void>;
}

/** Options of {@link hostIdentity}. */
export interface HostIdentityOptions {
  /** Issuer (default `switchyard:host`): the host's own namespace of subjects. */
  issuer?: string;
  /** Granted scopes (default none). */
  scopes?: readonly string[];
  /** Claims for policy rules (default none); never put the credential itself here. */
  claims?: Readonly<Record<string, unknown>>;
  /** The OAuth client, when the host knows one. */
  clientId?: string;
  /** When the host's credential expires, ms since the epoch. */
  expiresAtMs?: number;
}

/**
 * An identity the host application verified itself (`source: 'host'`), to pass to the plugin,
 * fetch or Node handler. Sessions and held calls are bound to `issuer` + `subject`.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when `subject` is empty
 */
export function hostIdentity(subject: string, opts: HostIdentityOptions = {}): Identity {
  if (typeof subject !== 'string' || subject === '')
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'hostIdentity: subject must be a non-empty string' });
  return Object.freeze({
    issuer: opts.issuer ?? 'switchyard:host',
    subject,
    scopes: Object.freeze([...(opts.scopes ?? [])]),
    claims: Object.freeze({ ...opts.claims }),
    source: 'host' as const,
    ...(opts.clientId !== undefined ? { clientId: opts.clientId } : {}),
    ...(opts.expiresAtMs !== undefined ? { expiresAtMs: opts.expiresAtMs } : {}),
  });
}

/**
 * Whether fastify reads a body for `req` before its handler runs: a method other than GET, HEAD and
 * TRACE, with a `Content-Type` or a declared body (`Transfer-Encoding`, a `Content-Length` other
 * than 0); fastify's handle-request.js decides so.
 */
function awaitsBody(req: IncomingMessage): boolean {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'TRACE') return false;
  const length = req.headers['content-length'];
  return req.headers['content-type'] !== undefined || req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** What `v` is when it is not a JSON object (`a string`, `null`, `an array`), or undefined when it is one; never the value itself. */
function notAnObject(v: unknown): string | undefined {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return undefined;
  return v === undefined ? 'undefined' : `a ${typeof v}`;
}

/**
 * Sends a JSON-RPC error with id `id` on a fastify reply that has not been hijacked (a local
 * error: 500, see `answerError`).
 */
function sendError(reply: FastifyReply, given: SwitchyardError, id: RequestId | null): FastifyReply {
  const err = toWireError(given);
  return reply
    .code(err.status)
    .headers({ 'content-type': 'application/json', ...err.headers })
    .send(serialize(errorResponse(id, err.toRpcError())));
}

/** The keys of SwitchyardOptions; any other is refused. */
const OPTION_KEYS = ['log', 'interceptors'] as const satisfies ReadonlyArray<keyof SwitchyardOptions>;

/** The methods of a logger Switchyard calls (SwitchyardOptions.log). */
const LOGGER_METHODS = ['error', 'warn', 'info', 'debug', 'child'] as const;

/**
 * Checks createSwitchyard's second argument, so that a wrong one is refused where it was passed
 * rather than failing later as a TypeError inside the first request.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID naming the option: `options` not an object,
 *   `interceptors` not an array of functions, `log` without one of the logger methods, a key
 *   that is not an option
 */
function checkOptions(options: unknown): asserts options is SwitchyardOptions {
  const refuse = (what: string) => new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `createSwitchyard options (the second argument): ${what}` });
  const got = notAnObject(options);
  if (got !== undefined) throw refuse(`must be an object, not ${got}`);
  // A misspelt option (fastify's `logger` for `log`) would otherwise be ignored without a word.
  const unknown = Object.keys(options as object).filter((k) => !(OPTION_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0)
    throw refuse(
      `${unknown.map((k) => JSON.stringify(k)).join(', ')} ${unknown.length === 1 ? 'is not an option' : 'are not options'} (the options are: ${OPTION_KEYS.join(', ')})`,
    );
  const { log, interceptors } = options as Record<string, unknown>;
  if (interceptors !== undefined && (!Array.isArray(interceptors) || interceptors.some((i) => typeof i !== 'function')))
    throw refuse('interceptors must be an array of functions (each `(next) => (ctx) => Promise<result>`)');
  if (log !== undefined) {
    const missing = LOGGER_METHODS.filter((m) => typeof (log as Record<string, unknown> | null)?.[m] !== 'function');
    if (missing.length > 0) throw refuse(`log must be a pino logger or fastify's app.log (missing: ${missing.join(', ')})`);
  }
}

/**
 * The paths the plugin routes for `mounts` (not the RFC 9728 metadata paths, which instances on
 * one server share), each with the methods its route takes: the MCP path's six; the HTTP+SSE
 * paths' five, and OPTIONS with `cors` (the route a CORS preflight there is answered on). Mirrors
 * `switchyardRoutes` (src/transports/http.ts).
 * @param cors whether the config has `cors` (the routes plugin then gets a `Cors`).
 */
function routedPaths(mounts: readonly Mount[], cors: boolean): Array<{ path: string; methods: readonly HTTPMethods[] }> {
  const sseMethods: readonly HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', ...(cors ? (['OPTIONS'] as const) : [])];
  return mounts.flatMap((m) => [
    { path: m.mcpPath, methods: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'] as const },
    ...(m.ssePath !== undefined && m.messagesPath !== undefined
      ? [
          { path: m.ssePath, methods: sseMethods },
          { path: m.messagesPath, methods: sseMethods },
        ]
      : []),
  ]);
}

/**
 * Builds a gateway for embedding from a config value, validated like a config file
 * (`${VAR}` is not expanded: values are taken literally). Nothing starts until the first request
 * or {@link Switchyard.ready}.
 * @example
 *   const sy = createSwitchyard({});              // the embedded demo at /mcp
 *   // identities are built with hostIdentity(); `req.user` is what the host's own authentication set
 *   await app.register(sy.plugin, { identity: (req) => (req.user ? hostIdentity(req.user.id) : null) });
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID, `data.errors` listing every failing path (an
 *   issue about the config as a whole names it `config (the first argument)`; with a refused
 *   config, its policy rules' CEL errors, duplicate rule and limit names and renames to one name
 *   too, as `switchyard validate` lists them); or, without
 *   `data.errors`, naming what is wrong with `options` (the second argument)
 * @see docs/embedding.md
 */
export function createSwitchyard(config: SwitchyardConfig = {}, options: SwitchyardOptions = {}): Switchyard {
  // A refused config's rules are compiled too (CEL loaded then, synchronously), so that it lists what `switchyard validate` lists.
  const frozen = validateConfig(config, 'createSwitchyard', {
    expandEnv: false,
    environment: false,
    whole: 'config (the first argument)',
    checkRules: ruleIssuesNow,
  });
  checkOptions(options);
  const mounts = listMounts(frozen);
  // Mounts that authenticate: their resource URI (the audience) and RFC 9728 metadata URL are built from the config's paths.
  const protectedPaths = new Set(
    authMounts(frozen, mounts)
      .filter((m) => m.auth !== undefined && m.auth.none !== true && (m.auth.bearer !== undefined || m.auth.apiKeys !== undefined))
      .map((m) => m.path),
  );
  const authenticated = protectedPaths.size > 0;
  // The RFC 9728 metadata routes come with any mount's `auth` (src/gateway.ts), `none` included.
  const metadataRouted = authMounts(frozen, mounts).some((m) => m.auth !== undefined);
  // Each mount's paths, then the metadata its challenges name (served by every entry point, so
  // that a host routing `paths` to Switchyard routes them too): the bare document with one mount.
  const paths = [
    ...mounts.flatMap((m) => [m.mcpPath, ...(m.ssePath && m.messagesPath ? [m.ssePath, m.messagesPath] : [])]),
    ...mounts.filter((m) => protectedPaths.has(m.mcpPath)).map((m) => prmPath(m.mcpPath)),
    ...(mounts.length === 1 && protectedPaths.size === 1 ? [PRM_WELL_KNOWN] : []),
  ];
  let closed = false;
  /** Set once close() has drained the core: nothing is served any more. */
  let drained = false;
  const shuttingDown = () => new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
  // Made here rather than by assemble, so that an assembly that fails is logged too.
  let log: Logger | undefined;
  // A FastifyBaseLogger has every method the library's paths call (see SwitchyardOptions.log).
  const logOf = (): Logger => (log ??= (options.log as Logger | undefined) ?? createLogger(frozen.logLevel));
  // The host's identities are checked on every request, in every era; a host that gets them wrong
  // gets them wrong on every request, so the mistake is logged once (each request is still refused).
  let identityLogged = false;
  const verified = (given: unknown): Identity | null => {
    try {
      return checkHostIdentity(given);
    } catch (err) {
      if (!identityLogged) {
        identityLogged = true;
        logOf().error({ err }, Lines.hostIdentityInvalid);
      }
      throw err;
    }
  };

  // A context spread by the host's interceptor (`{ ...ctx, params }`) has no `signal`, an accessor
  // on the context's prototype: refused with a log line naming the cause, not a TypeError deeper in.
  // `in` sees the accessor without reading it (the signal is made on first read, Executor.run).
  // What it resolves with must be a JSON object, as every MCP result is (each revision's `Result`):
  // anything else would be spread into a 2026-07-28 result, or fail in the 2025 encoder.
  let spreadLogged = false;
  let resultLogged = false;
  const guardHostInterceptor =
    (interceptor: Interceptor): Interceptor =>
    (next) => {
      const dispatch = interceptor((ctx: RequestContext | Omit<RequestContext, 'signal'>) => {
        if ('signal' in ctx) return next(ctx);
        if (!spreadLogged) {
          spreadLogged = true;
          logOf().error({ method: ctx.method, upstream: ctx.upstream }, Lines.interceptorSpread);
        }
        return Promise.reject(new SwitchyardError('SWY_ERR_INTERNAL_FAULT'));
      });
      return (ctx) =>
        Promise.resolve(dispatch(ctx)).then((result: unknown) => {
          const got = notAnObject(result);
          if (got === undefined) return result as JsonObject;
          if (!resultLogged) {
            resultLogged = true;
            logOf().error({ method: ctx.method, upstream: ctx.upstream, got }, Lines.hostInterceptorResult);
          }
          throw new SwitchyardError('SWY_ERR_HOST_INTERCEPTOR_RESULT', { detail: got });
        });
    };

  let core: Promise<GatewayCore> | undefined;
  const coreOf = (): Promise<GatewayCore> => {
    if (closed && !core) return Promise.reject(shuttingDown());
    return (core ??= assemble(frozen, { log: logOf(), interceptors: options.interceptors?.map(guardHostInterceptor) }));
  };
  let started: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    // While a started gateway drains, its executors decide: they refuse new work (503, as this
    // would) and still serve the retry of a 2026-07-28 call held here until shutdownGraceMs ends
    // (docs/operations.md, "Held calls at shutdown and reload").
    if (closed)
      return started !== undefined && !drained
        ? started.catch(() => {
            throw shuttingDown();
          })
        : Promise.reject(shuttingDown());
    // A failed start is final and answers every request: said once to the operator, with what
    // only the operator may read (a child's last stderr line), which the requests' errors leave out.
    return (started ??= coreOf().then((c) =>
      c.start().catch((err: unknown) => {
        logOf().error({ ...(err instanceof SwitchyardError ? { code: err.code } : {}), err: operatorText(err) }, Lines.startFailed);
        throw err;
      }),
    ));
  };

  /**
   * The host's `ready()` calls still waiting for the start, each rejected when close() begins
   * (at most one entry per call pending, removed when it settles).
   */
  const readyWaiters = new Set<() => void>();
  /**
   * The host's `ready()`: the start (`ready` above) until close() begins, then
   * SWY_ERR_ADMISSION_SHUTTING_DOWN at once, also for a call already waiting, which would
   * otherwise settle with the start that close() ends (a stdio child that never answered is
   * stopped, and a start that failed without `requireUpstreams` resolves).
   */
  const hostReady = (): Promise<void> => {
    if (closed) return Promise.reject(shuttingDown());
    const starting = ready();
    return new Promise<void>((resolve, reject) => {
      const refuse = () => {
        readyWaiters.delete(refuse);
        reject(shuttingDown());
      };
      readyWaiters.add(refuse);
      // Settled after close() began (refused then already): refused, whatever the start did.
      const settle = (then: () => void) => {
        if (closed) return refuse();
        readyWaiters.delete(refuse);
        then();
      };
      starting.then(
        () => settle(resolve),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  };

  // Upstreams start on first use: after the front-door checks, before a dialect sees the request.
  // An assembly or start that failed is final: every request meets its error (a local one, such
  // as a policy rule that does not compile, as 500 SWY_ERR_INTERNAL_FAULT, logged once).
  const startOnFirstUse = async (req: FastifyRequest, reply: FastifyReply) => {
    // The RFC 9728 metadata is a static document: fetching it starts nothing (nor is it refused
    // once this instance closes, since another instance's documents may be served by these routes).
    if (req.routeOptions.url?.startsWith(PRM_WELL_KNOWN) === true) return;
    try {
      await ready();
    } catch (err) {
      // With the request's id, as the standalone listener's dialects refuse it (JSON-RPC 2.0 §5).
      const refusal = answerError(err, logOf());
      return sendError(reply, refusal, await requestIdOfBody(req, frozen.limits));
    }
  };

  // One registration per instance: the plugin closes the gateway when its application closes
  // (preClose), so a second application would lose it under its feet when the first one closed.
  let registered = false;
  // The paths the plugin's routes were registered at, when that is not the config's (a fastify prefix).
  let mountedPaths: string[] | undefined;
  const plugin: FastifyPluginAsync<SwitchyardPluginOptions> = async (app, o) => {
    if (registered)
      throw new SwitchyardError('SWY_ERR_HOST_PLUGIN_REUSED', {
        detail: 'its application closes it; create one instance per registration, or serve other servers with handle() or fetch()',
      });
    if (app.prefix !== '' && mounts.some((m) => m.ssePath !== undefined))
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
        detail: 'HTTP+SSE names its message path in the endpoint event: set listen.path instead of a fastify prefix',
      });
    // RFC 8707 / RFC 9728 §3.1: a token's audience is the URL the client calls, and the metadata URL
    // inserts the well-known suffix before that whole path, outside any prefix this plugin could
    // serve; under a prefix both would name the unprefixed path (every correct token refused).
    if (app.prefix !== '' && authenticated)
      throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
        detail: 'auth names the MCP path in the token audience and the RFC 9728 metadata URL: set listen.path instead of a fastify prefix',
      });
    // Under a prefix the routes are the prefixed paths (HTTP+SSE and auth, whose paths the wire
    // names, were refused above); fastify joins them so, one '/' between (its route.js).
    const under = (p: string) => (app.prefix === '' ? p : app.prefix.endsWith('/') ? app.prefix + p.slice(1) : app.prefix + p);
    // fastify's router is one per server: a route another instance (or the host) has at one of our
    // paths would fail our registration with a bare FST_ERR_DUPLICATED_ROUTE, naming no option.
    const taken = routedPaths(mounts, frozen.cors !== undefined).find(({ path, methods }) =>
      methods.some((method) => app.hasRoute({ url: under(path), method })),
    );
    if (taken)
      throw new SwitchyardError('SWY_ERR_HOST_PATH_TAKEN', {
        detail: `${under(taken.path)} (another Switchyard's plugin, or a route of the host's own): set this instance's listen.path (listen: { path: '/two' } serves /two/mcp)${!authenticated && mounts.every((m) => m.ssePath === undefined) ? ', or register its plugin under a fastify prefix of its own' : ''}`,
      });
    // The metadata routes are shared by the Switchyards on one server; a route of the host's own
    // there (one no Switchyard registered: its OPTIONS with CORS on included) would fail them with
    // the same bare FST_ERR_DUPLICATED_ROUTE.
    const metadataTaken = metadataRouted ? metadataRouteTaken(app, { preflight: frozen.cors !== undefined }) : undefined;
    if (metadataTaken !== undefined)
      throw new SwitchyardError('SWY_ERR_HOST_PATH_TAKEN', {
        detail: `${metadataTaken} (a route of the host's own: with auth, the RFC 9728 metadata routes take ${PRM_WELL_KNOWN} and every path below it${frozen.cors !== undefined ? ', OPTIONS included with cors' : ''}): move the host's route, or serve its paths below that one (${PRM_WELL_KNOWN}/NAME) instead of a wildcard`,
      });
    // Taken before anything is awaited, so that two registrations at once cannot both pass.
    registered = true;
    if (app.prefix !== '') mountedPaths = paths.map(under);
    const c = await coreOf();
    const hostIdentify = o.identity;
    // The host refuses a request by throwing an HTTP 401 or 403 from `identity` (its own
    // authentication's error): answered as configured authentication's refusals are, in every era.
    // Anything else it throws is a fault of the host's code, logged as such (not as ours).
    const askHost = hostIdentify
      ? async (req: FastifyRequest): Promise<Identity | null> => {
          let given: unknown;
          try {
            given = await hostIdentify(req);
          } catch (err) {
            const refusal = hostRefusal(err);
            if (refusal) throw refusal;
            logOf().error({ err, method: req.method, url: targetForLog(req.url) }, Lines.hostIdentityFault);
            throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err });
          }
          return verified(given);
        }
      : undefined;
    app.addHook('preHandler', startOnFirstUse);
    app.addHook('preClose', async () => {
      await close();
    });
    // Configured authentication (`auth`) decides identities when present; otherwise the host does.
    await app.register(switchyardRoutes, {
      ...c.routes,
      hostErrors: true,
      identify: c.routes.identify ?? askHost,
    });
  };

  let fetchHandler: FetchHandler | undefined;
  const fetch: FetchHandler = async (request, o) => {
    let c: GatewayCore;
    try {
      c = await coreOf();
    } catch (err) {
      return refusalResponse(answerError(err, logOf()));
    }
    fetchHandler ??= createFetchHandler({
      mounts: c.routes.mounts,
      limits: c.routes.limits,
      origin: c.routes.origin,
      log: c.log,
      checkIdentity: verified,
      // Configured authentication (`auth`) decides identities when present, as on the plugin.
      ...(c.fetchIdentify ? { identify: c.fetchIdentify } : {}),
      // What it admitted a request with, so that its streams are checked again as the listener's are.
      ...(c.fetchCredential ? { credential: c.fetchCredential } : {}),
      // Its challenges name RFC 9728 metadata: served here too, as the standalone listener serves it.
      ...(c.fetchMetadata ? { metadata: c.fetchMetadata } : {}),
      ...(c.routes.cors ? { cors: c.routes.cors, corsPaths: c.routes.corsPaths } : {}),
      ready,
    });
    return fetchHandler(request, o);
  };

  // The Node handler is the standalone server's fastify app without a listener; the identity of
  // each request travels on the request object, under a symbol of this instance (a member, not a
  // WeakMap keyed by the request: young keys make every scavenge walk an ephemeron table).
  const identityKey = Symbol('switchyard.hostIdentity');
  type WithIdentity = IncomingMessage & { [identityKey]?: unknown };
  let nodeApp: Promise<FastifyInstance> | undefined;
  /** Set when close() is about to close the Node handler's app (after the drain). */
  let nodeAppClosing = false;
  const nodeAppOf = () =>
    (nodeApp ??= coreOf().then(async (c) => {
      const identify = c.routes.identify ?? ((req: FastifyRequest) => verified((req.raw as WithIdentity)[identityKey]));
      const app = createHttpServer({ ...c.routes, identify }, (root) => root.addHook('preHandler', startOnFirstUse));
      await app.ready();
      return app;
    }));
  let bodyReadLogged = false;
  const handle = async (req: IncomingMessage, res: ServerResponse, o: NodeRequestOptions = {}): Promise<void> => {
    // While the gateway drains, its app still serves: the refusal (SWY_ERR_ADMISSION_SHUTTING_DOWN,
    // from `ready`) comes after the front-door checks and the body, with the request's id, as the
    // standalone listener answers. Once the app closes (or when none was made), it is refused
    // here, before the body, so with id null: the closed app would answer fastify's own 503 body.
    if (closed && (nodeAppClosing || nodeApp === undefined)) return writeRefusal(res, shuttingDown());
    // A body the host's code already read (a body parser such as express.json() ran first) cannot
    // be read again: fastify would wait for it until the host's requestTimeout, with no answer and
    // nothing logged. Refused at once instead, as fetch refuses a used body (500, logged).
    if ((req.readableDidRead || req.readableEnded) && awaitsBody(req)) {
      if (!bodyReadLogged) {
        bodyReadLogged = true;
        logOf().error({ method: req.method, url: req.url }, Lines.hostBodyRead);
      }
      return writeRefusal(res, new SwitchyardError('SWY_ERR_INTERNAL_FAULT'));
    }
    if (o.identity !== undefined) (req as WithIdentity)[identityKey] = o.identity;
    let app: FastifyInstance;
    try {
      app = await nodeAppOf();
    } catch (err) {
      writeRefusal(res, answerError(err, logOf()));
      return;
    }
    app.routing(req, res);
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      closed = true;
      for (const refuse of [...readyWaiters]) refuse();
      const c = await core?.catch(() => undefined);
      await c?.close();
      drained = true;
      nodeAppClosing = true;
      const app = await nodeApp?.catch(() => undefined);
      await app?.close();
    })());

  return {
    config: frozen,
    get paths() {
      return mountedPaths ?? paths;
    },
    plugin,
    fetch,
    handle,
    ready: hostReady,
    close,
  };
}
