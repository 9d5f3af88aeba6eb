// The web-standard front door: `(Request) => Promise<Response>` over the same mounts, checks and
// dialects as the fastify routes, with SSE answers as a bounded ReadableStream.

import type { Dialect } from '../core/dialect.js';
import { channels } from '../core/diagnostics.js';
import { SwitchyardError, toWireError } from '../core/errors.js';
import type { HeaderBag, HttpExchange, Sink, SseStream } from '../core/exchange.js';
import type { StreamCredential } from '../core/open-streams.js';
import { clientKey } from '../core/client-share.js';
import { checkHostIdentity, type Identity } from '../core/identity.js';
import type { Limits } from '../core/limits.js';
import type { JsonBody } from '../core/json-pieces.js';
import { errorResponse, idOf, serialize, type RequestId } from '../core/message.js';
import type { Logger } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { answerError } from './answer-error.js';
import { checkHead, decodePost, mcpMethodRefusal, postLimits, unsupportedTransferCoding, type RouteKind } from './front-door.js';
import { relativeRef, type HttpMount } from './http.js';
import { createReplySink } from './http-sink.js';
import { createOriginCheck, type OriginPolicy } from './origin.js';
import { CORS_VARY, isPreflight, type Cors } from './cors.js';
import { eventHead, SSE_HEADERS, StreamEnd, type SseCut } from './sse.js';

/** What the caller of a fetch handler says about one request. */
export interface FetchRequestOptions {
  /**
   * The caller the host application verified itself (its own authentication ran before MCP),
   * an {@link Identity} (the library's `hostIdentity()` builds one); null or absent:
   * unauthenticated. Anything else refuses the request with 500 SWY_ERR_HOST_IDENTITY_INVALID.
   * Never derived from the request's headers here.
   */
  identity?: Identity | null;
}

/** A web-standard handler: one `Request` in, its `Response` out (streamed for SSE answers). */
export type FetchHandler = (request: Request, opts?: FetchRequestOptions) => Promise<Response>;

/**
 * Authentication before MCP over a web `Request` (configured authentication): the verified
 * identity, or a thrown SwitchyardError (401/403 with its headers) that refuses the request.
 */
export type FetchIdentify = (request: Request, mount: HttpMount, headers: HeaderBag) => Promise<Identity | null> | Identity | null;

/** Options of {@link createFetchHandler}: the routes plugin's mounts, bounds and allowlists. */
export interface FetchHandlerOptions {
  mounts: readonly HttpMount[];
  /** Bounds: body size and time, SSE buffer and keepalive, parse bounds. */
  limits: Limits;
  origin: OriginPolicy;
  log: Logger;
  /**
   * Configured authentication: when set, it decides every request's identity and the caller's
   * `identity` is ignored. Absent: the caller's `identity` (or null) is used.
   */
  identify?: FetchIdentify;
  /**
   * Checks the caller's `identity` when no `identify` is configured (default `checkHostIdentity`:
   * an invalid one refuses the request with 500 SWY_ERR_HOST_IDENTITY_INVALID).
   */
  checkIdentity?: (given: unknown) => Identity | null;
  /**
   * Documents served at paths that name no mount (configured authentication: the RFC 9728
   * protected resource metadata its challenges name), for GET and HEAD, as `application/json`;
   * undefined for a path it does not serve (404, as any unknown path).
   * @see RFC 9728 §3.1, §3.2
   */
  metadata?: (request: Request, path: string) => object | undefined;
  /**
   * Configured authentication: what a request was admitted with, for a long-lived stream it opens
   * to be checked again (`HttpExchange.credential`: at its token's expiry, at a reload that changes
   * `auth`), as on the standalone listener; read only when a dialect registers a stream. Absent:
   * its streams carry none (a host's own identity is never checked again).
   */
  credential?: (request: Request) => StreamCredential | undefined;
  /**
   * Awaited after the front-door checks and before a dialect sees the request (the library starts
   * its upstreams here on first use). A rejection refuses the request with its catalogue error.
   */
  ready?: () => Promise<void>;
  /**
   * CORS, as on the fastify routes (`RoutesOptions.cors`): `Vary: Origin` on every answer, the
   * `Access-Control-*` fields on answers to a listed `Origin`, and a preflight from one on a
   * served path (a mount's, or one `corsPaths` names) answered 204 after the Origin and Host
   * check, before anything else. Absent: none.
   */
  cors?: Cors;
  /** The `Allow` of a path a preflight may be answered on besides the mounts' (the RFC 9728 metadata paths). */
  corsPaths?: (path: string) => string | undefined;
}

/**
 * A header bag over Fetch `Headers`. Fetch combines the field lines of one name into one value
 * joined with `", "` (WHATWG Fetch §5.2, "combine"), so `count` is 0 or 1: a repeated `Mcp-Name`
 * arrives combined, and is refused because it differs from the parameter it mirrors.
 */
export function fetchHeaderBag(h: Headers): HeaderBag {
  return {
    get: (name) => h.get(name) ?? undefined,
    count: (name) => (h.has(name) ? 1 : 0),
  };
}

/** Options of {@link openWebSse}. */
export interface WebSseOptions {
  /** Interval between `: keepalive` comments, ms (0 disables). */
  keepaliveMs: number;
  /** Bytes queued for a reader that does not read before the stream is cut. */
  maxBufferBytes: number;
  /** Called once when the stream ends other than by `close()`: the reader cancelled, or was cut at the bound. */
  onAbandon?: (why: SwitchyardError) => void;
  /** Told when the stream is cut for a reader that left more than `maxBufferBytes` unread, before `onAbandon` (no address: the host's server has it). */
  onCut?: (cut: SseCut) => void;
}

/** An SSE answer as a web stream: the body to put in a `Response`, and the stream a dialect writes. */
export interface WebSse {
  readonly body: ReadableStream<Uint8Array>;
  readonly stream: SseStream;
}

const encoder = new TextEncoder();

/**
 * Opens an SSE stream as a `ReadableStream` of UTF-8 bytes. The queue is bounded: its size is
 * counted in bytes (`ByteLengthQueuingStrategy`), and a reader that lets more than
 * `maxBufferBytes` pile up is cut (the stream errors), never buffered without limit. Keepalive
 * comments go out every `keepaliveMs`.
 * @see WHATWG HTML §9.2.5 (event stream format); WHATWG Streams §4 (ReadableStream, queuing strategies)
 */
export function openWebSse(opts: WebSseOptions): WebSse {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const ended = new StreamEnd(() => {
    if (timer) clearInterval(timer);
  });
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      cancel() {
        if (ended.closed) return;
        ended.end();
        opts.onAbandon?.(new SwitchyardError('SWY_ERR_REQ_CANCELLED', { detail: 'the reader cancelled the stream' }));
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: opts.maxBufferBytes }),
  );
  const write = (text: string): boolean => {
    if (ended.closed || cutIfOver()) return false;
    controller.enqueue(encoder.encode(text));
    return true;
  };
  /**
   * A reader that left more than the bound unread is cut, never buffered without limit. Checked
   * before each event, so an event is never cut in half and one larger than the bound still
   * reaches a reader that keeps up; what is queued is at most the bound plus one event.
   */
  let cut = false;
  function cutIfOver(): boolean {
    const room = controller.desiredSize ?? 0;
    if (room >= 0) return false;
    cut = true;
    opts.onCut?.({ queuedBytes: opts.maxBufferBytes - room, maxBufferBytes: opts.maxBufferBytes, remoteAddress: undefined });
    const why = new SwitchyardError('SWY_ERR_REQ_CANCELLED', { detail: `the reader left more than ${opts.maxBufferBytes} bytes unread` });
    controller.error(why);
    ended.end();
    opts.onAbandon?.(why);
    return true;
  }
  const timer = opts.keepaliveMs > 0 ? setInterval(() => write(': keepalive\n\n'), opts.keepaliveMs) : undefined;
  timer?.unref();
  const stream: SseStream = {
    send(ev) {
      if (typeof ev.data === 'string') return write(`${eventHead(ev)}data: ${ev.data}\n\n`);
      // A large message: its pieces one after another, the bound checked once, before the event.
      if (!write(`${eventHead(ev)}data: `)) return false;
      for (const piece of ev.data) controller.enqueue(encoder.encode(piece));
      controller.enqueue(encoder.encode('\n\n'));
      return true;
    },
    comment(text) {
      write(`: ${text}\n\n`);
    },
    close() {
      if (ended.closed) return;
      controller.close();
      ended.end();
    },
    get closed() {
      return ended.closed;
    },
    get cut() {
      return cut;
    },
    onClose: (cb) => ended.onClose(cb),
  };
  return { body, stream };
}

/**
 * A refusal before any dialect as a `Response`: the error's status (or `status`) and headers, a
 * JSON-RPC error body whose id is `id` (default null: a refusal before the body was read, or of a
 * body without a request id; JSON-RPC 2.0 §5); published on `switchyard:refusal`. A local error
 * (status 0, which a `Response` cannot carry) is answered as SWY_ERR_INTERNAL_FAULT, 500: callers
 * log it (`answerError`).
 */
export function refusalResponse(given: SwitchyardError, mount?: HttpMount, status?: number, id: RequestId | null = null): Response {
  const err = toWireError(given);
  if (err !== given || status === undefined) status = err.status;
  if (channels.refusal.hasSubscribers) channels.refusal.publish({ code: err.code, status, mount: mount?.name });
  const text = serialize(errorResponse(id, err.toRpcError()));
  return new Response(text, { status, headers: { 'content-type': 'application/json', ...err.headers } });
}

/** A refusal with an HTTP status other than its catalogue entry's (a body that arrives too slowly: 408, as on the standalone listener). */
class Refusal extends Error {
  constructor(
    readonly err: SwitchyardError,
    readonly status: number,
  ) {
    super(err.message);
  }
}

/**
 * Reads a request body of at most `maxBytes` within `timeoutMs`.
 * @throws SwitchyardError SWY_ERR_HTTP_BODY_TOO_LARGE (declared or read past the bound), SWY_ERR_HTTP_FRAMING (the body was cut);
 *   Refusal 408 with SWY_ERR_HTTP_FRAMING (too slow)
 */
async function readBody(request: Request, maxBytes: number, timeoutMs: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE');
  if (!request.body) return new Uint8Array(0);
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new SwitchyardError('SWY_ERR_HTTP_BODY_TOO_LARGE');
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof SwitchyardError) throw err;
    throw new SwitchyardError('SWY_ERR_HTTP_FRAMING', { detail: 'the body ended early', cause: err });
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw new Refusal(new SwitchyardError('SWY_ERR_HTTP_FRAMING', { detail: 'Request Timeout' }), 408);
  return Buffer.concat(chunks);
}

/** What a fetch exchange and its wrappers share (a wrapper made with `Object.create` reads it through its prototype). */
interface WebState {
  answered: boolean;
  stream: SseStream | undefined;
  /** Resolves the exchange's Response, once. */
  readonly answer: (r: Response) => void;
  /** The client left: abort the request's work and close its stream (an event listener). */
  readonly gone: () => void;
  readonly ac: AbortController;
  readonly request: Request;
  /** The stream bounds of the exchange's mount (`keepaliveMs`, `maxStreamBufferBytes`). */
  readonly limits: Pick<Limits, 'keepaliveMs' | 'maxStreamBufferBytes'>;
  /** Where a stream cut for a reader that fell behind is said (`slow client cut`, as on the standalone listener). */
  readonly log: Logger;
  /** What the request was admitted with (`FetchHandlerOptions.credential`), computed when a stream asks. */
  readonly credentialOf: ((request: Request) => StreamCredential | undefined) | undefined;
}

/**
 * One `Request` as its dialect sees it (HttpExchange). A class, not an object literal with an
 * `answered` getter, which V8 (Node 20) builds in dictionary mode, making every read of the
 * exchange a hash lookup (docs/performance.md, "Objects in dictionary mode").
 */
class WebExchange implements HttpExchange {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly signal: AbortSignal;

  constructor(
    private readonly st: WebState,
    private readonly url: URL,
    readonly headers: HeaderBag,
    readonly body: unknown,
    readonly identity: Identity | null,
  ) {
    this.method = st.request.method;
    this.path = url.pathname;
    this.query = url.searchParams;
    this.signal = st.ac.signal;
  }

  get answered(): boolean {
    return this.st.answered;
  }

  /** The principal only: a fetch `Request` carries no remote address, so an anonymous caller is counted against no one. */
  get client(): string | undefined {
    return clientKey(this.identity, undefined);
  }

  publicUrl(path: string, relative = false): string {
    return relative ? relativeRef(this.url.pathname, path) : new URL(path, this.url).href;
  }

  /** Computed when read (a stream's registration): the `Authorization` value and the base URL the front door named the resource with. */
  get credential(): StreamCredential | undefined {
    return this.st.credentialOf?.(this.st.request);
  }

  json(status: number, body: JsonBody, h?: Readonly<Record<string, string>>): void {
    const st = this.st;
    if (st.answered) return;
    if (typeof body === 'string') {
      st.answer(new Response(body, { status, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...h } }));
      return;
    }
    // A large message: a stream of its pieces, pulled as the host's server reads them.
    const it = body[Symbol.iterator]();
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = it.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
    });
    st.answer(new Response(stream, { status, headers: { 'content-type': 'application/json', ...h } }));
  }

  empty(status: number, h?: Readonly<Record<string, string>>): void {
    if (this.st.answered) return;
    this.st.answer(new Response(null, { status, headers: h }));
  }

  sse(h?: Readonly<Record<string, string>>): SseStream {
    const st = this.st;
    const web = openWebSse({
      keepaliveMs: st.limits.keepaliveMs,
      maxBufferBytes: st.limits.maxStreamBufferBytes,
      onAbandon: (why) => st.ac.abort(why),
      // A reader that fell behind the bound: said once, at warn, as on the standalone listener (docs/operations.md, "Session lines").
      onCut: (c) => st.log.warn({ queuedBytes: c.queuedBytes, maxBufferBytes: c.maxBufferBytes }, Lines.slowClientCut),
    });
    st.stream = web.stream;
    web.stream.onClose(() => st.request.signal.removeEventListener('abort', st.gone));
    st.answer(new Response(web.body, { status: 200, headers: { ...SSE_HEADERS, ...h } }));
    return web.stream;
  }

  /** `this`, as in the fastify exchange: a wrapper's json/sse/empty carry the sink's answer too. */
  reply(o?: Parameters<HttpExchange['reply']>[0]): Sink {
    return createReplySink(this, o);
  }
}

/** An exchange over one `Request`, and the `Response` it resolves to once a dialect answers. */
interface FetchExchange {
  ex: HttpExchange;
  response: Promise<Response>;
  /** Resolves the response if nothing answered it (the dialect returned, or the client left). */
  settle(): void;
}

function createFetchExchange(
  request: Request,
  url: URL,
  headers: HeaderBag,
  body: unknown,
  identity: Identity | null,
  limits: Pick<Limits, 'keepaliveMs' | 'maxStreamBufferBytes'>,
  log: Logger,
  credentialOf?: (request: Request) => StreamCredential | undefined,
): FetchExchange {
  const ac = new AbortController();
  let resolve!: (r: Response) => void;
  const response = new Promise<Response>((r) => (resolve = r));
  const st: WebState = {
    answered: false,
    stream: undefined,
    answer: (r) => {
      st.answered = true;
      resolve(r);
    },
    gone: () => {
      ac.abort();
      st.stream?.close();
    },
    ac,
    request,
    limits,
    log,
    credentialOf,
  };
  if (request.signal.aborted) ac.abort();
  else request.signal.addEventListener('abort', st.gone, { once: true });
  const ex = new WebExchange(st, url, headers, body, identity);
  return {
    ex,
    response,
    settle() {
      if (!st.stream) request.signal.removeEventListener('abort', st.gone);
      if (st.answered) return;
      // Nothing to send: the client left (a cancelled request), or a dialect did not answer.
      const err = ac.signal.aborted ? new SwitchyardError('SWY_ERR_REQ_CANCELLED') : new SwitchyardError('SWY_ERR_INTERNAL_FAULT');
      ex.json(err.status, serialize(errorResponse(null, err.toRpcError())));
    },
  };
}

/**
 * Creates the web-standard handler of a set of mounts. Each request passes the same checks as
 * on the fastify routes, in this order: Origin and Host (403, or 400 for an invalid Host, with
 * a JSON-RPC error whose id is null), the path (404), HTTP method and Accept (405 with `Allow`,
 * 406), identity, body size and time (413, 408), Content-Type and JSON parsing (415, 400);
 * then `ready`, then the mount's dialect. The returned promise resolves as soon as the answer
 * starts: a JSON body, an empty answer, or an SSE stream whose body is a bounded
 * `ReadableStream`. When `request.signal` aborts (the client went away), the request's work is
 * cancelled and its stream closed.
 * @see 2025-11-25 basic/transports#security-warning; 2026-07-28 basic/transports/streamable-http;
 *   WHATWG Fetch §5.4 (Request), §5.5 (Response)
 */
export function createFetchHandler(opts: FetchHandlerOptions): FetchHandler {
  const { limits, log } = opts;
  const checkOrigin = createOriginCheck(opts.origin);
  const routes = new Map<string, { route: RouteKind; mount: HttpMount }>();
  for (const m of opts.mounts) {
    routes.set(m.path, { route: 'mcp', mount: m });
    if (!m.router.httpSse) continue;
    routes.set(m.ssePath, { route: 'sse', mount: m });
    routes.set(m.messagesPath, { route: 'messages', mount: m });
  }

  const run = async (dialect: Dialect, fx: FetchExchange) => {
    try {
      await dialect.handle(fx.ex);
    } catch (err) {
      log.error({ err, dialect: dialect.id }, Lines.internalFault);
    } finally {
      fx.settle();
    }
  };

  const cors = opts.cors;
  const handler: FetchHandler = async (request, o = {}) => {
    // RFC 9112 §6.1: the host's HTTP server undid `chunked` at most; a body still carrying
    // another transfer coding is 501, before it is read (whether the connection then closes is
    // the host's to decide).
    const coding = unsupportedTransferCoding(request.headers.get('transfer-encoding') ?? undefined);
    if (coding !== undefined) {
      log.info({ reason: 'transfer coding', coding: coding.slice(0, 64) }, Lines.clientFault);
      return refusalResponse(new SwitchyardError('SWY_ERR_HTTP_TRANSFER_CODING', { headers: { connection: 'close' } }));
    }
    const url = new URL(request.url);
    const origin = request.headers.get('origin') ?? undefined;
    const host = request.headers.get('host') ?? url.host;
    // Origin and Host first, on every path (2025-11-25 basic/transports#security-warning).
    const verdict = checkOrigin(origin, host);
    if (verdict) {
      log.info({ reason: verdict.reason, origin, host }, Lines.clientFault);
      return refusalResponse(new SwitchyardError(verdict.code));
    }
    const target = routes.get(url.pathname);
    if (!target) {
      const doc = opts.metadata && (request.method === 'GET' || request.method === 'HEAD') ? opts.metadata(request, url.pathname) : undefined;
      if (doc === undefined) return refusalResponse(new SwitchyardError('SWY_ERR_HTTP_NOT_FOUND'));
      // RFC 9728 §3.2: `application/json`, without a charset (as the standalone listener sends it).
      return new Response(request.method === 'HEAD' ? null : JSON.stringify(doc), { status: 200, headers: { 'content-type': 'application/json' } });
    }
    const { route, mount } = target;
    const headers = fetchHeaderBag(request.headers);
    let identity: Identity | null;
    let body: unknown;
    try {
      checkHead(route, request.method, headers, mount.mcpAllow);
      identity = opts.identify ? await opts.identify(request, mount, headers) : (opts.checkIdentity ?? checkHostIdentity)(o.identity);
      if (request.method === 'POST') {
        const max = mount.maxBodyBytes ?? limits.maxBodyBytes;
        body = await decodePost(headers, await readBody(request, max, limits.bodyTimeoutMs), postLimits(mount.limits ?? limits, max));
      }
      await opts.ready?.();
    } catch (err) {
      if (err instanceof Refusal) return refusalResponse(err.err, mount, err.status);
      // Refused once the body was read (`ready`: the gateway closing, a failed start): with the
      // request's id, as the standalone listener's dialects answer (JSON-RPC 2.0 §5: null only
      // when the id cannot be determined).
      return refusalResponse(answerError(err, log), mount, undefined, body === undefined ? null : idOf(body, limits));
    }
    const dialect = route === 'mcp' ? mount.router.forMcpPath({ method: request.method, headers, body }) : mount.router.httpSse!;
    if (typeof dialect === 'string')
      return refusalResponse(
        dialect === 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED' ? mcpMethodRefusal(request.method, headers, mount.mcpAllow) : new SwitchyardError(dialect),
        mount,
      );
    const fx = createFetchExchange(request, url, headers, body, identity, mount.limits ?? limits, log, opts.identify ? opts.credential : undefined);
    void run(dialect, fx);
    return fx.response;
  };
  if (cors === undefined) return handler;

  /** A preflight's answer (WHATWG Fetch §4.8): from a listed origin that passes the Origin and Host check, on a served path; else undefined. */
  /** The `Allow` of a path this handler serves (a mount's route, a metadata path), or undefined. */
  const allowAt = (path: string): string | undefined => {
    const target = routes.get(path);
    return target ? allowOfRoute(target.mount, target.route) : opts.metadata ? opts.corsPaths?.(path) : undefined;
  };
  /** True when `handler` refuses `request` before any route: a transfer coding it does not undo, or the Origin and Host check. */
  const refusedBeforeRoutes = (request: Request, url: URL, origin: string | undefined): boolean =>
    unsupportedTransferCoding(request.headers.get('transfer-encoding') ?? undefined) !== undefined ||
    checkOrigin(origin, request.headers.get('host') ?? url.host) !== null;
  const preflight = (request: Request, origin: string, allow: string): Response | undefined => {
    const fields = cors.preflight(origin, request.headers.get('access-control-request-headers') ?? undefined, allow);
    // With the actual answer's fields too, as the fastify routes send it (set before the preflight's).
    return fields === undefined ? undefined : new Response(null, { status: 204, headers: { ...cors.actual(origin), ...fields } });
  };
  return async (request, o) => {
    const origin = request.headers.get('origin') ?? undefined;
    let fields = cors.actual(origin);
    if (fields !== undefined) {
      // A path this handler does not serve gets no CORS fields (its 404 is not the page's to read),
      // as on the fastify routes.
      const url = new URL(request.url);
      const allow = allowAt(url.pathname);
      // Nor does a refusal before the Origin and Host check passed (a foreign Host's 403, a
      // transfer coding's 501): a browser on a listed origin sends neither.
      if (allow === undefined || refusedBeforeRoutes(request, url, origin)) fields = undefined;
      else if (isPreflight(request.method, request.headers.get('access-control-request-method') ?? undefined)) {
        const answer = preflight(request, origin!, allow);
        if (answer) return answer;
      }
    }
    const response = await handler(request, o);
    // Every Response here is made by this handler, so its headers can be changed (guard "response").
    response.headers.append('vary', CORS_VARY);
    if (fields !== undefined) for (const name in fields) response.headers.set(name, fields[name]);
    return response;
  };
}

/** The `Allow` of one route of a mount: its MCP path's methods; GET for the HTTP+SSE stream, POST for its messages. */
function allowOfRoute(mount: HttpMount, route: RouteKind): string {
  return route === 'mcp' ? mount.mcpAllow : route === 'sse' ? 'GET' : 'POST';
}
