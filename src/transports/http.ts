// The HTTP front door on fastify: an encapsulated plugin that serves the mounts (routes, the
// Origin/Host hook and the body parser live in its own context), and the standalone listener
// built on it.

import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction } from 'fastify';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Dialect } from '../core/dialect.js';
import { channels } from '../core/diagnostics.js';
import { Cancellation } from '../core/cancel.js';
import { listenFailed, SwitchyardError, toWireError, type ErrorCode, type ListenerName } from '../core/errors.js';
import { targetForLog } from '../core/url-text.js';
import { headerBag, type HeaderBag, type HttpExchange, type Sink, type SseStream } from '../core/exchange.js';
import { clientKey } from '../core/client-share.js';
import type { Identity } from '../core/identity.js';
import type { StreamCredential } from '../core/open-streams.js';
import type { JsonBody } from '../core/json-pieces.js';
import type { Limits } from '../core/limits.js';
import { errorResponse, idOf, serialize, type ParseLimits, type RequestId } from '../core/message.js';
import type { Logger } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { answerError } from './answer-error.js';
import { afterResponses, writeRawAnswer } from '../io/raw-answer.js';
import { lingerClose, type LingerBounds } from '../io/linger.js';
import { deferredSchemaCompilers } from '../io/fastify-compilers.js';
import { guardConnections, type ConnectionGuard } from '../io/connection-guard.js';
import { checkHead, decodePost, mcpMethodRefusal, PostChunks, PostText, postLimits, unsupportedTransferCoding, type RouteKind } from './front-door.js';
import { readPostBody } from './post-body.js';
import { createReplySink, writePieces } from './http-sink.js';
import { endInTurn, settleAnswers } from './end-batch.js';
import type { OriginPolicy } from './origin.js';
import { CORS_VARY, isPreflight, type Cors } from './cors.js';
import { createRequestGuard, fieldLines, hostFieldLines, splitTarget, type RequestGuard } from './request-guard.js';
import { referenceTo } from './public-url.js';
import { createRequestClientAddress, createRequestPublicUrl, type RequestClientAddress, type RequestPublicUrl } from './request-url.js';
import { DetachedStreams, openSse, type SseCut, type SseOptions } from './sse.js';

/** How a mount's dialect registry assigns an exchange (dialects/index.ts). */
export interface DialectRouter {
  /** The dialect for a request on the MCP path, or an error code to refuse it with. */
  forMcpPath(ex: Pick<HttpExchange, 'method' | 'headers' | 'body'>): Dialect | ErrorCode;
  /** The HTTP+SSE dialect, when enabled. */
  readonly httpSse: Dialect | undefined;
}

/** One mount: an MCP path (and its HTTP+SSE paths) served by one dialect registry. */
export interface HttpMount {
  /** The mount's name (config name; `default` for a flag-configured gateway). */
  name: string;
  /** The MCP endpoint path, e.g. `/mcp` or `/github/mcp`. */
  path: string;
  /** HTTP+SSE stream path (e.g. `/sse`), served when the registry has the HTTP+SSE dialect. */
  ssePath: string;
  /** HTTP+SSE message path named by the `endpoint` event (e.g. `/messages`). */
  messagesPath: string;
  router: DialectRouter;
  /**
   * The `Allow` of a 405 on the MCP path: the methods some dialect of the mount serves there
   * (RFC 9110 §10.2.1; `mcpAllowOf`), e.g. `GET` for HTTP+SSE alone.
   */
  mcpAllow: string;
  /** Largest body on this mount's routes, bytes (the listener's `maxBodyBytes` when absent). */
  maxBodyBytes?: number;
  /**
   * The mount's own bounds of what its requests carry and its SSE streams queue (an upstream's
   * `limits` merged over the top-level ones): the parse bounds (`maxJsonDepth`,
   * `maxIntegerDigits`, `maxIdBytes`), `keepaliveMs` and `maxStreamBufferBytes`. The listener's
   * when absent.
   */
  limits?: Pick<Limits, 'maxJsonDepth' | 'maxIntegerDigits' | 'maxIdBytes' | 'keepaliveMs' | 'maxStreamBufferBytes'>;
}

/** What a request's identity comes from. */
export type Identify = (req: FastifyRequest, mount: HttpMount, headers: HeaderBag) => Promise<Identity | null> | Identity | null;

/** Computes the public URL of a path for a request (see HttpExchange.publicUrl; `createRequestPublicUrl`). */
export type PublicUrl = RequestPublicUrl;

/**
 * Wraps an exchange before its dialect sees it (the emulator's knobs): returns the exchange to
 * use (typically `Object.create(ex)` with some members replaced, so that `reply()` and the
 * getters keep working on the wrapper), or null when the wrapper answered the request itself.
 */
export type ExchangeWrapper = (
  ex: HttpExchange,
  info: { route: RouteKind; mount: HttpMount; request: FastifyRequest },
) => HttpExchange | null | Promise<HttpExchange | null>;

/**
 * The mounts of a standalone listener, looked up per request: config reloads add and remove
 * mounts while it listens (fastify cannot add routes after `listen`).
 */
export interface MountTable {
  /** The mount serving `path` (without the query) and which of its routes that is; undefined when none. */
  resolve(path: string): { mount: HttpMount; route: RouteKind } | undefined;
  /** Every endpoint the listener serves now: each mount's paths and which of its routes each is. */
  endpoints(): Iterable<{ mount: HttpMount; route: RouteKind }>;
  /**
   * The largest body any mount may take, bytes: the parse bound of the one route. Each mount's own
   * `maxBodyBytes` is checked once the body is read.
   */
  readonly maxBodyBytes: number;
}

/** Options of the routes plugin. */
export interface RoutesOptions {
  /** The mounts, one fastify route each (the embeddable plugin); ignored when `table` is given. */
  mounts: readonly HttpMount[];
  /**
   * A live mount table: one catch-all route resolves the mount at request time instead of one
   * route per mount (the standalone listener, whose mounts change on reload).
   */
  table?: MountTable;
  /** Bounds: body size, SSE buffer and keepalive, parse bounds. */
  limits: Limits;
  origin: OriginPolicy;
  log: Logger;
  /**
   * The verified identity of a request: authentication before MCP, or the embedding host's own
   * (never derived from unverified headers). Refuses by throwing a SwitchyardError (401/403 with
   * its headers). Absent: every request is unauthenticated (identity null).
   */
  identify?: Identify;
  /**
   * `identify` decides from the request head alone (configured authentication: RFC 6750 headers
   * only), so a POST is authenticated before its body is read: a caller without a valid
   * credential gets its 401/400/403 at once and never makes the listener read and hold up to
   * `maxBodyBytes` (docs/security.md, "Authentication comes before the body"). Off for an
   * embedding host's own `identity` function, which may read what the host's later hooks set.
   */
  identifyBeforeBody?: boolean;
  /**
   * Registered in a host application (the library's plugin): an HTTP error thrown by the host's
   * own hooks (a 401 from its authentication, a 429 from its rate limit) goes to the host's error
   * handler instead of becoming 500 SWY_ERR_INTERNAL_FAULT. Off for the standalone listener.
   */
  hostErrors?: boolean;
  /** Public URLs (behind trusted proxies); absent: `createRequestPublicUrl({ trustProxy: false })` (Host, no proxy). */
  publicUrl?: PublicUrl;
  /**
   * A request's client address (behind trusted proxies, `trustProxy`), which counts its sessions
   * and listen streams when it has no identity (`HttpExchange.client`); absent: the socket peer.
   */
  clientAddress?: RequestClientAddress;
  /**
   * The listener's connection guard: a GET that would hold its connection open is refused with
   * 503 `SWY_ERR_HTTP_STREAM_LIMIT` when it has no room (`ConnectionGuard.roomForStream`).
   * Absent (the plugin in a host's own server): not checked.
   */
  connections?: Pick<ConnectionGuard, 'roomForStream'>;
  /** Wrappers applied to every exchange, in order. */
  wrappers?: readonly ExchangeWrapper[];
  /**
   * Further routes registered inside this plugin's context, so that the Origin and Host check
   * applies to them too: the RFC 9728 metadata routes, which answer without authentication.
   * Each is registered with this context's own {@link HeadCheck} (`RoutesPluginOptions`).
   */
  plugins?: readonly FastifyPluginAsync<RoutesPluginOptions>[];
  /**
   * The head check of the Switchyard that owns `req`'s path when the routes here serve another
   * one's too (the RFC 9728 metadata routes, which several Switchyards in one fastify server
   * share: fastify has one router per server); undefined: this context's own. Its Origin and
   * Host allowlists and its CORS then decide the request, as its own routes would.
   */
  headCheckOf?: (req: FastifyRequest) => HeadCheck | undefined;
  /**
   * CORS (`createCors`, from the config's `cors`): every answer on these routes carries `Vary:
   * Origin`, an answer to a listed `Origin` its `Access-Control-*` fields (set on the raw response
   * before anything is written, so hijacked answers, SSE streams and refusals carry them too), and
   * a preflight from a listed origin on a served path is answered 204 here, before the route's
   * checks, authentication or body. Absent: none of this (one branch a request).
   * @see WHATWG Fetch §3.2 (the CORS protocol)
   */
  cors?: Cors;
  /**
   * The `Allow` of a path a preflight may be answered on besides the mounts' routes (the RFC 9728
   * metadata paths, registered by `plugins`); undefined for any other path.
   */
  corsPaths?: (path: string) => string | undefined;
}

/**
 * The checks of a request head that a routes context makes before any route (its first
 * `onRequest` hook): the transfer coding, Origin and Host, then CORS (its fields, a preflight
 * answered 204). Returns true when the request goes on to its route, false when it was answered.
 * Never throws (a fault is answered 500).
 * @see 2025-11-25 basic/transports#security-warning; WHATWG Fetch §3.2
 */
export type HeadCheck = (req: FastifyRequest, reply: FastifyReply) => boolean;

/** The options a routes context registers its {@link RoutesOptions.plugins} with. */
export interface RoutesPluginOptions {
  /** The context's own head check, for routes another Switchyard's context serves ({@link RoutesOptions.headCheckOf}). */
  headCheck: HeadCheck;
}

/**
 * Sockets whose parser failed (the listener's clientErrorHandler): refused once, by hand, after
 * the answers to the requests read before the bad one.
 */
const refusedSockets = new WeakSet<Duplex>();

/**
 * Counts a refusal made before any dialect on the `refusal` channel (`switchyard_refusals_total`,
 * /status.json): its catalogue code, the HTTP status the client got, and the mount when known.
 */
function publishRefusal(code: ErrorCode, status: number, mount?: string): void {
  if (channels.refusal.hasSubscribers) channels.refusal.publish({ code, status, mount });
}

/**
 * Writes a JSON-RPC error response with id null on a raw reply (refusals before any dialect). A
 * local error (status 0) is answered as SWY_ERR_INTERNAL_FAULT, 500: callers log it (`answerError`).
 * A request on a socket the listener refused while the request was still arriving (a body that
 * did not arrive in time, answered 408 there and counted as SWY_ERR_HTTP_FRAMING) is neither
 * answered nor counted again; one that arrived whole before the bytes the parser refused is
 * answered, since that refusal waits for its answer (`afterResponses`).
 */
function refuse(reply: FastifyReply, given: SwitchyardError, mount?: HttpMount): void {
  const err = toWireError(given);
  reply.hijack();
  const res = reply.raw;
  // Only a request still arriving was answered there (`afterResponses`); one read whole before the
  // bad bytes behind it is answered here, which the refusal written by hand waits for.
  if (res.socket !== null && refusedSockets.has(res.socket) && !res.req.complete) return;
  publishRefusal(err.code, err.status, mount?.name);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(err.status, { 'content-type': 'application/json', ...err.headers });
  res.end(serialize(errorResponse(null, err.toRpcError())));
}

/**
 * Refuses a request whose body has not been read whole, and closes its connection: `Connection:
 * close`, then a lingering close ({@link lingerClose}, within `bounds`) instead of node:http's,
 * which destroyed the socket as soon as the answer was written. A client still sending the body
 * then left unread bytes on the socket, the close became a TCP reset, and the client lost the
 * answer it had not read yet (found by a review: a raw client that writes its whole 8 MB body
 * before reading got EPIPE and no 413, every time). The socket is marked refused, so that what
 * node's parser makes of the body cut short (HPE_INVALID_EOF_STATE when the client closes) is
 * neither answered nor counted again. An HTTP/2 request (a host's `http2: true` application) is
 * only refused: its connection carries other streams.
 * @see RFC 9112 §9.6 (tear-down), §6.1 (501), RFC 9110 §15.5.14 (413), RFC 9113 §8.2.2
 */
function refuseUnread(reply: FastifyReply, err: SwitchyardError, bounds: LingerBounds): void {
  const res = reply.raw;
  // An HTTP/2 request is one stream of a connection others share: refused alone, with no
  // connection-specific field (RFC 9113 §8.2.2), and its connection, the session's, is left as it is.
  if (res.req.httpVersionMajor === 2) return refuse(reply, err);
  res.setHeader('connection', 'close');
  const socket = res.socket;
  // node:http ends the socket of an answer that closes the connection with destroySoon(), once
  // the answer is written (resOnFinish); this socket lingers there instead.
  if (socket) socket.destroySoon = () => lingerClose(socket, bounds);
  refuse(reply, err);
  if (socket) refusedSockets.add(socket);
}

/**
 * Refuses a request whose `Transfer-Encoding` lists a coding other than `chunked` (node:http
 * undoes `chunked` alone, so a `gzip, chunked` body would reach the parser still compressed):
 * 501 with a JSON-RPC error whose id is null and `Connection: close`, before its body is read
 * (then a lingering close within `bounds`: `refuseUnread`). Returns true when it answered. Every
 * field line counts (node:http joins them, fastify's `inject()` may not).
 * @see RFC 9112 §6.1 (501 for a transfer coding the server does not understand), §9.6 (close)
 */
function refuseTransferCoding(req: FastifyRequest, reply: FastifyReply, log: Logger, bounds: LingerBounds): boolean {
  if (req.headers['transfer-encoding'] === undefined) return false;
  const lines = fieldLines(req.raw.rawHeaders, 'transfer-encoding');
  const coding = unsupportedTransferCoding(Array.isArray(lines) ? lines.join(', ') : lines);
  if (coding === undefined) return false;
  log.info({ reason: 'transfer coding', coding: coding.slice(0, 64) }, Lines.clientFault);
  // The body is never read: the connection cannot carry another request.
  refuseUnread(reply, new SwitchyardError('SWY_ERR_HTTP_TRANSFER_CODING'), bounds);
  return true;
}

/**
 * A URI reference from the document at path `from` to path `to`: relative when both are clean
 * paths, else `to` itself (see `referenceTo`).
 * @see RFC 3986 §4.2, §5.2
 */
export function relativeRef(from: string, to: string): string {
  return referenceTo(from, to);
}

/**
 * The error handler of a fastify context: fastify's own refusals (body too large, malformed
 * Content-Type, a body its parser refused) become catalogue errors by their status class;
 * with `hostErrors`, an HTTP error the host's own hooks threw is rethrown to the host's error
 * handler, and any other error they threw (`pastHostHooks(req)` false: the request never got
 * past them) is answered 500 `SWY_ERR_INTERNAL_FAULT` and logged at error as the host's
 * (`Lines.hostHookFault`); anything else is ours, logged, and internal. A body too large that is
 * still arriving closes its connection with a lingering close within `bounds`.
 */
function fastifyErrors(
  log: Logger,
  bounds: LingerBounds,
  hostErrors = false,
  pastHostHooks: (req: FastifyRequest) => boolean = () => true,
): (err: { code?: string; statusCode?: number }, req: FastifyRequest, reply: FastifyReply) => void {
  return (err, req, reply) => {
    // A body the client stopped sending by resetting or closing its connection (a killed process,
    // a closed tab): nobody is left to answer, and nothing was refused. No refusal counted or
    // logged; the request ends unanswered.
    if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_PARSE' && !req.raw.complete && req.raw.socket?.destroyed === true) {
      reply.hijack();
      return;
    }
    const tooLarge =
      (err instanceof SwitchyardError && err.code === 'SWY_ERR_HTTP_BODY_TOO_LARGE') || err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE';
    if (tooLarge && !req.raw.complete) {
      // The rest of the body is never read: the connection cannot carry another request, and a
      // client that stops sending and closes (curl does, once it reads the 413) leaves node's
      // parser inside that body (HPE_INVALID_EOF_STATE), which must not become a second answer
      // (a 400 after the 413) and a second refusal.
      refuseUnread(reply, err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE'), bounds);
      return;
    }
    if (err instanceof SwitchyardError) return refuse(reply, answerError(err, log));
    // In a host application, an HTTP error that is neither ours nor one of fastify's content-type
    // parser refusals was thrown by the host's own hooks (its authentication's 401, its rate
    // limit's 429): rethrown, fastify hands it to the host's error handler, as on its own routes.
    if (hostErrors && !tooLarge && isHttpErrorStatus(err.statusCode) && err.code?.startsWith('FST_ERR_CTP_') !== true) throw err as Error;
    if (tooLarge) return refuse(reply, new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE'));
    if (err.statusCode === 415) return refuse(reply, new SwitchyardError('SWY_ERR_HTTP_CONTENT_TYPE'));
    if (err.statusCode === 400) return refuse(reply, new SwitchyardError('SWY_ERR_REQ_PARSE'));
    // Switchyard's own hooks answer their failures themselves, and its parser's are catalogue
    // errors: before its handler, what is left was thrown by a hook of the host's.
    if (hostErrors && err.code?.startsWith('FST_') !== true && !pastHostHooks(req))
      log.error({ err, method: req.method, url: targetForLog(req.url) }, Lines.hostHookFault);
    else log.error({ err }, Lines.internalFault);
    refuse(reply, new SwitchyardError('SWY_ERR_INTERNAL_FAULT'));
  };
}

/** Whether `status` is an HTTP error status (400–599). */
function isHttpErrorStatus(status: unknown): boolean {
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599;
}

/** The refusal an Origin/Host verdict stands for. */
function verdictError(verdict: NonNullable<ReturnType<RequestGuard>>): SwitchyardError {
  return new SwitchyardError(verdict.code, verdict.code === 'SWY_ERR_HTTP_HOST_INVALID' ? { detail: verdict.reason } : {});
}

/**
 * One node:http request as its dialect sees it (HttpExchange), on a hijacked fastify reply. A
 * class, not an object literal: V8 makes a literal's getters (`query`, `signal`, `answered`) anew
 * on every request, about 0.8 µs each (docs/performance.md); the prototype's are shared. Wrappers
 * derive from it with `Object.create(ex)`, so `reply()` and the getters keep working on them.
 */
class NodeExchange implements HttpExchange {
  readonly method: string;
  readonly path: string;
  /**
   * What changes, in one object every wrapper shares (a wrapper made with `Object.create` reads it
   * through its prototype; private `#` fields would not pass that way). `rawQuery` is parsed when a
   * dialect asks (HTTP+SSE posts name their session there); `cancel` is made when first read.
   */
  private readonly st: { answered: boolean; rawQuery: string; query: URLSearchParams | undefined; cancel: Cancellation | undefined };

  constructor(
    private readonly req: FastifyRequest,
    private readonly res: FastifyReply['raw'],
    readonly headers: HeaderBag,
    readonly body: unknown,
    readonly identity: Identity | null,
    private readonly urls: PublicUrl,
    private readonly sseBounds: () => Omit<SseOptions, 'headers'>,
    private readonly addressOf: RequestClientAddress,
  ) {
    const { path, query } = splitTarget(req.url);
    this.method = req.method;
    this.path = path;
    this.st = { answered: false, rawQuery: query, query: undefined, cancel: undefined };
  }

  /**
   * The request's cancellation, made on first read with its close listener (no AbortController
   * unless someone reads `signal`: most requests are never cancelled). An HTTP+SSE GET never reads
   * it, and a listener would keep this exchange, and fastify's request, for the stream's life.
   */
  get cancel(): Cancellation {
    const st = this.st;
    if (st.cancel) return st.cancel;
    const c = (st.cancel = new Cancellation());
    const res = this.res;
    // The client may already have gone (the close event passed unseen).
    if (res.destroyed) {
      if (!res.writableFinished) c.abort();
    } else
      res.on('close', () => {
        if (!res.writableFinished) c.abort();
      });
    return c;
  }

  get query(): URLSearchParams {
    return (this.st.query ??= new URLSearchParams(this.st.rawQuery));
  }

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  get answered(): boolean {
    return this.st.answered;
  }

  /** Computed when read (an initialize, an HTTP+SSE GET, a listen): most requests never ask. */
  get client(): string | undefined {
    return clientKey(this.identity, this.identity === null ? this.addressOf(this.req.raw) : undefined);
  }

  publicUrl(path: string, relative = false): string {
    return this.urls(this.req, path, relative);
  }

  /** Computed when read (a stream's registration): the `Authorization` value and the base URL the front door named the resource with. */
  get credential(): StreamCredential | undefined {
    let baseUrl: string;
    try {
      baseUrl = this.urls(this.req, '', false);
    } catch {
      // A forwarded header the front door would refuse: nothing to check it against later.
      return undefined;
    }
    return { authorization: this.headers.get('authorization'), baseUrl };
  }

  json(status: number, body: JsonBody, h?: Readonly<Record<string, string>>): void {
    const res = this.res;
    if (this.st.answered || res.destroyed) return;
    this.st.answered = true;
    if (typeof body === 'string') {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...h });
      endInTurn(res, body);
      return;
    }
    // A large message: no Content-Length (its length is only known once written), so chunked.
    res.writeHead(status, { 'content-type': 'application/json', ...h });
    writePieces(res, body);
  }

  empty(status: number, h?: Readonly<Record<string, string>>): void {
    const res = this.res;
    if (this.st.answered || res.destroyed) return;
    this.st.answered = true;
    res.writeHead(status, h);
    endInTurn(res);
  }

  sse(h?: Readonly<Record<string, string>>, o?: { detach?: boolean }): SseStream {
    this.st.answered = true;
    const bounds = this.sseBounds();
    return openSse(this.res, { ...bounds, headers: h, detached: o?.detach ? bounds.detached : undefined });
  }

  /** `this`, so that a wrapper's json/sse/empty carry the sink's answer too. */
  reply(o?: Parameters<HttpExchange['reply']>[0]): Sink {
    return createReplySink(this, o);
  }
}

/**
 * Sets the `Access-Control-*` fields of an answer to `origin` when it is listed, on `res` before
 * its head is written (writeHead merges them with its own). Returns the fields set, or undefined
 * when the origin is not listed.
 * @see WHATWG Fetch §3.2.3 (HTTP responses)
 */
function setCorsFields(res: ServerResponse, cors: Cors, origin: string | undefined): Readonly<Record<string, string>> | undefined {
  const fields = cors.actual(origin);
  if (fields !== undefined) for (const name in fields) res.setHeader(name, fields[name]);
  return fields;
}

/**
 * Writes a JSON-RPC error with id null on a raw node:http response, before any route (its
 * catalogue status and headers; a local error: 500, see `toWireError`).
 */
export function writeRefusal(res: ServerResponse, given: SwitchyardError): void {
  const err = toWireError(given);
  const text = serialize(errorResponse(null, err.toRpcError()));
  if (!res.headersSent) res.writeHead(err.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...err.headers });
  res.end(text);
}

/**
 * The JSON-RPC id of the request whose POST body fastify read for `req` (decoded and parsed as its
 * route would, within `limits`), or null: not a POST, no body yet, a body that does not parse, or
 * no request id in it. For a refusal answered before the route (JSON-RPC 2.0 §5: the id is null
 * only when it cannot be determined).
 */
export async function requestIdOfBody(req: FastifyRequest, limits: ParseLimits & { maxBodyBytes: number }): Promise<RequestId | null> {
  const raw = req.body instanceof PostText || req.body instanceof PostChunks || Buffer.isBuffer(req.body) ? req.body : undefined;
  if (req.method !== 'POST' || raw === undefined) return null;
  try {
    return idOf(await decodePost(everyContentType(req.raw, headerBag(req.headers)), raw, postLimits(limits, limits.maxBodyBytes)), limits);
  } catch {
    return null;
  }
}

/**
 * The request decorator that carries a request's admitted head from its route's `onRequest` hook
 * to its handler. A symbol, not a name: a host application's own decorators cannot collide with it
 * (fastify refuses a second decorator of a name with FST_ERR_DEC_ALREADY_PRESENT).
 */
const ADMITTED_HEAD: unique symbol = Symbol('switchyard.admittedHead');
/** The request decorator that marks, in a host application, a request past the host's own hooks (a symbol: see ADMITTED_HEAD). */
const PAST_HOST_HOOKS: unique symbol = Symbol('switchyard.pastHostHooks');
/** A request with this plugin's decorators (each set only where the plugin declares it). */
const decorated = (req: FastifyRequest) => req as unknown as { [ADMITTED_HEAD]?: unknown; [PAST_HOST_HOOKS]?: boolean };

/**
 * The routes of every mount as an encapsulated fastify plugin: registered with `app.register`,
 * its hooks, body parser and error handler stay inside its own context, so a host application's
 * error handler, parsers and settings are untouched, while the host's own hooks (`onRequest`,
 * `onResponse`) still see MCP traffic. Every route first checks Origin and Host (403 with a
 * JSON-RPC error whose id is null); the MCP path then checks the HTTP method, Accept (406),
 * Content-Type (415) and body size (413) before a dialect sees the request.
 * @see 2025-11-25 basic/transports#security-warning; fastify docs/Reference/Encapsulation.md
 */
export const switchyardRoutes: FastifyPluginAsync<RoutesOptions> = async (app, opts) => {
  const { limits, log } = opts;
  const guard = createRequestGuard(opts.origin, () => app.server.address());
  const publicUrl = opts.publicUrl ?? createRequestPublicUrl({ trustProxy: false });
  const clientAddress = opts.clientAddress ?? createRequestClientAddress({ trustProxy: false });
  // Long-lived streams taken off node:http, ended here when the listener closes.
  const detached = new DetachedStreams();

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', readPostBody);

  const cors = opts.cors;
  /** The `Allow` of the path a preflight names, when this context serves it. */
  const corsAllowAt = (path: string) => allowAt(opts, path) ?? opts.corsPaths?.(path);

  // Origin and Host first, on every route (2025-11-25 basic/transports#security-warning), after
  // the framing: a transfer coding node:http does not undo is refused before anything else.
  const admitHead: HeadCheck = (req, reply) => {
    try {
      // A path no mount serves (the live table's catch-all takes every path) gets no CORS field,
      // as the per-mount routes' not-found answer has none; a served one `Vary: Origin` (RFC 9110
      // §12.5.5) on every answer, its refusals included.
      const allow = cors === undefined ? undefined : corsAllowAt(splitTarget(req.url).path);
      if (allow !== undefined) reply.raw.setHeader('vary', CORS_VARY);
      if (refuseTransferCoding(req, reply, log, limits)) return false;
      const verdict = guard(req.raw);
      if (verdict) {
        // From rawHeaders (every field line): fastify's inject() builds a request without
        // `headersDistinct`, and reading it made every refusal there a 500.
        log.info({ reason: verdict.reason, origin: fieldLines(req.raw.rawHeaders, 'origin'), host: hostFieldLines(req.raw) }, Lines.clientFault);
        refuse(reply, verdictError(verdict));
        return false;
      }
      // CORS fields go on the raw response once the Origin and Host check passed (a 403 for a
      // foreign Host is not the page's to read; a browser on a listed origin never sends one, and
      // a listed origin always passes the Origin check, createCors refuses any other), before
      // anything is written: every writer (a refusal, a dialect's answer, an SSE stream) writes
      // its head with writeHead, which keeps them.
      const corsFields = allow === undefined ? undefined : setCorsFields(reply.raw, cors!, req.headers.origin);
      // WHATWG Fetch §4.8: a preflight carries no credentials; answered here, before the route's
      // method check, authentication, body and dialect. One from an origin not listed, on a path
      // this context does not serve, and any other OPTIONS go on to the answer they always had.
      if (corsFields !== undefined && isPreflight(req.method, req.headers['access-control-request-method'])) {
        const fields = cors!.preflight(req.headers.origin, req.headers['access-control-request-headers'], allow!);
        if (fields !== undefined) {
          reply.hijack();
          reply.raw.writeHead(204, fields);
          reply.raw.end();
          return false;
        }
      }
    } catch (err) {
      // Answered here: in a host application, the error handler takes what reaches it before
      // the handler for a throw of the host's own hooks.
      log.error({ err }, Lines.internalFault);
      refuse(reply, new SwitchyardError('SWY_ERR_INTERNAL_FAULT'));
      return false;
    }
    return true;
  };
  // A route this context serves for another Switchyard (a metadata document it owns) is decided
  // by that one's checks: its allowlists and CORS, not this context's.
  const headCheckOf = opts.headCheckOf;
  app.addHook('onRequest', (req, reply, done) => {
    if ((headCheckOf?.(req) ?? admitHead)(req, reply)) done();
  });

  // In a host application, requests that got past the host's hooks: this context's `preHandler`
  // runs after every hook of the contexts above it (fastify runs a parent's hooks first), and
  // only the handler comes after it.
  // A request decorator, not a WeakSet of requests: see ADMITTED_HEAD.
  if (opts.hostErrors === true) {
    app.decorateRequest(PAST_HOST_HOOKS, false);
    app.addHook('preHandler', (req, _reply, done) => {
      decorated(req)[PAST_HOST_HOOKS] = true;
      done();
    });
  }
  app.setErrorHandler(fastifyErrors(log, limits, opts.hostErrors === true, (req) => decorated(req)[PAST_HOST_HOOKS] === true));

  // Answers held to the end of this turn, and those still going out (queued behind others on
  // their connection, a slow reader's, a large one in pieces: end-batch.ts), go out before
  // fastify closes the connections (it runs preClose hooks first; with forceCloseConnections it
  // then cuts them), within shutdownGraceMs.
  app.addHook('preClose', (done) => {
    void settleAnswers(limits.shutdownGraceMs).then(() => {
      // Streams taken off node:http (src/transports/sse.ts) are not among the connections
      // fastify cuts, and would hold server.close open.
      detached.endAll();
      done();
    });
  });

  for (const plugin of opts.plugins ?? []) await app.register(plugin, { headCheck: admitHead });

  /** A client that stopped reading an SSE stream was cut at its bound: said once, at warn, whatever the stream (docs/operations.md). */
  const onCut = (c: SseCut): void =>
    log.warn({ remoteAddress: c.remoteAddress, queuedBytes: c.queuedBytes, maxBufferBytes: c.maxBufferBytes }, Lines.slowClientCut);
  // A stream's bounds are its mount's (an upstream's own `keepaliveMs` and `maxStreamBufferBytes`),
  // made once per mount; before, every stream had the listener's whatever its mount said.
  const sseBounds = (l: Pick<Limits, 'keepaliveMs' | 'maxStreamBufferBytes'>) => (): Omit<SseOptions, 'headers'> => ({
    keepaliveMs: l.keepaliveMs,
    maxBufferBytes: l.maxStreamBufferBytes,
    detached,
    onCut,
  });
  const listenerSseBounds = sseBounds(limits);
  const mountSseBounds = new WeakMap<HttpMount, () => Omit<SseOptions, 'headers'>>();
  const sseBoundsOf = (m: HttpMount) => {
    if (m.limits === undefined) return listenerSseBounds;
    let b = mountSseBounds.get(m);
    if (!b) mountSseBounds.set(m, (b = sseBounds(m.limits)));
    return b;
  };
  const toExchange = (m: HttpMount, req: FastifyRequest, reply: FastifyReply, headers: HeaderBag, body: unknown, identity: Identity | null): HttpExchange => {
    reply.hijack();
    return new NodeExchange(req, reply.raw, headers, body, identity, publicUrl, sseBoundsOf(m), clientAddress);
  };

  const run = async (dialect: Dialect, ex: HttpExchange) => {
    try {
      await dialect.handle(ex);
    } catch (err) {
      // A catalogue error a dialect lets escape (a bad forwarded header while naming our URL)
      // answers as itself; anything else is ours.
      const known = err instanceof SwitchyardError && err.entry.wire !== false ? err : undefined;
      if (!known || known.entry.fault === 'internal') log.error({ err, dialect: dialect.id }, Lines.internalFault);
      const e = known ?? new SwitchyardError('SWY_ERR_INTERNAL_FAULT');
      if (!ex.answered) ex.json(e.status, serialize(errorResponse(null, e.toRpcError())), e.headers);
    }
  };

  // A mount's own parse bounds and body size, made once per mount (not per request: Limits is large).
  const mountPostLimits = new WeakMap<HttpMount, ParseLimits & { maxBodyBytes: number }>();
  const postLimitsOf = (m: HttpMount) => {
    let l = mountPostLimits.get(m);
    if (!l) mountPostLimits.set(m, (l = postLimits(m.limits ?? limits, m.maxBodyBytes ?? limits.maxBodyBytes)));
    return l;
  };

  /**
   * A POST's head as `authenticateHead` checked and authenticated it, before its body was read,
   * for mount `mount`: the catch-all route looks its mount up again in the handler, and a reload
   * meanwhile may have put another mount (with other `auth`) at the path.
   */
  type AdmittedHead = { headers: HeaderBag; identity: Identity | null; mount: HttpMount };
  // Kept on the request itself (a fastify request decorator, so every request has the member from
  // its constructor on and none changes shape), not in a WeakMap keyed by the request: a WeakMap
  // whose keys are young objects makes every scavenge walk its ephemeron table, and measured with
  // `bench/ab.mjs --layers jwt` that cost about 6% of the JWT row's throughput (docs/performance.md).
  app.decorateRequest(ADMITTED_HEAD, null);
  const setAdmittedHead = (req: FastifyRequest, head: AdmittedHead) => {
    decorated(req)[ADMITTED_HEAD] = head;
  };
  const admittedHeadOf = (req: FastifyRequest) => decorated(req)[ADMITTED_HEAD] as AdmittedHead | null | undefined;

  /** The checks of a request's head, in order: method and Accept, room for a stream, identity. */
  const checkRequestHead = (route: RouteKind, m: HttpMount, req: FastifyRequest, headers: HeaderBag): Promise<Identity | null> | Identity | null => {
    checkHead(route, req.method, headers, m.mcpAllow);
    // A GET stream holds its connection for its life; keep the connections POSTs need free.
    if (req.method === 'GET' && opts.connections && !opts.connections.roomForStream(req.raw.socket.remoteAddress))
      throw new SwitchyardError('SWY_ERR_HTTP_STREAM_LIMIT');
    return opts.identify ? opts.identify(req, m, headers) : null;
  };

  /**
   * The head checks and the identity of a request before fastify reads its body or runs the
   * context's `preHandler` hooks (a route's own `onRequest` hook, after the context's Origin and
   * Host guard, with `identifyBeforeBody`): a refusal is answered now, the body unread (node:http
   * discards what still comes), and nothing was started for it (the library starts upstreams in a
   * `preHandler`). Calls `done` once the head is decided: at once for a remembered identity, else
   * when the identity is known. An `onRequest` hook, not a `preParsing` one: the context's guard
   * already makes fastify run its `onRequest` chain, and a `preParsing` chain cost every request
   * a second one (its runner's closures and a bound handler, about 350 B: docs/performance.md).
   */
  const authenticateHead = (route: RouteKind, m: HttpMount, req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    let headers: HeaderBag;
    let got: Promise<Identity | null> | Identity | null;
    try {
      headers = headerBag(req.headers);
      got = checkRequestHead(route, m, req, headers);
    } catch (err) {
      refuse(reply, answerError(err, log), m);
      return done();
    }
    // A remembered identity goes on at once: no promise, no async hook (a callback hook costs
    // fastify no promise either).
    if (!(got instanceof Promise)) {
      setAdmittedHead(req, { headers, identity: got, mount: m });
      return done();
    }
    got.then(
      (identity) => {
        setAdmittedHead(req, { headers, identity, mount: m });
        done();
      },
      (err: unknown) => {
        refuse(reply, answerError(err, log), m);
        done();
      },
    );
  };

  /** Everything a route does before its dialect: head checks, identity, body, the exchange. */
  const admit = async (route: RouteKind, m: HttpMount, req: FastifyRequest, reply: FastifyReply): Promise<HttpExchange | undefined> => {
    // A head admitted for another mount (the path's mount replaced by a reload) is checked again.
    const admitted = admittedHeadOf(req);
    const early = admitted?.mount === m ? admitted : undefined;
    const headers = early?.headers ?? headerBag(req.headers);
    let identity: Identity | null = early?.identity ?? null;
    let body: unknown;
    try {
      if (!early) {
        // A remembered identity comes back at once; awaiting it anyway would cost a microtask.
        const got = checkRequestHead(route, m, req, headers);
        identity = got instanceof Promise ? await got : got;
      }
      if (req.method === 'POST') {
        const raw = req.body instanceof PostText || req.body instanceof PostChunks || Buffer.isBuffer(req.body) ? req.body : undefined;
        // The text is parsed now: the request must not hold it (a 5 MB body) until it ends.
        req.body = undefined;
        body = await decodePost(everyContentType(req.raw, headers), raw, m.maxBodyBytes === undefined && m.limits === undefined ? limits : postLimitsOf(m));
      }
    } catch (err) {
      refuse(reply, answerError(err, log), m);
      return undefined;
    }
    let ex: HttpExchange | null = toExchange(m, req, reply, headers, body, identity);
    for (const w of opts.wrappers ?? []) {
      ex = await w(ex, { route, mount: m, request: req });
      if (!ex) return undefined;
    }
    return ex;
  };

  /** Serves one request on route `route` of mount `m`. */
  const serve = async (route: RouteKind, m: HttpMount, req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const ex = await admit(route, m, req, reply);
    if (!ex) return;
    if (route !== 'mcp') {
      // Registered only when the mount serves HTTP+SSE, and looked up the same way by the table.
      if (m.router.httpSse) await run(m.router.httpSse, ex);
      return;
    }
    const target = m.router.forMcpPath(ex);
    if (typeof target === 'string') {
      // RFC 9110 §15.5.6: a 405 lists the methods the path does serve, never the refused one.
      const err = target === 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED' ? mcpMethodRefusal(ex.method, ex.headers, m.mcpAllow) : new SwitchyardError(target);
      publishRefusal(err.code, err.status, m.name);
      ex.json(err.status, serialize(errorResponse(null, err.toRpcError())), err.headers);
      return;
    }
    await run(target, ex);
  };

  const early = opts.identify !== undefined && opts.identifyBeforeBody === true;
  /** The route option that authenticates a request on `route` of `m` before its body (none without `identifyBeforeBody`). */
  const headFirst = (route: RouteKind, m: HttpMount) =>
    early ? { onRequest: (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => authenticateHead(route, m, req, reply, done) } : {};

  const table = opts.table;
  if (table) {
    // One route for every path: the mount is looked up now, so reloads can change the mounts.
    app.route({
      method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
      url: '/*',
      bodyLimit: table.maxBodyBytes,
      ...(early
        ? {
            onRequest: (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
              const found = table.resolve(splitTarget(req.url).path);
              if (found) authenticateHead(found.route, found.mount, req, reply, done);
              else done();
            },
          }
        : {}),
      handler: async (req, reply) => {
        // An absolute-form target (RFC 9112 §3.2.2) names its path after the authority.
        const found = table.resolve(splitTarget(req.url).path);
        // The same answers as per-mount routes: unknown paths, and OPTIONS on the HTTP+SSE paths, are 404.
        if (!found || (found.route !== 'mcp' && req.method === 'OPTIONS')) return refuse(reply, new SwitchyardError('SWY_ERR_HTTP_NOT_FOUND'));
        const max = found.mount.maxBodyBytes ?? limits.maxBodyBytes;
        const bytes = req.body instanceof PostText || req.body instanceof PostChunks ? req.body.bytes : Buffer.isBuffer(req.body) ? req.body.length : 0;
        if (bytes > max) return refuse(reply, new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE'), found.mount);
        await serve(found.route, found.mount, req, reply);
      },
    });
    return;
  }

  for (const m of opts.mounts) {
    app.route({
      method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
      url: m.path,
      bodyLimit: m.maxBodyBytes ?? limits.maxBodyBytes,
      ...headFirst('mcp', m),
      handler: (req, reply) => serve('mcp', m, req, reply),
    });
    if (!m.router.httpSse) continue;
    // With CORS the HTTP+SSE paths take OPTIONS too, so that a preflight reaches this context's
    // hook; any other OPTIONS there gets the not-found answer it got without a route.
    const optionsToo = cors === undefined ? [] : (['OPTIONS'] as const);
    /** `headFirst`, skipped for OPTIONS with CORS: without it no route took OPTIONS there, so it never met the head's checks. */
    const headFirstButOptions = (route: RouteKind) => {
      const hook = headFirst(route, m).onRequest;
      return hook === undefined || cors === undefined
        ? headFirst(route, m)
        : {
            onRequest: (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) =>
              req.method === 'OPTIONS' ? done() : hook(req, reply, done),
          };
    };
    app.route({
      method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', ...optionsToo],
      url: m.ssePath,
      ...headFirstButOptions('sse'),
      handler: (req, reply) => (req.method === 'OPTIONS' ? reply.callNotFound() : serve('sse', m, req, reply)),
    });
    app.route({
      method: ['POST', 'GET', 'PUT', 'DELETE', 'PATCH', ...optionsToo],
      url: m.messagesPath,
      bodyLimit: m.maxBodyBytes ?? limits.maxBodyBytes,
      ...headFirstButOptions('messages'),
      handler: (req, reply) => (req.method === 'OPTIONS' ? reply.callNotFound() : serve('messages', m, req, reply)),
    });
  }
};

/** The `Allow` of one route of a mount: the MCP path's dialects' methods; GET for the HTTP+SSE stream, POST for its messages. */
const allowOf = (mount: HttpMount, route: RouteKind): string => (route === 'mcp' ? mount.mcpAllow : route === 'sse' ? 'GET' : 'POST');

/**
 * The `Allow` of an endpoint at `path` (the MCP path: the methods its dialects serve; the
 * HTTP+SSE stream and message paths: GET and POST), or undefined when no mount serves `path`.
 * @see RFC 9110 §15.5.6 (405 carries `Allow`); 2025-11-25 basic/transports#streamable-http
 */
function allowAt(opts: RoutesOptions, path: string): string | undefined {
  if (opts.table) {
    const found = opts.table.resolve(path);
    return found ? allowOf(found.mount, found.route) : undefined;
  }
  for (const m of opts.mounts) {
    if (path === m.path) return allowOf(m, 'mcp');
    if (m.router.httpSse && path === m.ssePath) return allowOf(m, 'sse');
    if (m.router.httpSse && path === m.messagesPath) return allowOf(m, 'messages');
  }
  return undefined;
}

/** Methods in the order an `Allow` lists them (the MCP endpoint's own order first). */
const METHOD_ORDER = ['GET', 'POST', 'DELETE'];

/**
 * The methods some endpoint of the listener serves, as one `Allow` value (`GET, POST, DELETE`
 * with the default dialects): for a request whose target names no path, a CONNECT's.
 * @see RFC 9110 §10.2.1 (Allow; an empty value: no method), §15.5.6
 */
function listenerAllow(opts: Pick<RoutesOptions, 'mounts' | 'table'>): string {
  const methods = new Set<string>();
  const add = (mount: HttpMount, route: RouteKind) => {
    for (const m of allowOf(mount, route).split(',')) if (m.trim() !== '') methods.add(m.trim());
  };
  if (opts.table) for (const e of opts.table.endpoints()) add(e.mount, e.route);
  else
    for (const m of opts.mounts) {
      add(m, 'mcp');
      if (m.router.httpSse) {
        add(m, 'sse');
        add(m, 'messages');
      }
    }
  const rank = (m: string) => (METHOD_ORDER.includes(m) ? METHOD_ORDER.indexOf(m) : METHOD_ORDER.length);
  return [...methods].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)).join(', ');
}

/**
 * Writes `given` as a whole HTTP/1.1 answer on a socket node:http has handed over (a CONNECT's,
 * or one its parser gave up on): `status` (default the catalogue's) with the error's headers, and
 * a JSON-RPC error with id null; then closes it with a lingering close within `bounds`
 * ({@link writeRawAnswer}).
 * @see RFC 9112 §9.6 (tear-down); JSON-RPC 2.0 §5 (id null when the request's id is unknown)
 */
function writeRawRefusal(socket: Duplex, bounds: LingerBounds, given: SwitchyardError, status?: number, fields?: Readonly<Record<string, string>>): void {
  const err = toWireError(given);
  const body = serialize(errorResponse(null, err.toRpcError()));
  writeRawAnswer(socket, status ?? err.status, { 'Content-Type': 'application/json', ...err.headers, ...fields }, body, bounds);
}

/**
 * The CORS fields (`Access-Control-*`, `Vary`) the routes' first hook set on the response of the
 * request still arriving on `socket` (its body timed out, or its framing failed mid-body), for
 * the refusal written by hand in its place: that request's `Origin` passed the Origin and Host
 * check and is listed, or no `Access-Control-*` field was set. Undefined when no such response is
 * pending (a head that never arrived whole, a request refused before its route) or it set none.
 * @see WHATWG Fetch §3.2.3 (a response a page may read carries Access-Control-Allow-Origin)
 */
function pendingCorsFields(socket: Duplex): Record<string, string> | undefined {
  const res = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!res || res.headersSent || res.req.complete) return undefined;
  let out: Record<string, string> | undefined;
  for (const name of res.getHeaderNames()) {
    if (name !== 'vary' && !name.startsWith('access-control-')) continue;
    const v = res.getHeader(name);
    if (v !== undefined) (out ??= {})[name] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

/** Listener settings. */
export interface HttpTransportOptions extends RoutesOptions {
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
}

/** A started listener. */
export interface HttpTransport {
  readonly app: FastifyInstance;
  /** The bound address (port resolved when 0 was asked). */
  address(): { host: string; port: number };
  /** Stops accepting connections; open streams are closed by the dialects. */
  close(): Promise<void>;
}

/**
 * Creates the standalone fastify server with the listener-wide bounds (connections, header and
 * body time, body size) and the JSON-RPC answers for Node-level and unknown-path errors, with the
 * routes plugin registered. Does not listen.
 * @param beforeRoutes adds root hooks before the routes are registered and before the root's own
 *   transfer-coding check (they then run for every request, the ones it refuses included).
 */
export function createHttpServer(opts: RoutesOptions, beforeRoutes?: (app: FastifyInstance) => void): FastifyInstance {
  const { limits, log } = opts;
  const app = Fastify({
    schemaController: deferredSchemaCompilers(),
    bodyLimit: limits.maxBodyBytes,
    requestTimeout: limits.headTimeoutMs + limits.bodyTimeoutMs,
    keepAliveTimeout: 5_000,
    // Node checks header/request timeouts on this interval (default 30 s); keep it below the bounds.
    // requireHostHeader off: the Host guard answers a missing Host with a JSON-RPC body instead
    // of Node's bare 400 (RFC 9112 §3.2).
    http: {
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(Math.min(limits.headTimeoutMs, limits.bodyTimeoutMs) / 2))),
      requireHostHeader: false,
    },
    logger: false,
    return503OnClosing: true,
    forceCloseConnections: true,
    // Errors Node's parser raises before fastify sees a request (timeouts, bad framing, huge
    // headers) still get a JSON-RPC body with id null.
    // The answers to requests read before the bad one go out first (afterResponses); a parser that
    // has failed reports each later read as the same error, so a socket is refused once.
    clientErrorHandler: (err: NodeJS.ErrnoException & { code?: string }, socket) => {
      if (refusedSockets.has(socket)) return;
      // A connection the client reset or cut (a killed process, a closed tab) refused nothing and
      // can take no answer: Node reports its socket error here too. Closed without a refusal
      // counted or logged; its calls in flight end as on any closed connection.
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') {
        socket.destroy();
        return;
      }
      refusedSockets.add(socket);
      // RFC 9110 §15.5.9 (408), RFC 6585 §5 (431), else 400 (RFC 9112 §2.2)
      const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
      const refusal = new SwitchyardError('SWY_ERR_HTTP_FRAMING', { detail: STATUS_CODES[status] });
      publishRefusal(refusal.code, status);
      log.info({ reason: err.code ?? 'framing', status }, Lines.clientFault);
      // A body that timed out is its request's refusal: with the CORS fields its route gave it, so
      // that a page on a listed origin reads the 408 (none for a head that never arrived whole).
      afterResponses(socket, () => writeRawRefusal(socket, limits, refusal, status, pendingCorsFields(socket)));
    },
  });
  app.server.headersTimeout = limits.headTimeoutMs;
  // An expectation other than 100-continue (RFC 9110 §10.1.1): 417 with a JSON-RPC error body,
  // where node:http would answer an empty one.
  app.server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const err = new SwitchyardError('SWY_ERR_HTTP_EXPECTATION_FAILED');
    publishRefusal(err.code, err.status);
    writeRefusal(res, err);
  });
  // RFC 9110 §9.3.6: CONNECT asks for a tunnel, which only a proxy gives; an origin server may
  // refuse it. node:http hands the socket to a 'connect' listener and, with none, destroys it
  // unanswered: 405 with the listener's `Allow` (§15.5.6) and a JSON-RPC error body instead.
  app.server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const err = new SwitchyardError('SWY_ERR_HTTP_CONNECT_NOT_ALLOWED', { headers: { allow: listenerAllow(opts) } });
    publishRefusal(err.code, err.status);
    log.info({ reason: 'CONNECT' }, Lines.clientFault);
    writeRawRefusal(socket, limits, err);
  });
  // The total, a cap per remote address and a first-byte deadline (so idle sockets cannot hold every slot).
  const connections = guardConnections(app.server, {
    maxConnections: limits.maxConnections,
    maxPerAddress: limits.maxConnectionsPerAddress,
    firstByteTimeoutMs: limits.firstByteTimeoutMs,
    streamReserveDivisor: limits.streamReserveDivisor,
    onClose: (e) => log.debug({ code: e.code, remoteAddress: e.remoteAddress }, Lines.connectionClosed),
  });
  app.addHook('onClose', (_app, done) => {
    connections.close();
    done();
  });
  // Before the transfer-coding check, so that a caller's root hooks see the requests it refuses
  // too (the emulator records every request).
  beforeRoutes?.(app);
  // Unknown paths too (the routes plugin checks its own): RFC 9112 §6.1, before the body.
  app.addHook('onRequest', (req, reply, done) => {
    if (!refuseTransferCoding(req, reply, log, limits)) done();
  });
  const guard = createRequestGuard(opts.origin, () => app.server.address());
  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    const verdict = guard(req.raw);
    if (verdict) return refuse(reply, verdictError(verdict));
    // A method no route takes (TRACE, PROPFIND, QUERY, …) on an endpoint: 405 with its `Allow`.
    const allow = allowAt(opts, splitTarget(req.url).path);
    refuse(reply, allow ? new SwitchyardError('SWY_ERR_HTTP_METHOD_NOT_ALLOWED', { headers: { allow } }) : new SwitchyardError('SWY_ERR_HTTP_NOT_FOUND'));
  };
  app.setNotFoundHandler(notFound);
  // Unknown paths read a body too: as bytes, never parsed (so any Content-Type gets the 404), and
  // fastify's own refusals there (too large) are the client's.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const errors = fastifyErrors(log, limits);
  // fastify refuses a QUERY without Content-Type (RFC 10008 §2) before the not-found handler
  // runs; no route takes QUERY, so it gets the same 405 or 404 as a QUERY with one.
  app.setErrorHandler((err: { code?: string; statusCode?: number }, req, reply) =>
    err.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE' ? notFound(req, reply) : errors(err, req, reply),
  );
  void app.register(switchyardRoutes, { ...opts, connections: opts.connections ?? connections });
  return app;
}

/**
 * Checks that `host:port` can be bound now, with a listener that is closed at once (port 0 always
 * can): a start checks the MCP and admin listeners' addresses before it prepares or starts
 * anything, so that a port in use fails it at once, not after every upstream's first attempt (up
 * to `upstreamStartTimeoutMs`) with stdio children spawned for nothing, and with no `shutting
 * down` line for what was never started. Racy by nature (the port may be taken in between):
 * {@link startHttpTransport} and the admin server still report a bind that fails later.
 * @param what the listener named in the error: `MCP listener` (default) or `admin listener`
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED, as startHttpTransport's
 */
export async function checkListenable(host: string, port: number, what: ListenerName = 'MCP listener'): Promise<void> {
  if (port === 0) return;
  const server = createNetServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (cause) {
    throw listenFailed(what, host, port, cause);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * Starts the standalone listener on `host:port`.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED when the address cannot be bound
 */
export async function startHttpTransport(opts: HttpTransportOptions): Promise<HttpTransport> {
  const app = createHttpServer(opts);
  try {
    await app.listen({ host: opts.host, port: opts.port });
  } catch (cause) {
    await app.close().catch(() => {});
    throw listenFailed('MCP listener', opts.host, opts.port, cause);
  }
  const addr = app.server.address() as AddressInfo;
  // The pid is what SIGHUP (reload) and SIGTERM must reach: under `npm start` or `npx` the
  // process the operator started is npm, which does not pass SIGHUP on (docs/operations.md).
  opts.log.info({ host: addr.address, port: addr.port, paths: opts.mounts.map((m) => m.path), pid: process.pid }, Lines.listening);
  return {
    app,
    address: () => ({ host: addr.address, port: addr.port }),
    close: () => app.close(),
  };
}

/**
 * `headers` with `Content-Type` read from every field line of `raw`: Node's `req.headers` keeps
 * only the first of several, so `application/json` then `text/plain` passed as JSON here while
 * the fetch handler (whose `Headers` join them) refused it. Joined the same way, two lines are
 * not one media type (RFC 9110 §8.3): 415 on every front door.
 */
function everyContentType(raw: IncomingMessage, headers: HeaderBag): HeaderBag {
  const lines = fieldLines(raw.rawHeaders, 'content-type');
  if (!Array.isArray(lines)) return headers;
  const joined = lines.join(', ');
  return {
    get: (name) => (name === 'content-type' ? joined : headers.get(name)),
    count: (name) => (name === 'content-type' ? lines.length : headers.count(name)),
  };
}
