// `switchyard emulate`: the gateway, serving exactly one MCP era, with knobs that reproduce what
// clients meet in the wild and a record of every request the client makes. The knobs are
// wrappers on the real HTTP transport (root hooks and exchange wrappers), not a second server.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hasModernMeta, mcpMethodsOf } from '../../dialects/index.js';
import { validateConfig } from '../config/load.js';
import { configFromOptions, type DialectFlag } from '../config/options.js';
import { listenFailed, SwitchyardError } from '../core/errors.js';
import type { HttpExchange, SseEvent, SseStream } from '../core/exchange.js';
import type { Limits } from '../core/limits.js';
import { errorResponse, parseBody, serialize, type JsonObject, type ParseLimits, type RequestId } from '../core/message.js';
import { bodyText } from '../core/json-pieces.js';
import { authority, redactQuery } from '../core/url-text.js';
import { assemble } from '../gateway.js';
import { createLogger, createRecordLogger, type Logger } from '../log/logger.js';
import { createHttpServer, type ExchangeWrapper } from '../transports/http.js';
import { PostChunks, PostText } from '../transports/front-door.js';
import { createRequestGuard, type RequestGuard } from '../transports/request-guard.js';
import { clientsOf, formatReport, verdictOf, type RequestRecord, type Verdict } from './report.js';
import { PATH_PREFIX, type EmulatedEra, type EndpointMode, type PostStatus, type ProbeBody, type ProbeStatus } from './knobs.js';

export type { RequestRecord, Verdict } from './report.js';

export { EMULATED_ERAS, ENDPOINT_MODES, PATH_PREFIX, POST_STATUSES, PROBE_BODIES, PROBE_STATUSES } from './knobs.js';
export type { EmulatedEra, EndpointMode, PostStatus, ProbeBody, ProbeStatus } from './knobs.js';

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
  upstreamEra?: string;
  /** Status for the first POST on the MCP path (the 2026 probe or initialize). */
  probeStatus?: ProbeStatus;
  /** Body of that answer (default json); only with `probeStatus` (alone it is refused: SWY_ERR_CONFIG_INVALID). */
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
  /**
   * Requests kept for the report and the verdict, at most (default {@link DEFAULT_MAX_RECORDS});
   * later ones are still served, knobs and log lines included, and only counted
   * ({@link Emulator.unrecorded}).
   */
  maxRecords?: number;
  /**
   * Aborts the start (the CLI's SIGINT/SIGTERM): the upstream's first attempt ends, what started
   * is stopped (a stdio child in order), and the start rejects with SWY_ERR_ADMISSION_SHUTTING_DOWN.
   */
  signal?: AbortSignal;
}

/**
 * Requests an emulator keeps for its report by default (`EmulateOptions.maxRecords`): a client
 * test run makes far fewer; a loop that makes more is served, and counted, but not kept.
 */
export const DEFAULT_MAX_RECORDS = 10_000;

/** A running emulator. */
export interface Emulator {
  /** `http://host:port/mcp`. */
  readonly url: string;
  /** For `--endpoint cross-origin`: the other origin's base URL. */
  readonly crossOriginUrl: string | undefined;
  readonly era: EmulatedEra;
  /** Every request so far, in order (live objects), up to `maxRecords`: the first ones. */
  readonly records: readonly RequestRecord[];
  /** Requests served after `records` was full, which the report and verdict do not see. */
  readonly unrecorded: number;
  /** The verdict so far: of the latest client when several clients came (see `verdicts`). */
  verdict(): Verdict;
  /** One verdict per client, in the order the clients came. */
  verdicts(): Verdict[];
  /** The report: each client's path, then its verdict. */
  report(): string;
  close(): Promise<void>;
}

/** Which dialect serves an era. */
export function dialectFor(era: EmulatedEra): DialectFlag {
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
  'host',
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
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * A JSON-RPC id as a record keeps it, with its type: a string, or a number (an integer beyond
 * 2^53 as the exact bigint `parseBody` restores), so that `"1"` and `1` stay apart; undefined
 * for anything else (absent, null, an object, or the NaN `parseBody` puts for a fraction).
 * @see JSON-RPC 2.0 §4 (an id is a String or a Number), §5 (a response has its request's id)
 */
function rpcId(id: unknown): RequestId | undefined {
  if (typeof id === 'string' || typeof id === 'bigint') return id;
  return typeof id === 'number' && !Number.isNaN(id) ? id : undefined;
}

/** Unbounded: the text is the gateway's own reply, parsed only to record its ids exactly. */
const REPLY_PARSE: ParseLimits = { maxIntegerDigits: Infinity, maxIdBytes: Infinity, maxJsonDepth: Infinity };

/**
 * Adds the replies (responses) in a serialized JSON-RPC message or batch to `out`, one at a time:
 * `push(...replies)` passes each as an argument, past the call stack (RangeError) for a batch
 * answer of some 130,000 replies. Text that is not JSON adds nothing. Parsed as request bodies
 * are (`parseBody`), so an integer id beyond 2^53 is the same bigint as its request's.
 */
function addRepliesIn(out: RequestRecord['replies'], text: string): void {
  let v: unknown;
  try {
    v = parseBody(text, REPLY_PARSE).value;
  } catch {
    return;
  }
  for (const m of Array.isArray(v) ? v : [v]) {
    if (!m || typeof m !== 'object' || 'method' in m) continue;
    const o = m as JsonObject;
    const id = rpcId(o.id);
    if (id === undefined) continue;
    const result = o.result as JsonObject | undefined;
    const pv = typeof result?.protocolVersion === 'string' ? result.protocolVersion : undefined;
    out.push({ id, ok: 'result' in o, ...(pv ? { protocolVersion: pv } : {}) });
  }
}

function describeRpc(body: unknown): RequestRecord['rpc'] {
  if (Array.isArray(body)) return { kind: 'batch' };
  if (!body || typeof body !== 'object') return { kind: 'invalid' };
  const o = body as JsonObject;
  const params = o.params as JsonObject | undefined;
  const modern = hasModernMeta(params);
  const id = rpcId(o.id);
  if (typeof o.method === 'string') {
    const pv = o.method === 'initialize' && typeof params?.protocolVersion === 'string' ? params.protocolVersion : undefined;
    return {
      // A fraction id (NaN after parseBody) is recorded without it, still as a request.
      kind: id !== undefined || typeof o.id === 'number' ? 'request' : 'notification',
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
 * Starts an emulator: the gateway with an upstream (the demo, a stdio child or an HTTP server)
 * and the one dialect of `era`, with the knobs applied on its HTTP transport and every request
 * recorded. For the 2025 revisions, `initialize` is restricted to exactly that revision (the
 * shared 2025 dialect negotiates all three): the offered version is rewritten to the era before
 * the dialect sees it, so the answer is the era (the spec's counter-offer), and an
 * `MCP-Protocol-Version` header naming another revision gets 400. For 2024-11-05 the same
 * rewrite makes `initialize` answer 2024-11-05 only. An upstream (`stdio`, `upstreamUrl`) that
 * does not start (connection refused, a probe that finds no era, a child that exits) fails the
 * start: the gateway's `requireUpstreams`, not its mark-down-and-reconnect.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (`probeBody` without `probeStatus`; `endpoint` or
 *   `endpointDelayMs` outside 2024-11-05; `sessionExpireAfter` with 2026-07-28; `limits` that fail the schema),
 *   SWY_ERR_LOG_FILE_UNAVAILABLE (`logFile`), SWY_ERR_LISTEN_FAILED, SWY_ERR_UPSTREAM_UNAVAILABLE (the upstream did not start),
 *   SWY_ERR_ADMISSION_SHUTTING_DOWN (`signal` aborted before the emulator listened; what started is stopped)
 */
export async function startEmulator(o: EmulateOptions): Promise<Emulator> {
  const era = o.era;
  // probeBody shapes the probeStatus answer: alone it would change nothing, silently (the CLI's
  // --probe-body without --probe-status is a usage error for the same reason).
  if (o.probeBody !== undefined && o.probeStatus === undefined) {
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'probeBody needs probeStatus (it is the body of that answer)' });
  }
  // The CLI's other cross-checks, for the same reason: each option would be ignored in silence.
  if (era !== '2024-11-05' && ((o.endpoint !== undefined && o.endpoint !== 'relative') || o.endpointDelayMs !== undefined)) {
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
      detail: 'endpoint (other than the default, relative) and endpointDelayMs apply to era 2024-11-05 only',
    });
  }
  if (era === '2026-07-28' && o.sessionExpireAfter !== undefined) {
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'sessionExpireAfter needs a sessionful era (2026-07-28 has no sessions)' });
  }
  const log = o.log ?? createLogger(o.logLevel ?? 'warn');
  const mcpPath = o.path ?? '/mcp';
  const endpointMode = o.endpoint === undefined ? 'relative' : o.endpoint;
  const messagePath = endpointMode === 'path-prefix' ? `${PATH_PREFIX}/messages` : '/messages';
  const ssePath = '/sse';
  let requestLog: Logger;
  try {
    requestLog = createRecordLogger({ name: 'switchyard-emulate', era }, o.logFile);
  } catch (cause) {
    // Before anything is assembled or bound: a request log that cannot be written is a failed start.
    throw new SwitchyardError('SWY_ERR_LOG_FILE_UNAVAILABLE', { cause, detail: o.logFile });
  }
  const config = validateConfig(
    configFromOptions({
      host: o.host ?? '127.0.0.1',
      port: o.port ?? 7700,
      path: mcpPath,
      stdio: o.stdio,
      upstreamUrl: o.upstreamUrl,
      upstreamEra: o.upstreamEra,
      // A bench in front of an upstream that does not start would record a client meeting 503s
      // and report a verdict on the wrong thing: the start fails instead, naming the upstream.
      requireUpstreams: true,
      dialects: [dialectFor(era)],
      limits: o.limits,
    }),
    'emulate',
    { expandEnv: false },
  );

  const records: RequestRecord[] = [];
  const maxRecords = o.maxRecords ?? DEFAULT_MAX_RECORDS;
  if (!Number.isSafeInteger(maxRecords) || maxRecords < 1)
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `maxRecords must be a positive integer, got ${maxRecords}` });
  /** Requests seen (the next one's `seq` is this + 1), and those past `maxRecords`. */
  let seen = 0;
  let unrecorded = 0;
  const recordOf = new WeakMap<IncomingMessage, RequestRecord>();
  let probeUsed = false;
  /** The `Allow` of the `--probe-status 405` answer: the mount's methods but POST (set once the mount is built). */
  let allowWithoutPost = '';
  /**
   * POSTs served per session, and the sessions past them, for `--session-expire-after`; each holds
   * at most the mount's `maxSessions` ids (a client may send any `Mcp-Session-Id`), the oldest
   * forgotten first, as the gateway's own session table forgets them.
   */
  const sessionPosts = new Map<string, number>();
  const expired = new Set<string>();
  const maxTracked = config.limits.maxSessions;
  const countPost = (session: string, n: number) => {
    sessionPosts.delete(session);
    while (sessionPosts.size >= maxTracked) sessionPosts.delete(sessionPosts.keys().next().value!);
    sessionPosts.set(session, n);
  };
  let crossOriginBase: string | undefined;
  const emitted = new WeakSet<RequestRecord>();

  const emit = (r: RequestRecord) => {
    if (emitted.has(r)) return;
    emitted.add(r);
    requestLog.info(r, 'client request');
    o.onRecord?.(r);
  };
  // An SSE answer's line is written once it has started, so it cannot hold what came later on
  // the stream (its later events, the replies they carried, a drop): a second line with the same
  // `seq` gives the record as it ended.
  const streamEnded = new WeakSet<RequestRecord>();
  const emitEnd = (r: RequestRecord) => {
    if (streamEnded.has(r)) return;
    streamEnded.add(r);
    emit(r);
    requestLog.info(r, 'client stream ended');
  };

  /**
   * Why the gateway answered the POST `req` before its body was read (it reached no preHandler):
   * the head checks of docs/edge.md, in their order. The Origin and Host verdict is asked again of
   * the gateway's own guard (`core.routes.origin`, the listener's bound address).
   */
  const unreadReason = (req: FastifyRequest, status: number, guard: RequestGuard): string => {
    if (status === 501) return 'transfer coding refused';
    const verdict = status === 403 || status === 400 ? guard(req.raw) : undefined;
    if (verdict) return verdict.which === 'origin' ? 'Origin refused' : 'Host refused';
    if (status === 413) return 'over maxBodyBytes';
    return 'refused at its head';
  };

  /** Root hooks: record every request (refused ones too), then the knobs that act before any check. */
  const hooks = (app: FastifyInstance) => {
    // Records of requests whose body was read (they reached the preHandler).
    const bodyRead = new WeakSet<RequestRecord>();
    let guard: RequestGuard | undefined;
    app.addHook('onRequest', (req, _reply, done) => {
      const started = Date.now();
      const url = req.url;
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const queryText = q < 0 ? '' : url.slice(q + 1);
      const headers: Record<string, string> = {};
      for (const h of RECORDED_HEADERS) {
        const v = header(req.raw, h);
        if (v !== undefined) headers[h] = v;
      }
      if (req.headers.authorization !== undefined) headers.authorization = '[present]';
      const rec: RequestRecord = {
        seq: ++seen,
        time: new Date(started).toISOString(),
        method: req.method,
        path,
        query: redactQuery(queryText),
        headers,
        status: 0,
        sse: false,
        events: 0,
        replies: [],
      };
      const session = header(req.raw, 'mcp-session-id') ?? (path === messagePath ? (new URLSearchParams(queryText).get('sessionId') ?? undefined) : undefined);
      if (session !== undefined) rec.session = session;
      if (records.length < maxRecords) records.push(rec);
      else unrecorded++;
      recordOf.set(req.raw, rec);
      done();
    });
    app.addHook('preHandler', async (req, reply) => {
      const rec = recordOf.get(req.raw);
      if (!rec) return;
      bodyRead.add(rec);
      rec.rpc ??= req.method === 'POST' ? describeRpc(parseLoose(req.body)) : undefined;
      if (o.slowMs) await new Promise((r) => setTimeout(r, o.slowMs));
      // --probe-status: the first POST on the MCP path, before any other check.
      if (rec.path !== mcpPath || req.method !== 'POST') return;
      const first = !probeUsed;
      probeUsed = true;
      if (!first || o.probeStatus === undefined) return;
      const answer = probeAnswer(o.probeStatus, parseLoose(req.body));
      rec.knob = answer.knob;
      addRepliesIn(rec.replies, answer.text);
      reply.hijack();
      reply.raw.writeHead(o.probeStatus, answer.headers);
      reply.raw.end(answer.text);
    });
    app.addHook('onResponse', (req, reply, done) => {
      const rec = recordOf.get(req.raw);
      if (rec) {
        if (rec.status === 0) rec.status = reply.raw.statusCode;
        // A POST refused at its head has no JSON-RPC method to show: the record says why.
        const declared = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
        if (req.method === 'POST' && declared && !bodyRead.has(rec) && rec.rpc === undefined)
          rec.bodyUnread = unreadReason(req, rec.status, (guard ??= createRequestGuard(core.routes.origin, () => app.server.address())));
        rec.ms ??= Date.now() - Date.parse(rec.time);
        emit(rec);
      }
      done();
    });
  };

  /** The `--probe-status` answer. */
  const probeAnswer = (status: ProbeStatus, body: unknown): { text: string; headers: Record<string, string>; knob: string } => {
    const text = STATUS_TEXT[status] ?? 'Error';
    const headers: Record<string, string> = {};
    if (status === 401) headers['www-authenticate'] = 'Bearer realm="switchyard-emulate"';
    // RFC 9110 §15.5.6: the knob refuses POST here, so Allow lists the era's other methods on the
    // path (2024-11-05: GET; 2025: GET, DELETE; 2026-07-28: none, an empty Allow).
    if (status === 405) headers.allow = allowWithoutPost;
    if (status === 503) headers['retry-after'] = '1';
    const knob = `probe-status ${status}`;
    const shape = o.probeBody ?? 'json';
    if (shape === 'json') {
      const json = serialize(errorResponse(rpcId((body as JsonObject | null)?.id) ?? null, { code: -32000, message: text }));
      return { text: json, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) }, knob };
    }
    if (shape === 'empty') return { text: '', headers: { ...headers, 'content-length': '0' }, knob };
    const html = `<html><head><title>${status} ${text}</title></head><body><center><h1>${status} ${text}</h1></center><hr><center>nginx</center></body></html>\n`;
    return { text: html, headers: { ...headers, 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(html)) }, knob: `${knob}, html` };
  };

  /** Wraps an SSE stream with the stream knobs and the recording. */
  const wrapStream = (inner: SseStream, rec: RequestRecord, req: FastifyRequest): SseStream => {
    let cut = false;
    const deliver = (ev: SseEvent): boolean => {
      if (cut) return false;
      const isMessage = ev.event === undefined || ev.event === 'message';
      if (isMessage && ev.data !== '') {
        rec.events++;
        addRepliesIn(rec.replies, bodyText(ev.data));
      }
      const sent = inner.send(ev);
      if (isMessage && ev.data !== '' && o.dropStreamAfter !== undefined && rec.events >= o.dropStreamAfter) {
        cut = true;
        rec.dropped = true;
        // An abrupt drop: the connection ends after the event, without the response's final chunk.
        inner.comment('dropped by switchyard emulate');
        req.raw.socket.end();
      }
      return sent;
    };
    return {
      send(ev) {
        if (ev.event !== 'endpoint') return deliver(ev);
        const sid = /sessionId=([^&]+)/.exec(bodyText(ev.data))?.[1];
        if (sid !== undefined) rec.session = decodeURIComponent(sid);
        if (endpointMode === false) {
          rec.endpointWithheld = true;
          return true;
        }
        const host = header(req.raw, 'host') ?? '127.0.0.1';
        const pathRef = `${messagePath}?sessionId=${sid ?? ''}`;
        let data = pathRef;
        if (endpointMode === 'absolute') data = `http://${host}${pathRef}`;
        else if (endpointMode === 'cross-origin') data = `${crossOriginBase}${pathRef}`;
        const out = { ...ev, data };
        if (o.endpointDelayMs) {
          // Held back until it is written: a client that leaves before the delay runs out never
          // gets it, and its record must not say it did.
          rec.endpointWithheld = true;
          setTimeout(() => {
            if (inner.closed) return;
            delete rec.endpointWithheld;
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
      // A slow reader cut by the gateway's bound, not this wrapper's own drop (--drop-stream-after).
      get cut() {
        return inner.cut;
      },
      onClose: (cb) => inner.onClose(cb),
    };
  };

  /** Rewrites `initialize` to offer only the era (see startEmulator). */
  const restrictInitialize = (body: unknown): unknown => {
    if (era === '2026-07-28' || !body || typeof body !== 'object' || Array.isArray(body)) return body;
    const m = body as JsonObject;
    if (m.method !== 'initialize') return body;
    const params = (m.params as JsonObject | undefined) ?? {};
    if (params.protocolVersion === era) return body;
    return { ...m, params: { ...params, protocolVersion: era } };
  };

  /** The knobs on each exchange: session expiry, the era's version header, answer recording, POST status, streams. */
  const knobs: ExchangeWrapper = (ex, { route, request }) => {
    const rec = recordOf.get(request.raw);
    if (!rec) return ex;
    rec.rpc = request.method === 'POST' ? describeRpc(ex.body) : undefined;
    const started = Date.parse(rec.time);
    const session = rec.session;
    const idOfBody = () => rpcId((ex.body as JsonObject | undefined)?.id) ?? null;
    // --session-expire-after: a session's POSTs past N get 404, and so does anything after.
    if (session !== undefined && route !== 'sse') {
      if (request.method === 'POST' && o.sessionExpireAfter !== undefined && !expired.has(session)) {
        const n = (sessionPosts.get(session) ?? 0) + 1;
        countPost(session, n);
        if (n > o.sessionExpireAfter) {
          sessionPosts.delete(session);
          while (expired.size >= maxTracked) expired.delete(expired.keys().next().value!);
          expired.add(session);
        }
      }
      if (expired.has(session)) {
        const err = new SwitchyardError('SWY_ERR_SESSION_NOT_FOUND');
        rec.knob = 'session-expired';
        const text = serialize(errorResponse(idOfBody(), err.toRpcError()));
        addRepliesIn(rec.replies, text);
        ex.json(err.status, text);
        return null;
      }
    }
    // 2025-06-18 and later: an MCP-Protocol-Version naming another revision is unsupported (400).
    const pv = ex.headers.get('mcp-protocol-version')?.trim();
    if (route === 'mcp' && pv !== undefined && (era === '2025-06-18' || era === '2025-11-25') && session !== undefined && pv !== era) {
      const err = new SwitchyardError('SWY_ERR_SESSION_VERSION_HEADER', { detail: pv });
      ex.json(err.status, serialize(errorResponse(idOfBody(), err.toRpcError())));
      return null;
    }
    const noteSession = (headers?: Readonly<Record<string, string>>) => {
      const sid = headers?.['mcp-session-id'];
      if (sid === undefined) return;
      rec.session ??= sid;
      // The 2025 initialize carries no session yet: it counts as the session's first POST.
      if (rec.rpc?.method === 'initialize' && !sessionPosts.has(sid)) countPost(sid, 1);
    };
    const head = (status: number, sse: boolean) => {
      rec.status = status;
      rec.sse = sse;
      rec.ms = Date.now() - started;
      // One line per request, written once the answer has started (SSE: after its first events).
      if (sse) setImmediate(() => emit(rec));
    };
    const w = Object.create(ex) as HttpExchange & { body: unknown };
    Object.defineProperty(w, 'body', { value: restrictInitialize(ex.body) });
    w.json = (status, body, headers) => {
      noteSession(headers);
      // The record needs the replies' ids: a large body is joined (emulation is a test tool).
      const text = bodyText(body);
      addRepliesIn(rec.replies, text);
      head(status, false);
      ex.json(status, text, headers);
    };
    w.empty = (status, headers) => {
      noteSession(headers);
      let s = status;
      if (status === 202 && o.postStatus !== undefined && o.postStatus !== 202) {
        s = o.postStatus;
        rec.knob = `post-status ${s}`;
      }
      head(s, false);
      ex.empty(s, s === 204 ? headers : { ...headers, 'content-length': '0' });
    };
    w.sse = (headers) => {
      noteSession(headers);
      head(200, true);
      const stream = ex.sse(headers);
      stream.onClose(() => emitEnd(rec));
      return wrapStream(stream, rec, request);
    };
    return w;
  };

  const core = await assemble(config, { log, wrappers: [knobs], httpSsePaths: { ssePath, messagesPath: messagePath } });
  allowWithoutPost = mcpMethodsOf(core.mounts[0]?.registry.dialects.keys() ?? [])
    .filter((m) => m !== 'POST')
    .join(', ');
  // An abort while the upstream makes its first attempt closes the core at once, which ends the
  // attempt and stops what started; the start then rejects, whatever the attempt came to.
  const onAbort = () => void core.close().catch(() => {});
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (!o.signal?.aborted) await core.start();
  } catch (err) {
    if (!o.signal?.aborted) throw err;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
  }
  const aborted = async () => {
    await core.close();
    requestLog.flush();
    return new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'the start was aborted' });
  };
  if (o.signal?.aborted) throw await aborted();
  const host = config.listen.host;
  const apps: FastifyInstance[] = [];
  const listen = async (port: number): Promise<AddressInfo> => {
    const app = createHttpServer(core.routes, hooks);
    apps.push(app);
    try {
      await app.listen({ host, port });
    } catch (cause) {
      throw listenFailed('MCP listener', host, port, cause);
    }
    return app.server.address() as AddressInfo;
  };
  let addr: AddressInfo;
  try {
    addr = await listen(config.listen.port);
    if (endpointMode === 'cross-origin') {
      // A second listener on another port: the same gateway, on another origin.
      const other = await listen(0);
      crossOriginBase = `http://${authority(other.address, other.port)}`;
    }
  } catch (err) {
    await Promise.all(apps.map((a) => a.close()));
    await core.close();
    throw err;
  }
  if (o.signal?.aborted) {
    await Promise.all(apps.map((a) => a.close()));
    throw await aborted();
  }
  const url = `http://${authority(addr.address, addr.port)}${mcpPath}`;
  const paths = { mcpPath, ssePath, messagePaths: [messagePath] };
  let closing: Promise<void> | undefined;
  return {
    url,
    crossOriginUrl: crossOriginBase,
    era,
    records,
    get unrecorded() {
      return unrecorded;
    },
    verdict: () => {
      const clients = clientsOf(records);
      return verdictOf(clients[clients.length - 1] ?? [], paths);
    },
    verdicts: () => clientsOf(records).map((c) => verdictOf(c, paths)),
    report: () =>
      formatReport(records, paths, `switchyard emulate --era ${era} (${url})`) +
      (unrecorded > 0 ? `(${unrecorded} later requests not recorded: the report keeps the first ${maxRecords})\n` : ''),
    close() {
      closing ??= (async () => {
        await core.close();
        await Promise.all(apps.map((a) => a.close()));
        requestLog.flush();
      })();
      return closing;
    },
  };
}

/** The JSON value of a raw POST body when it parses (for the record; the gateway parses strictly itself). */
function parseLoose(body: unknown): unknown {
  if (!Buffer.isBuffer(body) && !(body instanceof PostText) && !(body instanceof PostChunks)) return body;
  try {
    if (body instanceof PostChunks) return JSON.parse(Buffer.concat(body.chunks, body.bytes).toString('utf8'));
    return JSON.parse(body instanceof PostText ? (body.text ?? '') : body.toString('utf8'));
  } catch {
    return undefined;
  }
}
