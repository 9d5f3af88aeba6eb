// The 2025 dialect (2025-03-26, 2025-06-18, 2025-11-25): Streamable HTTP with initialize,
// Mcp-Session-Id sessions, the GET stream, DELETE, and Last-Event-ID resumption.

import { LRUCache } from 'lru-cache';
import type { Dialect, DialectDeps, HttpExchange, SseStream } from '../../src/core/dialect.js';
import { SwitchyardError, toRpcError, type ErrorCode } from '../../src/core/errors.js';
import { classify, errorResponse, idOf, resultResponse, serialize, type RpcMessage, type RpcRequest, type RpcResponse } from '../../src/core/message.js';
import { ClientSession, sessionLimits, type Outbound } from '../../src/core/sessions.js';
import { STREAMABLE_REVISIONS } from '../../src/core/versions.js';
import { LogicalStream } from './streams.js';

/** Revisions this dialect serves, newest first. */
export const REVISIONS = STREAMABLE_REVISIONS;

/** Per-session bounds that are not configurable (documented in docs/dialects.md). */
const MAX_STREAMS_PER_SESSION = 32;

interface HttpSession {
  core: ClientSession;
  streams: Map<string, LogicalStream>;
  get: LogicalStream | undefined;
  nextStream: number;
}

function header(ex: HttpExchange, name: string): string | undefined {
  const v = ex.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Creates the 2025 Streamable HTTP dialect.
 * @see 2025-11-25 basic/transports#streamable-http; #session-management; #resumability-and-redelivery;
 *   2025-06-18 basic/transports#protocol-version-header
 */
export function createStreamableDialect(deps: DialectDeps): Dialect {
  const { executor, limits, log } = deps;
  const sessions = new LRUCache<string, HttpSession>({
    max: limits.maxSessions,
    ttl: limits.sessionIdleMs,
    updateAgeOnGet: true,
    dispose: (s) => closeSession(s),
  });
  const sweep = setInterval(
    () => {
      // Sessions with a live stream are not idle; keep them fresh, then drop the expired.
      for (const [id, s] of sessions.entries()) if (s.get?.attached) sessions.get(id);
      sessions.purgeStale();
    },
    Math.min(60_000, Math.max(1_000, limits.sessionIdleMs / 4)),
  );
  sweep.unref();

  function closeSession(s: HttpSession): void {
    s.core.close();
    for (const st of s.streams.values()) st.end();
    s.streams.clear();
    log.info({ sessionId: s.core.id, dialect: '2025-03-26' }, 'session closed');
  }

  const refuse = (ex: HttpExchange, code: ErrorCode, id: RpcRequest['id'] | null = null, detail?: string, data?: Record<string, unknown>) => {
    const err = new SwitchyardError(code, { detail, data });
    ex.json(err.status, serialize(errorResponse(id, err.toRpcError())));
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

  /** The answer channel of one POST: JSON until a message must precede the response, then SSE. */
  const postOutbound = (ex: HttpExchange, s: HttpSession): Outbound & { streamed(): boolean } => {
    let st: LogicalStream | undefined;
    const sessionHeader = { 'mcp-session-id': s.core.id };
    const open = () => {
      if (!st) {
        st = newStream(s, 'p');
        const live = ex.sse(sessionHeader);
        st.attach(live, -1, primingFor(s));
      }
      return st;
    };
    return {
      send(msg) {
        if (s.core.isClosed) return false;
        open().send(msg);
        return true;
      },
      finish(msg) {
        if (st) {
          if (msg) st.send(msg);
          st.end();
        } else if (msg) ex.json(200, serialize(msg), sessionHeader);
        else ex.empty(202, sessionHeader);
      },
      streamed: () => st !== undefined,
    };
  };

  // 2025-11-25 basic/transports#sending-messages-to-the-server: priming event only for
  // clients at 2025-11-25 or later (older clients choke on empty data).
  const primingFor = (s: HttpSession): boolean => s.core.version >= '2025-11-25';

  const initialize = (ex: HttpExchange, msg: RpcRequest) => {
    if (executor.closing) return refuse(ex, 'SWY_ERR_ADMISSION_SHUTTING_DOWN', msg.id);
    sessions.purgeStale();
    if (sessions.size >= limits.maxSessions) return refuse(ex, 'SWY_ERR_SESSION_LIMIT', msg.id);
    const core = new ClientSession(executor, sessionLimits(limits), log, REVISIONS[0]);
    core.validator = deps.strict;
    const result = core.initialize(msg.params ?? {}, REVISIONS);
    if (deps.strict) {
      deps.strict.check('in', core.version, msg);
      deps.strict.check('out', core.version, resultResponse(msg.id, result), 'initialize');
    }
    const s: HttpSession = { core, streams: new Map(), get: undefined, nextStream: 0 };
    sessions.set(core.id, s);
    log.info({ sessionId: core.id, dialect: '2025-03-26', version: core.version }, 'session opened');
    // 2025-11-25 basic/transports#session-management: the id goes on the InitializeResult response.
    ex.json(200, serialize(resultResponse(msg.id, result)), { 'mcp-session-id': core.id });
  };

  const post = async (ex: HttpExchange) => {
    const body = ex.body;
    const sid = header(ex, 'mcp-session-id');
    const single = Array.isArray(body) ? undefined : body;
    if (single !== undefined) {
      let kind;
      try {
        kind = classify(single, limits);
      } catch (err) {
        const e = err as SwitchyardError;
        const id = e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(single, limits);
        return ex.json(400, serialize(errorResponse(id, e.toRpcError())));
      }
      const msg = single as RpcMessage;
      if (kind === 'request' && (msg as RpcRequest).method === 'initialize') {
        if (sid !== undefined) return refuse(ex, 'SWY_ERR_SESSION_ALREADY_INITIALIZED', (msg as RpcRequest).id);
        return initialize(ex, msg as RpcRequest);
      }
      const s = lookup(ex, sid);
      if (!s) return;
      if (kind !== 'request') {
        void s.core.handle(msg, kind, { send: () => false, finish: () => {} });
        return ex.empty(202, { 'mcp-session-id': s.core.id });
      }
      const out = postOutbound(ex, s);
      await s.core.handle(msg, 'request', out, header(ex, 'authorization'));
      return;
    }
    // A batch (JSON array): 2025-03-26 only (2025-06-18 changelog: batching removed), and
    // never without a session (initialize MUST NOT be batched).
    const batch = body as unknown[];
    if (sid === undefined) return refuse(ex, 'SWY_ERR_REQ_BATCH_NOT_ALLOWED');
    const s = lookup(ex, sid);
    if (!s) return;
    if (s.core.version !== '2025-03-26') return refuse(ex, 'SWY_ERR_REQ_BATCH_NOT_ALLOWED');
    if (batch.length === 0) return refuse(ex, 'SWY_ERR_REQ_INVALID', null, 'empty batch');
    if (batch.length > limits.maxBatchMessages) return refuse(ex, 'SWY_ERR_REQ_BATCH_TOO_LARGE');
    const replies: RpcResponse[] = [];
    const work: Promise<void>[] = [];
    for (const item of batch) {
      let kind;
      try {
        kind = classify(item, limits);
      } catch (err) {
        replies.push(errorResponse(null, toRpcError(err)));
        continue;
      }
      if (kind === 'request' && (item as RpcRequest).method === 'initialize') {
        // 2025-03-26 basic/lifecycle#initialization: initialize MUST NOT be part of a batch.
        replies.push(errorResponse((item as RpcRequest).id, new SwitchyardError('SWY_ERR_SESSION_ALREADY_INITIALIZED').toRpcError()));
        continue;
      }
      if (kind !== 'request') {
        void s.core.handle(item as RpcMessage, kind, { send: () => false, finish: () => {} });
        continue;
      }
      // Messages before a batched response have no stream to travel on; they are dropped.
      work.push(s.core.handle(item as RpcMessage, 'request', { send: () => false, finish: (m) => void (m && replies.push(m)) }));
    }
    await Promise.all(work);
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
    // Unknown or ended session: 404 (SM5); an HTTP+SSE session's id: 400 (2024-11-05 digest §6).
    if (!s) {
      const owner = deps.sessionOwner?.(sid);
      refuse(ex, owner && owner !== '2025-03-26' ? 'SWY_ERR_SESSION_WRONG_TRANSPORT' : 'SWY_ERR_SESSION_NOT_FOUND', id);
      return undefined;
    }
    // 2025-06-18 basic/transports#protocol-version-header: invalid or unsupported value: 400.
    const pv = header(ex, 'mcp-protocol-version');
    if (pv !== undefined && !(REVISIONS as readonly string[]).includes(pv.trim())) {
      refuse(ex, 'SWY_ERR_SESSION_VERSION_HEADER', id, pv);
      return undefined;
    }
    return s;
  };

  const get = (ex: HttpExchange) => {
    const s = lookup(ex, header(ex, 'mcp-session-id'));
    if (!s) return;
    const last = header(ex, 'last-event-id');
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
    st.attach(live, -1, primingFor(s));
    try {
      s.core.attachNotifications((m) => st.send(m));
    } catch (err) {
      log.warn({ err, sessionId: s.core.id }, 'notifications not attached');
    }
    live.onClose(() => {
      if (s.get === st) s.core.detachNotifications();
    });
  };

  const del = (ex: HttpExchange) => {
    const sid = header(ex, 'mcp-session-id');
    const s = lookup(ex, sid);
    if (!s) return;
    // 2025-11-25 basic/transports#session-management: later requests with this id get 404.
    sessions.delete(s.core.id);
    ex.empty(200);
  };

  return {
    id: '2025-03-26',
    revisions: REVISIONS,
    get sessionCount() {
      return sessions.size;
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
      sessions.clear();
    },
  };
}
