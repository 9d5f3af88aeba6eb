// The HTTP listener: fastify for routing and body limits, raw responses for JSON and SSE.

import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SwitchyardError, type ErrorCode } from '../core/errors.js';
import type { Dialect, HttpExchange, SseStream } from '../core/dialect.js';
import type { Limits } from '../core/limits.js';
import { decodeUtf8, errorResponse, parseBody, serialize } from '../core/message.js';
import type { Logger } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { createOriginCheck, type OriginPolicy } from './origin.js';
import { openSse } from './sse.js';

/** How the registry assigns an exchange on the MCP path to a dialect. */
export interface DialectRouter {
  /** The dialect for a request on the MCP path, or an error code to refuse it with. */
  forMcpPath(ex: HttpExchange): Dialect | ErrorCode;
  /** The HTTP+SSE dialect, when enabled. */
  readonly legacy: Dialect | undefined;
}

/** One mount: an MCP path (and its HTTP+SSE paths) served by one dialect registry. */
export interface HttpMount {
  /** The MCP endpoint path, e.g. `/mcp` or `/github/mcp`. */
  path: string;
  /** HTTP+SSE stream path (e.g. `/sse`), used when the registry has the legacy dialect. */
  legacySsePath: string;
  /** HTTP+SSE message path named by the `endpoint` event (e.g. `/messages`). */
  legacyMessagePath: string;
  router: DialectRouter;
  /** Largest body on this mount's routes, bytes (the listener's `maxBodyBytes` when absent). */
  maxBodyBytes?: number;
}

/** Listener settings. */
export interface HttpTransportOptions {
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Mounts, each on its own paths. */
  mounts: readonly HttpMount[];
  /** Listener-wide bounds (connections, timeouts, default body size). */
  limits: Limits;
  origin: OriginPolicy;
  log: Logger;
}

/** A started listener. */
export interface HttpTransport {
  readonly app: FastifyInstance;
  /** The bound address (port resolved when 0 was asked). */
  address(): { host: string; port: number };
  /** Stops accepting connections; open streams are closed by the dialects. */
  close(): Promise<void>;
}

function mediaTypes(accept: string | undefined): string[] {
  if (accept === undefined) return ['*/*'];
  return accept.split(',').map((p) => p.split(';')[0].trim().toLowerCase());
}

/**
 * True when an `Accept` header admits `type` (absent Accept admits everything, RFC 9110 §12.5.1).
 */
export function accepts(accept: string | undefined, type: string): boolean {
  const list = mediaTypes(accept);
  const major = type.split('/')[0];
  return list.some((t) => t === type || t === '*/*' || t === `${major}/*`);
}

/** `application/json`, with no charset or charset=utf-8 (RFC 8259 §8.1: JSON is UTF-8). */
function isJsonContentType(ct: string | undefined): boolean {
  if (!ct) return false;
  const [base, ...params] = ct.split(';').map((p) => p.trim().toLowerCase());
  if (base !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** Writes a JSON-RPC error response with id null on a raw reply. */
function refuse(reply: FastifyReply, code: ErrorCode | SwitchyardError, detail?: string, headers?: Record<string, string>): void {
  const err = typeof code === 'string' ? new SwitchyardError(code, detail ? { detail } : {}) : code;
  reply.hijack();
  const res = reply.raw;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(err.status, { 'content-type': 'application/json', ...headers });
  res.end(serialize(errorResponse(null, err.toRpcError())));
}

/**
 * Starts the listener on `host:port`. Every route first checks Origin and Host (403 with a
 * JSON-RPC error whose id is null), then the MCP path checks the HTTP method, Content-Type
 * (415), Accept (406) and body size (413) before a dialect sees the request.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED when the address cannot be bound
 */
export async function startHttpTransport(opts: HttpTransportOptions): Promise<HttpTransport> {
  const { limits, log } = opts;
  const app = Fastify({
    bodyLimit: limits.maxBodyBytes,
    requestTimeout: limits.headTimeoutMs + limits.bodyTimeoutMs,
    keepAliveTimeout: 5_000,
    // Node checks header/request timeouts on this interval (default 30 s); keep it below the bounds.
    http: { connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(Math.min(limits.headTimeoutMs, limits.bodyTimeoutMs) / 2))) },
    logger: false,
    return503OnClosing: true,
    forceCloseConnections: true,
    // Errors Node's parser raises before fastify sees a request (timeouts, bad framing, huge
    // headers) still get a JSON-RPC body with id null.
    clientErrorHandler: (err: NodeJS.ErrnoException & { code?: string }, socket) => {
      if (!socket.writable || socket.destroyed) return void socket.destroy();
      const [status, text] =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout']
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? [431, 'Request Header Fields Too Large']
            : [400, 'Bad Request'];
      const body = serialize(errorResponse(null, new SwitchyardError('SWY_ERR_HTTP_FRAMING', { detail: text }).toRpcError()));
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });
  app.server.maxConnections = limits.maxConnections;
  app.server.headersTimeout = limits.headTimeoutMs;
  const checkOrigin = createOriginCheck(opts.origin);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Origin and Host first, on every route (2025-11-25 basic/transports#security-warning).
  app.addHook('onRequest', (req, reply, done) => {
    const verdict = checkOrigin(req.headers.origin, req.headers.host);
    if (verdict) {
      log.info({ reason: verdict.reason, origin: req.headers.origin, host: req.headers.host }, Lines.clientFault);
      refuse(reply, verdict.which === 'origin' ? 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN' : 'SWY_ERR_HTTP_HOST_FORBIDDEN');
      return;
    }
    done();
  });

  app.setErrorHandler((err: { code?: string; statusCode?: number }, _req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return refuse(reply, 'SWY_ERR_HTTP_BODY_TOO_LARGE');
    if (err.statusCode === 400) return refuse(reply, 'SWY_ERR_REQ_PARSE');
    log.error({ err }, Lines.internalFault);
    return refuse(reply, 'SWY_ERR_INTERNAL_FAULT');
  });
  app.setNotFoundHandler((_req, reply) => refuse(reply, 'SWY_ERR_HTTP_NOT_FOUND'));

  const toExchange = (req: FastifyRequest, reply: FastifyReply, body: unknown): HttpExchange => {
    reply.hijack();
    const res = reply.raw;
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    const q = req.url.indexOf('?');
    let answered = false;
    return {
      method: req.method,
      path: q < 0 ? req.url : req.url.slice(0, q),
      query: new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)),
      headers: req.headers as IncomingHttpHeaders,
      body,
      signal: ac.signal,
      get answered() {
        return answered;
      },
      json(status, text, headers) {
        if (answered || res.destroyed) return;
        answered = true;
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
        res.end(text);
      },
      empty(status, headers) {
        if (answered || res.destroyed) return;
        answered = true;
        res.writeHead(status, headers);
        res.end();
      },
      sse(headers): SseStream {
        answered = true;
        const stream = openSse(res, { keepaliveMs: limits.keepaliveMs, maxBufferBytes: limits.maxStreamBufferBytes, headers });
        return stream;
      },
    };
  };

  const run = async (dialect: Dialect, ex: HttpExchange) => {
    try {
      await dialect.handle(ex);
    } catch (err) {
      log.error({ err, dialect: dialect.id }, Lines.internalFault);
      if (!ex.answered) ex.json(500, serialize(errorResponse(null, new SwitchyardError('SWY_ERR_INTERNAL_FAULT').toRpcError())));
    }
  };

  /** Parses a POST body; on failure answers the JSON-RPC error and returns undefined. */
  const parsePost = (req: FastifyRequest, reply: FastifyReply): { ok: true; value: unknown } | { ok: false } => {
    if (!isJsonContentType(req.headers['content-type'])) {
      refuse(reply, 'SWY_ERR_HTTP_CONTENT_TYPE');
      return { ok: false };
    }
    try {
      const text = Buffer.isBuffer(req.body) ? decodeUtf8(req.body) : '';
      return { ok: true, value: parseBody(text, limits).value };
    } catch (err) {
      refuse(reply, err instanceof SwitchyardError ? err : 'SWY_ERR_REQ_PARSE');
      return { ok: false };
    }
  };

  const allowed = 'GET, POST, DELETE';
  const mount = (m: HttpMount) => {
    app.route({
      method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'],
      url: m.path,
      bodyLimit: m.maxBodyBytes,
      handler: async (req, reply) => {
        const method = req.method;
        if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') {
          return refuse(reply, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED', undefined, { allow: allowed });
        }
        let body: unknown;
        if (method === 'POST') {
          const accept = req.headers.accept;
          if (!accepts(accept, 'application/json') || !accepts(accept, 'text/event-stream')) {
            if (!isJsonContentType(req.headers['content-type'])) return refuse(reply, 'SWY_ERR_HTTP_CONTENT_TYPE');
            return refuse(reply, 'SWY_ERR_HTTP_NOT_ACCEPTABLE');
          }
          const parsed = parsePost(req, reply);
          if (!parsed.ok) return;
          body = parsed.value;
        } else if (method === 'GET' && !accepts(req.headers.accept, 'text/event-stream')) {
          return refuse(reply, 'SWY_ERR_HTTP_NOT_ACCEPTABLE');
        }
        const ex = toExchange(req, reply, body);
        const target = m.router.forMcpPath(ex);
        if (typeof target === 'string') {
          const err = new SwitchyardError(target);
          ex.json(err.status, serialize(errorResponse(null, err.toRpcError())), target === 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED' ? { allow: allowed } : undefined);
          return;
        }
        await run(target, ex);
      },
    });

    const legacy = m.router.legacy;
    if (legacy) {
      app.route({
        method: ['POST', 'PUT', 'DELETE', 'PATCH'],
        url: m.legacySsePath,
        handler: async (_req, reply) => refuse(reply, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED', undefined, { allow: 'GET' }),
      });
      app.get(m.legacySsePath, async (req, reply) => {
        if (!accepts(req.headers.accept, 'text/event-stream')) return refuse(reply, 'SWY_ERR_HTTP_NOT_ACCEPTABLE');
        await run(legacy, toExchange(req, reply, undefined));
      });
      app.post(m.legacyMessagePath, { bodyLimit: m.maxBodyBytes }, async (req, reply) => {
        const parsed = parsePost(req, reply);
        if (!parsed.ok) return;
        await run(legacy, toExchange(req, reply, parsed.value));
      });
    }
  };
  for (const m of opts.mounts) mount(m);

  try {
    await app.listen({ host: opts.host, port: opts.port });
  } catch (cause) {
    throw new SwitchyardError('SWY_ERR_LISTEN_FAILED', { cause, detail: `${opts.host}:${opts.port}` });
  }
  const addr = app.server.address() as AddressInfo;
  log.info({ host: addr.address, port: addr.port, paths: opts.mounts.map((m) => m.path) }, Lines.listening);
  return {
    app,
    address: () => ({ host: addr.address, port: addr.port }),
    close: () => app.close(),
  };
}
