// The 2025 Streamable HTTP binding (2025-03-26, 2025-06-18, 2025-11-25): Mcp-Session-Id sessions,
// POST answers as JSON or a resumable SSE stream, the GET stream, DELETE, Last-Event-ID.

import { LRUCache } from 'lru-cache';
import type { Dialect } from '../../src/core/dialect.js';
import { channels } from '../../src/core/diagnostics.js';
import { SwitchyardError, type ErrorCode } from '../../src/core/errors.js';
import type { CoreLog, HttpExchange, Sink, SseStream } from '../../src/core/exchange.js';
import type { Executor } from '../../src/core/executor.js';
import type { Limits } from '../../src/core/limits.js';
import { classify, errorResponse, idOf, serialize, type RpcMessage, type RpcRequest } from '../../src/core/message.js';
import type { MessageValidator } from '../../src/core/strict.js';
import { FLAGS, STREAMABLE_REVISIONS } from './codec.js';
import { openSession, runBatch } from './server.js';
import { sessionLimits, type ClientSession, NO_SINK } from './session.js';
import { LogicalStream } from './streams.js';

/** Revisions this binding serves, newest first. */
export const REVISIONS = STREAMABLE_REVISIONS;

/** Per-session bounds that are not configurable (documented in docs/dialects.md). */
const MAX_STREAMS_PER_SESSION = 32;
/** How long a closing session waits for its requests' error answers, ms. */
const SETTLE_MS = 1_000;

interface HttpSession {
  core: ClientSession;
  streams: Map<string, LogicalStream>;
  get: LogicalStream | undefined;
  nextStream: number;
}

/** What the 2025 binding is built with. */
export interface StreamableHttpDeps {
  executor: Executor;
  limits: Limits;
  log: CoreLog;
  strict?: MessageValidator;
  /** The id of the dialect that holds session `id`, if any (set by the registry). */
  sessionOwner?: (id: string) => string | undefined;
}

/**
 * Creates the 2025 Streamable HTTP dialect of one mount.
 * @see 2025-11-25 basic/transports#streamable-http; #session-management; #resumability-and-redelivery;
 *   2025-06-18 basic/transports#protocol-version-header
 */
export function createStreamableHttp(deps: StreamableHttpDeps): Dialect {
  const { executor, limits, log } = deps;
  const sessionDeps = { executor, limits: sessionLimits(limits), log, dialect: '2025-03-26', strict: deps.strict };
  /** Why sessions leaving the cache end (a delete or shutdown sets it around the removal). */
  let ending: { why: SwitchyardError | undefined; reason: string } = { why: undefined, reason: 'expired' };
  const sessions = new LRUCache<string, HttpSession>({
    max: limits.maxSessions,
    ttl: limits.sessionIdleMs,
    updateAgeOnGet: true,
    dispose: (s) => closeSession(s, ending.why, ending.reason),
  });
  const sweep = setInterval(
    () => {
      // A session with a live stream or work in flight is not idle: keep it fresh, then drop the expired.
      for (const [id, s] of sessions.entries()) if (s.get?.attached || s.core.inFlight > 0 || s.core.pendingAsks > 0) sessions.get(id);
      sessions.purgeStale();
    },
    Math.min(60_000, Math.max(1_000, limits.sessionIdleMs / 4)),
  );
  sweep.unref();

  function closeSession(s: HttpSession, why: SwitchyardError | undefined, reason: string): void {
    // Requests still running get `why` as their answer on their own streams, which end when
    // they finish; only the GET stream ends now.
    s.core.close(why ?? new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: reason }));
    s.get?.end();
    log.info({ sessionId: s.core.id, dialect: '2025-03-26', reason }, 'session closed');
    if (channels.sessionClose.hasSubscribers) channels.sessionClose.publish({ mount: executor.mount, dialect: '2025-03-26', sessionId: s.core.id, reason });
  }

  const remove = (id: string, why: SwitchyardError | undefined, reason: string) => {
    ending = { why, reason };
    try {
      sessions.delete(id);
    } finally {
      ending = { why: undefined, reason: 'expired' };
    }
  };

  const refuse = (ex: HttpExchange, code: ErrorCode, id: RpcRequest['id'] | null = null, detail?: string, data?: Record<string, unknown>) => {
    const err = new SwitchyardError(code, { detail, data });
    if (channels.refusal.hasSubscribers) channels.refusal.publish({ code, status: err.status, mount: executor.mount, dialect: '2025-03-26' });
    ex.json(err.status, serialize(errorResponse(id, err.toRpcError())), err.headers);
  };

  const newStream = (s: HttpSession, prefix: string): LogicalStream => {
    if (s.streams.size >= MAX_STREAMS_PER_SESSION) {
      // Forget the oldest finished stream; if none is finished, the oldest one.
      let victim: string | undefined;
      for (const [k, v] of s.streams)
        if (v.done) {
          victim = k;
          break;
        }
      victim ??= s.streams.keys().next().value;
      if (victim !== undefined) s.streams.delete(victim);
    }
    const st = new LogicalStream(`${prefix}${(++s.nextStream).toString(36)}`, limits.resumeBufferEvents);
    s.streams.set(st.id, st);
    return st;
  };

  /** The answer channel of one POST: JSON until a message must precede the response, then a resumable SSE stream. */
  const postSink = (ex: HttpExchange, s: HttpSession): Sink => {
    let st: LogicalStream | undefined;
    const sessionHeader = { 'mcp-session-id': s.core.id };
    const open = () => {
      if (!st) {
        st = newStream(s, 'p');
        st.attach(ex.sse(sessionHeader), -1, FLAGS.priming(s.core.version));
      }
      return st;
    };
    return {
      send(msg) {
        if (s.core.isClosed) return false;
        open().send(msg);
        return true;
      },
      finish(msg, status, headers) {
        if (st) {
          if (msg) for (const m of Array.isArray(msg) ? msg : [msg]) st.send(m);
          st.end();
        } else if (msg) ex.json(status ?? 200, serialize(msg), { ...headers, ...sessionHeader });
        else ex.empty(202, sessionHeader);
      },
      get streaming() {
        return st !== undefined;
      },
    };
  };

  const initialize = (ex: HttpExchange, msg: RpcRequest) => {
    sessions.purgeStale();
    if (sessions.size >= limits.maxSessions) return refuse(ex, 'SWY_ERR_SESSION_LIMIT', msg.id);
    let opened;
    try {
      opened = openSession(sessionDeps, msg, REVISIONS, ex.identity);
    } catch (err) {
      const e = err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err });
      return refuse(ex, e.code, msg.id, undefined, e.data);
    }
    const core = opened.session;
    sessions.set(core.id, { core, streams: new Map(), get: undefined, nextStream: 0 });
    log.info({ sessionId: core.id, dialect: '2025-03-26', version: core.version }, 'session opened');
    if (channels.sessionOpen.hasSubscribers) channels.sessionOpen.publish({ mount: executor.mount, dialect: '2025-03-26', sessionId: core.id });
    // 2025-11-25 basic/transports#session-management: the id goes on the InitializeResult response.
    ex.json(200, serialize(opened.response), { 'mcp-session-id': core.id });
  };

  const post = async (ex: HttpExchange) => {
    const body = ex.body;
    const sid = ex.headers.get('mcp-session-id');
    const auth = ex.headers.get('authorization');
    if (!Array.isArray(body)) {
      let kind;
      try {
        kind = classify(body, limits);
      } catch (err) {
        const e = err as SwitchyardError;
        return ex.json(400, serialize(errorResponse(e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(body, limits), e.toRpcError())));
      }
      const msg = body as RpcMessage;
      if (kind === 'request' && (msg as RpcRequest).method === 'initialize') {
        if (sid !== undefined) return refuse(ex, 'SWY_ERR_SESSION_ALREADY_INITIALIZED', (msg as RpcRequest).id);
        return initialize(ex, msg as RpcRequest);
      }
      const s = lookup(ex, sid);
      if (!s) return;
      if (kind !== 'request') {
        await s.core.handle(msg, kind, NO_SINK, auth, ex.identity);
        return ex.empty(202, { 'mcp-session-id': s.core.id });
      }
      await s.core.handle(msg, 'request', postSink(ex, s), auth, ex.identity);
      return;
    }
    // A batch (JSON array): never without a session (initialize MUST NOT be batched).
    if (sid === undefined) return refuse(ex, 'SWY_ERR_REQ_BATCH_NOT_ALLOWED');
    const s = lookup(ex, sid);
    if (!s) return;
    let replies;
    try {
      replies = await runBatch(s.core, body, limits, auth, ex.identity);
    } catch (err) {
      return refuse(ex, (err as SwitchyardError).code, null, (err as SwitchyardError).code === 'SWY_ERR_REQ_INVALID' ? 'empty batch' : undefined);
    }
    if (replies.length === 0) return ex.empty(202, { 'mcp-session-id': s.core.id });
    ex.json(200, serialize(replies), { 'mcp-session-id': s.core.id });
  };

  /** Finds the session for a request, answering 400/404 itself when there is none. */
  const lookup = (ex: HttpExchange, sid: string | undefined): HttpSession | undefined => {
    const id = idOf(ex.body, limits);
    // 2025-11-25 basic/transports#session-management: missing id on a non-initialize request: 400.
    if (sid === undefined) {
      refuse(ex, 'SWY_ERR_SESSION_REQUIRED', id);
      return undefined;
    }
    const s = sessions.get(sid);
    // Unknown or ended session: 404 (basic/transports#session-management); an HTTP+SSE session's id: 400.
    // A session used by another principal than the one that opened it is, for that caller, a
    // session that does not exist (basic/security_best_practices#session-hijacking).
    if (!s || !s.core.belongsTo(ex.identity)) {
      const owner = s ? undefined : deps.sessionOwner?.(sid);
      refuse(ex, owner && owner !== '2025-03-26' ? 'SWY_ERR_SESSION_WRONG_TRANSPORT' : 'SWY_ERR_SESSION_NOT_FOUND', id);
      return undefined;
    }
    // 2025-06-18 basic/transports#protocol-version-header: invalid or unsupported value: 400.
    const pv = ex.headers.get('mcp-protocol-version');
    if (pv !== undefined && !(REVISIONS as readonly string[]).includes(pv.trim())) {
      refuse(ex, 'SWY_ERR_SESSION_VERSION_HEADER', id, pv);
      return undefined;
    }
    return s;
  };

  const get = (ex: HttpExchange) => {
    const s = lookup(ex, ex.headers.get('mcp-session-id'));
    if (!s) return;
    const last = ex.headers.get('last-event-id');
    if (last !== undefined) {
      // 2025-11-25 basic/transports#resumability-and-redelivery: replay only that stream.
      const dot = last.lastIndexOf('.');
      const st = dot > 0 ? s.streams.get(last.slice(0, dot)) : undefined;
      const seq = dot > 0 ? Number(last.slice(dot + 1)) : NaN;
      if (!st || !Number.isInteger(seq) || !st.has(seq)) return refuse(ex, 'SWY_ERR_SESSION_BAD_EVENT_ID');
      if (st.attached) return refuse(ex, 'SWY_ERR_SESSION_STREAM_CONFLICT');
      st.attach(ex.sse({ 'mcp-session-id': s.core.id }), seq, false);
      return;
    }
    if (s.get?.attached) return refuse(ex, 'SWY_ERR_SESSION_STREAM_CONFLICT');
    const st = newStream(s, 'g');
    s.get = st;
    const live: SseStream = ex.sse({ 'mcp-session-id': s.core.id });
    st.attach(live, -1, FLAGS.priming(s.core.version));
    try {
      s.core.attachNotifications((m) => st.send(m));
    } catch (err) {
      log.warn({ err, sessionId: s.core.id }, 'notifications not attached');
    }
    if (channels.streamOpen.hasSubscribers) channels.streamOpen.publish({ mount: executor.mount, dialect: '2025-03-26', kind: 'get' });
    live.onClose(() => {
      if (s.get === st) s.core.detachNotifications();
      if (channels.streamClose.hasSubscribers) channels.streamClose.publish({ mount: executor.mount, dialect: '2025-03-26', kind: 'get' });
    });
  };

  const del = (ex: HttpExchange) => {
    const s = lookup(ex, ex.headers.get('mcp-session-id'));
    if (!s) return;
    // 2025-11-25 basic/transports#session-management: later requests with this id get 404.
    remove(s.core.id, new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: 'deleted' }), 'delete');
    ex.empty(200);
  };

  return {
    id: '2025-03-26',
    revisions: REVISIONS,
    get sessionCount() {
      return sessions.size;
    },
    streamCount: () => {
      let n = 0;
      for (const s of sessions.values()) for (const st of s.streams.values()) if (st.attached) n++;
      return n;
    },
    hasSession: (id) => sessions.has(id),
    async handle(ex) {
      if (ex.method === 'POST') return post(ex);
      if (ex.method === 'GET') return get(ex);
      if (ex.method === 'DELETE') return del(ex);
      refuse(ex, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED');
    },
    async close() {
      clearInterval(sweep);
      const live = [...sessions.values()];
      ending = { why: new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN'), reason: 'shutdown' };
      sessions.clear();
      ending = { why: undefined, reason: 'expired' };
      // The listener closes after this: let each request in flight write its error answer first.
      await Promise.all(live.map((s) => s.core.settled(SETTLE_MS)));
    },
  };
}
