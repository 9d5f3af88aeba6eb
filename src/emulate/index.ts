// `switchyard emulate`: a server that behaves like exactly one MCP era, with knobs that reproduce
// what clients meet in the wild, and a record of every request the client makes. It is its own
// node:http listener in front of the gateway's pieces (an upstream, the core, one dialect).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createRegistry, type DialectId, type DialectRegistry } from '../../dialects/index.js';
import type { Dialect, HttpExchange, SseEvent, SseStream } from '../core/dialect.js';
import { SwitchyardError, type ErrorCode } from '../core/errors.js';
import { Executor } from '../core/executor.js';
import { DEFAULT_LIMITS, type Limits } from '../core/limits.js';
import { decodeUtf8, errorResponse, parseBody, serialize, type JsonObject } from '../core/message.js';
import { Router } from '../core/router.js';
import type { Upstream } from '../core/upstream.js';
import { MODERN_REVISION } from '../core/versions.js';
import { createUpstream, heldCalls } from '../gateway.js';
import { createLogger, type Logger } from '../log/logger.js';
import { accepts } from '../transports/http.js';
import { createOriginCheck } from '../transports/origin.js';
import { openSse } from '../transports/sse.js';
import type { HttpEra } from '../upstreams/http.js';
import { formatReport, verdictOf, type RequestRecord, type Verdict } from './report.js';

export type { RequestRecord, Verdict } from './report.js';

/** The eras `emulate` can be. */
export const EMULATED_ERAS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type EmulatedEra = (typeof EMULATED_ERAS)[number];

/** Statuses `--probe-status` can answer the first POST with. */
export const PROBE_STATUSES = [400, 401, 403, 404, 405, 406, 415, 500, 503] as const;
export type ProbeStatus = (typeof PROBE_STATUSES)[number];

/** Body shapes for the `--probe-status` answer. */
export const PROBE_BODIES = ['json', 'empty', 'html'] as const;
export type ProbeBody = (typeof PROBE_BODIES)[number];

/** How the `endpoint` event names the POST URI. */
export const ENDPOINT_MODES = ['relative', 'absolute', 'cross-origin', 'path-prefix'] as const;
export type EndpointMode = (typeof ENDPOINT_MODES)[number];

/** Statuses an accepted POST without a reply can get. */
export const POST_STATUSES = [202, 200, 204] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/** The prefix `--endpoint path-prefix` puts before the message path. */
export const PATH_PREFIX = '/prefix';

/** What an emulator is started with. */
export interface EmulateOptions {
  era: EmulatedEra;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** TCP port (default 7700; 0 picks a free one). */
  port?: number;
  /** MCP path (default /mcp). */
  path?: string;
  /** Front a stdio MCP server instead of the embedded demo. */
  stdio?: string;
  /** Front an HTTP MCP server instead of the embedded demo. */
  upstreamUrl?: string;
  upstreamEra?: HttpEra;
  /** Status for the first POST on the MCP path (the 2026 probe or initialize). */
  probeStatus?: ProbeStatus;
  /** Body of that answer (default json). */
  probeBody?: ProbeBody;
  /** How the `endpoint` event names the POST URI (default relative); false sends none. */
  endpoint?: EndpointMode | false;
  /** Delay before the `endpoint` event, ms. */
  endpointDelayMs?: number;
  /** Cut every SSE stream after this many `message` events. */
  dropStreamAfter?: number;
  /** Status for accepted POSTs that carry no reply (default 202). */
  postStatus?: PostStatus;
  /** A session's POSTs after this many (initialize included) get 404. */
  sessionExpireAfter?: number;
  /** Delay before each request is handled, ms. */
  slowMs?: number;
  /** Write the request lines to this file instead of stderr. */
  logFile?: string;
  /** Called with each request record once its answer has started (tests). */
  onRecord?: (r: RequestRecord) => void;
  /** Logger of the gateway pieces (default: pino on stderr at `logLevel`). */
  log?: Logger;
  /** Level of the gateway pieces' logger (default warn). */
  logLevel?: string;
  limits?: Partial<Limits>;
}

/** A running emulator. */
export interface Emulator {
  /** `http://host:port/mcp`. */
  readonly url: string;
  /** For `--endpoint cross-origin`: the other origin's base URL. */
  readonly crossOriginUrl: string | undefined;
  readonly era: EmulatedEra;
  /** Every request so far, in order (live objects). */
  readonly records: readonly RequestRecord[];
  /** The verdict so far. */
  verdict(): Verdict;
  /** The report: the client's path, then the verdict. */
  report(): string;
  close(): Promise<void>;
}

/** Which dialect serves an era. */
export function dialectFor(era: EmulatedEra): DialectId {
  if (era === '2024-11-05') return '2024-11-05';
  if (era === '2026-07-28') return '2026-07-28';
  return '2025-03-26';
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Headers recorded for each request. */
const RECORDED_HEADERS = [
  'accept',
  'content-type',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  'origin',
  'user-agent',
] as const;

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function idString(id: unknown): string | undefined {
  return typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint' ? String(id) : undefined;
}

/** The replies (responses) in a serialized JSON-RPC message or batch. */
function repliesIn(text: string): RequestRecord['replies'] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  const out: RequestRecord['replies'] = [];
  for (const m of Array.isArray(v) ? v : [v]) {
    if (!m || typeof m !== 'object' || 'method' in m) continue;
    const o = m as JsonObject;
    const id = idString(o.id);
    if (id === undefined) continue;
    const result = o.result as JsonObject | undefined;
    const pv = typeof result?.protocolVersion === 'string' ? result.protocolVersion : undefined;
    out.push({ id, ok: 'result' in o, ...(pv ? { protocolVersion: pv } : {}) });
  }
  return out;
}

function describeRpc(body: unknown): RequestRecord['rpc'] {
  if (Array.isArray(body)) return { kind: 'batch' };
  if (!body || typeof body !== 'object') return { kind: 'invalid' };
  const o = body as JsonObject;
  const params = o.params as JsonObject | undefined;
  const meta = params?._meta as JsonObject | undefined;
  const modern = !!meta && typeof meta === 'object' && 'io.modelcontextprotocol/protocolVersion' in meta;
  const id = idString(o.id);
  if (typeof o.method === 'string') {
    const pv = o.method === 'initialize' && typeof params?.protocolVersion === 'string' ? params.protocolVersion : undefined;
    return {
      kind: id !== undefined ? 'request' : 'notification',
      method: o.method,
      ...(id !== undefined ? { id } : {}),
      ...(modern ? { modern } : {}),
      ...(pv ? { protocolVersion: pv } : {}),
    };
  }
  if ('result' in o || 'error' in o) return { kind: 'response', ...(id !== undefined ? { id } : {}) };
  return { kind: 'invalid' };
}

/**
 * Starts an emulator: an upstream (the demo, a stdio child or an HTTP server), the core, and
 * the one dialect of `era`, behind a listener that applies the knobs and records every request.
 * For the 2025 revisions, `initialize` is restricted to exactly that revision here (the shared
 * 2025 dialect negotiates all three): the offered version is rewritten to the era before the
 * dialect sees it, so the answer is the era (the spec's counter-offer), and an
 * `MCP-Protocol-Version` header naming another revision gets 400. For 2024-11-05 the same
 * rewrite makes `initialize` answer 2024-11-05 only.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE
 */
export async function startEmulator(o: EmulateOptions): Promise<Emulator> {
  const era = o.era;
  const limits: Limits = { ...DEFAULT_LIMITS, ...o.limits };
  const log = o.log ?? createLogger(o.logLevel ?? 'warn');
  const mcpPath = o.path ?? '/mcp';
  const ssePath = '/sse';
  const endpointMode = o.endpoint === undefined ? 'relative' : o.endpoint;
  const messagePath = endpointMode === 'path-prefix' ? `${PATH_PREFIX}/messages` : '/messages';
  const requestLog = pino(
    { level: 'info', base: { name: 'switchyard-emulate', era }, timestamp: false },
    pino.destination(o.logFile !== undefined ? { dest: o.logFile, sync: true, mkdir: true } : { fd: 2, sync: true }),
  );

  const held = heldCalls(undefined, limits);
  const upstream: Upstream = await createUpstream({ stdio: o.stdio, upstreamUrl: o.upstreamUrl, upstreamEra: o.upstreamEra, limits }, log, held);
  await upstream.start();
  const router = new Router(upstream, [MODERN_REVISION]);
  upstream.subscribe({ toolsListChanged: true }, () => router.invalidateTools());
  const executor = new Executor(router, limits);
  const dialectId = dialectFor(era);
  const registry: DialectRegistry = createRegistry(
    { executor, limits, log, mcpPath, legacyMessagePath: messagePath, modernRevisions: [MODERN_REVISION] },
    { enabled: [dialectId], modern: { cache: { ttlMs: 0, cacheScope: 'private' } } },
  );
  const checkOrigin = createOriginCheck({ allowedOrigins: ['localhost', '127.0.0.1', '[::1]'], allowedHosts: [] });

  const records: RequestRecord[] = [];
  let probeUsed = false;
  /** POSTs served per session, for `--session-expire-after`. */
  const sessionPosts = new Map<string, number>();
  const expired = new Set<string>();
  let crossOriginBase: string | undefined;

  const emit = (r: RequestRecord) => {
    requestLog.info(r, 'client request');
    o.onRecord?.(r);
  };

  /** Wraps an SSE stream with the stream knobs and the recording. */
  const wrapStream = (inner: SseStream, res: ServerResponse, rec: RequestRecord, req: IncomingMessage): SseStream => {
    let cut = false;
    const deliver = (ev: SseEvent): boolean => {
      if (cut) return false;
      const isMessage = ev.event === undefined || ev.event === 'message';
      if (isMessage && ev.data !== '') {
        rec.events++;
        rec.replies.push(...repliesIn(ev.data));
      }
      const sent = inner.send(ev);
      if (isMessage && ev.data !== '' && o.dropStreamAfter !== undefined && rec.events >= o.dropStreamAfter) {
        cut = true;
        rec.dropped = true;
        // An abrupt drop (no clean end of the response), after the event is flushed.
        res.write(': dropped by switchyard emulate\n\n', () => res.destroy());
      }
      return sent;
    };
    return {
      send(ev) {
        if (ev.event !== 'endpoint') return deliver(ev);
        const sid = /sessionId=([^&]+)/.exec(ev.data)?.[1];
        if (sid !== undefined) rec.session = decodeURIComponent(sid);
        if (endpointMode === false) {
          rec.endpointWithheld = true;
          return true;
        }
        const host = header(req, 'host') ?? '127.0.0.1';
        let data = ev.data;
        if (endpointMode === 'absolute') data = `http://${host}${ev.data}`;
        else if (endpointMode === 'cross-origin') data = `${crossOriginBase}${ev.data}`;
        const out = { ...ev, data };
        if (o.endpointDelayMs) {
          setTimeout(() => {
            rec.endpoint = data;
            deliver(out);
          }, o.endpointDelayMs).unref();
          return true;
        }
        rec.endpoint = data;
        return deliver(out);
      },
      comment: (t) => inner.comment(t),
      close: () => inner.close(),
      get closed() {
        return inner.closed || cut;
      },
      onClose: (cb) => inner.onClose(cb),
    };
  };

  /** An exchange on the raw response, recording the answer and applying the answer knobs. */
  const exchange = (req: IncomingMessage, res: ServerResponse, rec: RequestRecord, body: unknown, path: string, query: URLSearchParams, started: number) => {
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    let answered = false;
    const head = (status: number, sse: boolean) => {
      rec.status = status;
      rec.sse = sse;
      rec.ms = Date.now() - started;
      // One line per request, written once the answer has started (SSE: after its first events).
      setImmediate(() => emit(rec));
    };
    const noteSession = (headers?: Record<string, string>) => {
      const sid = headers?.['mcp-session-id'];
      if (sid === undefined) return;
      rec.session ??= sid;
      // The 2025 initialize carries no session yet: it counts as the session's first POST.
      if (rec.rpc?.method === 'initialize' && !sessionPosts.has(sid)) sessionPosts.set(sid, 1);
    };
    const ex: HttpExchange = {
      method: req.method ?? 'GET',
      path,
      query,
      headers: req.headers,
      body,
      signal: ac.signal,
      get answered() {
        return answered;
      },
      json(status, text, headers) {
        if (answered || res.destroyed) return;
        answered = true;
        noteSession(headers);
        rec.replies.push(...repliesIn(text));
        head(status, false);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
        res.end(text);
      },
      empty(status, headers) {
        if (answered || res.destroyed) return;
        answered = true;
        noteSession(headers);
        let s = status;
        if (status === 202 && o.postStatus !== undefined && o.postStatus !== 202) {
          s = o.postStatus;
          rec.knob = `post-status ${s}`;
        }
        head(s, false);
        res.writeHead(s, { ...headers, ...(s === 204 ? {} : { 'content-length': '0' }) });
        res.end();
      },
      sse(headers) {
        answered = true;
        noteSession(headers);
        head(200, true);
        const inner = openSse(res, { keepaliveMs: limits.keepaliveMs, maxBufferBytes: limits.maxStreamBufferBytes, headers });
        return wrapStream(inner, res, rec, req);
      },
    };
    return ex;
  };

  const plain = (
    res: ServerResponse,
    rec: RequestRecord,
    started: number,
    status: number,
    text: string,
    headers: Record<string, string> = {},
    knob?: string,
  ) => {
    rec.status = status;
    rec.ms = Date.now() - started;
    if (knob) rec.knob = knob;
    rec.replies.push(...repliesIn(text));
    setImmediate(() => emit(rec));
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } : headers);
    res.end(text);
  };
  const refuse = (
    res: ServerResponse,
    rec: RequestRecord,
    started: number,
    code: ErrorCode,
    id: string | number | null = null,
    headers?: Record<string, string>,
  ) => {
    const err = new SwitchyardError(code);
    plain(res, rec, started, err.status, serialize(errorResponse(id, err.toRpcError())), headers);
  };

  /** The `--probe-status` answer. */
  const probeAnswer = (res: ServerResponse, rec: RequestRecord, started: number, status: ProbeStatus, body: unknown) => {
    const text = STATUS_TEXT[status] ?? 'Error';
    const headers: Record<string, string> = {};
    if (status === 401) headers['www-authenticate'] = 'Bearer realm="switchyard-emulate"';
    if (status === 405) headers.allow = era === '2024-11-05' ? 'GET' : 'GET, POST, DELETE';
    if (status === 503) headers['retry-after'] = '1';
    const knob = `probe-status ${status}`;
    const shape = o.probeBody ?? 'json';
    if (shape === 'json') {
      const id = (body as JsonObject | null)?.id;
      const rpcId = typeof id === 'string' || typeof id === 'number' ? id : null;
      return plain(res, rec, started, status, serialize(errorResponse(rpcId, { code: -32000, message: text })), headers, knob);
    }
    if (shape === 'empty') return plain(res, rec, started, status, '', { ...headers, 'content-length': '0' }, knob);
    const html = `<html><head><title>${status} ${text}</title></head><body><center><h1>${status} ${text}</h1></center><hr><center>nginx</center></body></html>\n`;
    rec.status = status;
    rec.ms = Date.now() - started;
    rec.knob = `${knob}, html`;
    setImmediate(() => emit(rec));
    res.writeHead(status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(html), ...headers });
    res.end(html);
  };

  const readBody = (req: IncomingMessage): Promise<Buffer | 'too-large'> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > limits.maxBodyBytes) over = true;
        else chunks.push(c);
      });
      req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
      req.on('error', reject);
    });

  const isJsonContentType = (ct: string | undefined) => !!ct && ct.split(';')[0].trim().toLowerCase() === 'application/json';

  /** Rewrites `initialize` to offer only the era (see startEmulator). */
  const restrictInitialize = (body: unknown): unknown => {
    if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
    const m = body as JsonObject;
    if (m.method !== 'initialize') return body;
    const params = (m.params as JsonObject | undefined) ?? {};
    if (params.protocolVersion === era) return body;
    return { ...m, params: { ...params, protocolVersion: era } };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const started = Date.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const queryText = q < 0 ? '' : url.slice(q + 1);
    const query = new URLSearchParams(queryText);
    const method = req.method ?? 'GET';
    const headers: Record<string, string> = {};
    for (const h of RECORDED_HEADERS) {
      const v = header(req, h);
      if (v !== undefined) headers[h] = v;
    }
    if (req.headers.authorization !== undefined) headers.authorization = '[present]';
    const rec: RequestRecord = {
      seq: records.length + 1,
      time: new Date(started).toISOString(),
      method,
      path,
      query: queryText,
      headers,
      status: 0,
      sse: false,
      events: 0,
      replies: [],
    };
    records.push(rec);
    const session = header(req, 'mcp-session-id') ?? (path === messagePath ? (query.get('sessionId') ?? undefined) : undefined);
    if (session !== undefined) rec.session = session;

    const verdict = checkOrigin(req.headers.origin, req.headers.host);
    if (verdict) return refuse(res, rec, started, verdict.which === 'origin' ? 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN' : 'SWY_ERR_HTTP_HOST_FORBIDDEN');

    let raw: Buffer | undefined;
    if (method === 'POST') {
      const b = await readBody(req);
      if (b === 'too-large') return refuse(res, rec, started, 'SWY_ERR_HTTP_BODY_TOO_LARGE');
      raw = b;
    }
    let parsed: unknown;
    let parseError: SwitchyardError | undefined;
    if (raw !== undefined) {
      try {
        parsed = parseBody(decodeUtf8(raw), limits).value;
        rec.rpc = describeRpc(parsed);
      } catch (err) {
        parseError = err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_REQ_PARSE');
        rec.rpc = { kind: 'invalid' };
      }
    }

    if (o.slowMs) await new Promise((r) => setTimeout(r, o.slowMs));

    const isMcp = path === mcpPath;
    const legacy = registry.legacy;
    const isSse = legacy !== undefined && path === ssePath;
    const isMessages = legacy !== undefined && path === messagePath;

    // --probe-status: the first POST on the MCP path, before any other check.
    if (isMcp && method === 'POST' && !probeUsed && o.probeStatus !== undefined) {
      probeUsed = true;
      return probeAnswer(res, rec, started, o.probeStatus, parsed);
    }
    if (isMcp && method === 'POST') probeUsed = true;

    if (!isMcp && !isSse && !isMessages) return refuse(res, rec, started, 'SWY_ERR_HTTP_NOT_FOUND');

    // --session-expire-after: a session's POSTs past N get 404, and so does anything after.
    if (session !== undefined && (isMcp || isMessages)) {
      if (method === 'POST' && o.sessionExpireAfter !== undefined && !expired.has(session)) {
        const n = (sessionPosts.get(session) ?? 0) + 1;
        sessionPosts.set(session, n);
        if (n > o.sessionExpireAfter) expired.add(session);
      }
      if (expired.has(session)) {
        const err = new SwitchyardError('SWY_ERR_SESSION_NOT_FOUND');
        const id = (parsed as JsonObject | undefined)?.id;
        return plain(
          res,
          rec,
          started,
          err.status,
          serialize(errorResponse(typeof id === 'string' || typeof id === 'number' ? id : null, err.toRpcError())),
          {},
          'session-expired',
        );
      }
    }

    let dialect: Dialect | undefined;
    if (isSse) {
      if (method !== 'GET') return refuse(res, rec, started, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED', null, { allow: 'GET' });
      if (!accepts(req.headers.accept, 'text/event-stream')) return refuse(res, rec, started, 'SWY_ERR_HTTP_NOT_ACCEPTABLE');
      dialect = legacy;
    } else if (isMessages) {
      if (method !== 'POST') return refuse(res, rec, started, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED', null, { allow: 'POST' });
      if (!isJsonContentType(req.headers['content-type'])) return refuse(res, rec, started, 'SWY_ERR_HTTP_CONTENT_TYPE');
      if (parseError) return plain(res, rec, started, parseError.status, serialize(errorResponse(null, parseError.toRpcError())));
      dialect = legacy;
    } else {
      // The MCP path: the same HTTP checks as the gateway's listener (src/transports/http.ts).
      const allow = { allow: 'GET, POST, DELETE' };
      if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') return refuse(res, rec, started, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED', null, allow);
      if (method === 'POST') {
        const accept = req.headers.accept;
        if (!accepts(accept, 'application/json') || !accepts(accept, 'text/event-stream')) {
          return refuse(res, rec, started, isJsonContentType(req.headers['content-type']) ? 'SWY_ERR_HTTP_NOT_ACCEPTABLE' : 'SWY_ERR_HTTP_CONTENT_TYPE');
        }
        if (!isJsonContentType(req.headers['content-type'])) return refuse(res, rec, started, 'SWY_ERR_HTTP_CONTENT_TYPE');
        if (parseError) return plain(res, rec, started, parseError.status, serialize(errorResponse(null, parseError.toRpcError())));
      } else if (method === 'GET' && !accepts(req.headers.accept, 'text/event-stream')) return refuse(res, rec, started, 'SWY_ERR_HTTP_NOT_ACCEPTABLE');
      // 2025-06-18 and later: an MCP-Protocol-Version naming another revision is unsupported (400).
      const pv = header(req, 'mcp-protocol-version')?.trim();
      if (pv !== undefined && (era === '2025-06-18' || era === '2025-11-25') && session !== undefined && pv !== era) {
        const id = (parsed as JsonObject | undefined)?.id;
        const err = new SwitchyardError('SWY_ERR_SESSION_VERSION_HEADER', { detail: pv });
        return plain(res, rec, started, err.status, serialize(errorResponse(typeof id === 'string' || typeof id === 'number' ? id : null, err.toRpcError())));
      }
    }
    // Only the era's revision is offered to the dialect's initialize.
    const body = era === '2026-07-28' ? parsed : restrictInitialize(parsed);
    const ex = exchange(req, res, rec, body, path, query, started);
    if (isMcp) {
      const target = registry.forMcpPath(ex);
      if (typeof target === 'string')
        return refuse(res, rec, started, target, null, target === 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED' ? { allow: 'GET, POST, DELETE' } : undefined);
      dialect = target;
    }
    try {
      await dialect!.handle(ex);
    } catch (err) {
      log.error({ err, dialect: dialect?.id }, 'internal error');
      if (!ex.answered) refuse(res, rec, started, 'SWY_ERR_INTERNAL_FAULT');
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'internal error');
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(serialize(errorResponse(null, new SwitchyardError('SWY_ERR_INTERNAL_FAULT').toRpcError())));
      } else res.destroy();
    });
  };

  const host = o.host ?? '127.0.0.1';
  const listen = (server: Server, port: number) =>
    new Promise<AddressInfo>((resolve, reject) => {
      server.once('error', (cause) => reject(new SwitchyardError('SWY_ERR_LISTEN_FAILED', { cause, detail: `${host}:${port}` })));
      server.listen(port, host, () => resolve(server.address() as AddressInfo));
    });
  const servers: Server[] = [];
  const mkServer = () => {
    const s = createServer(
      { requestTimeout: limits.headTimeoutMs + limits.bodyTimeoutMs, headersTimeout: limits.headTimeoutMs, keepAliveTimeout: 5_000 },
      onRequest,
    );
    servers.push(s);
    return s;
  };
  const urlHost = (a: AddressInfo) => (a.address.includes(':') ? `[${a.address}]` : a.address);
  let addr: AddressInfo;
  try {
    addr = await listen(mkServer(), o.port ?? 7700);
    if (endpointMode === 'cross-origin') {
      // A second listener on another port: the same server, on another origin.
      const other = await listen(mkServer(), 0);
      crossOriginBase = `http://${urlHost(other)}:${other.port}`;
    }
  } catch (err) {
    for (const s of servers) s.close();
    await registry.close();
    await upstream.close().catch(() => {});
    throw err;
  }
  const url = `http://${urlHost(addr)}:${addr.port}${mcpPath}`;
  const paths = { mcpPath, ssePath, messagePaths: [messagePath] };
  let closing: Promise<void> | undefined;
  return {
    url,
    crossOriginUrl: crossOriginBase,
    era,
    records,
    verdict: () => verdictOf(records, paths),
    report: () => formatReport(records, paths, `switchyard emulate --era ${era} (${url})`),
    close() {
      closing ??= (async () => {
        await executor.close(limits.shutdownGraceMs);
        await registry.close();
        await Promise.all(
          servers.map(
            (s) =>
              new Promise<void>((resolve) => {
                s.close(() => resolve());
                s.closeAllConnections();
              }),
          ),
        );
        held.clear();
        await upstream.close();
        requestLog.flush();
      })();
      return closing;
    },
  };
}
