// The 2024-11-05 HTTP+SSE binding: a GET opens a stream whose first event, `endpoint`, names the
// POST URI; POSTs answer 202 and every reply travels on the stream. Sessions are the initialize
// era's (dialects/2025-03-26/session.ts): this folder is that era over the older transport. With
// replicas, the session id names the replica holding the stream, and a POST that lands on another
// replica is carried out by that one.

import type { Dialect } from '../../src/core/dialect.js';
import { channels } from '../../src/core/diagnostics.js';
import { SwitchyardError, toRpcError, toWireError, type ErrorCode } from '../../src/core/errors.js';
import { traceContextOf, traceContextOfHeaders, type TraceContext } from '../../src/core/trace.js';
import type { CoreLog, HttpExchange, Sink, SseStream } from '../../src/core/exchange.js';
import type { Executor } from '../../src/core/executor.js';
import { ClientShares } from '../../src/core/client-share.js';
import { principalKey, type Identity } from '../../src/core/identity.js';
import type { Limits } from '../../src/core/limits.js';
import {
  classify,
  errorResponse,
  idOf,
  parseBody,
  serialize,
  type MessageKind,
  type RequestId,
  type RpcMessage,
  type RpcRequest,
} from '../../src/core/message.js';
import { serializeBody } from '../../src/core/json-pieces.js';
import type { ReplicaServices } from '../../src/core/replica.js';
import type { MessageValidator } from '../../src/core/strict.js';
import { HTTP_SSE_REVISION, STREAMABLE_REVISIONS } from '../2025-03-26/codec.js';
import { SESSION_PURPOSE, SSE_SESSION_PURPOSE } from '../2025-03-26/replicas.js';
import { ClientSession, sessionLimits } from '../2025-03-26/session.js';
import { checkInitialize } from '../2025-03-26/server.js';

/** Revisions this binding serves. `initialize` also accepts the 2025 revisions here, as every SDK client offers 2025-11-25 even over SSE. */
export const REVISIONS = [HTTP_SSE_REVISION] as const;

/** The revisions `initialize` negotiates among here, 2024-11-05 first (the counter-offer). */
const INITIALIZE_ON_SSE: readonly string[] = [HTTP_SSE_REVISION, ...STREAMABLE_REVISIONS];

/**
 * Life of a sealed HTTP+SSE session id, ms. The session ends with its stream; the id only has to
 * outlive it, and no revocation list keeps it (there is no DELETE in 2024-11-05).
 */
const SSE_ID_LIFE_MS = 30 * 24 * 3_600_000;

/** How long a closing session waits for its requests' error answers before its stream ends, ms. */
const SETTLE_MS = 1_000;

interface SseSession {
  core: ClientSession;
  stream: SseStream;
}

/** What a sealed HTTP+SSE session id carries: the principal, the mount and the replica holding the stream. */
interface SseIdState {
  p: string;
  m: string;
  r: string;
}

/** What the HTTP+SSE binding is built with. */
export interface HttpSseDeps {
  executor: Executor;
  limits: Limits;
  log: CoreLog;
  strict?: MessageValidator;
  /** Path the `endpoint` event names for POSTs (e.g. `/messages`). */
  messagePath: string;
  /** The id of the dialect that holds session `id`, if any (set by the registry). */
  sessionOwner?: (id: string) => string | undefined;
  /** Replicas: sealed session ids naming the stream's replica, and the bus to reach it. Absent: one process. */
  replicas?: ReplicaServices;
}

/**
 * Creates the HTTP+SSE dialect of one mount (gated: the registry builds it only when enabled).
 * Sessions live as long as their stream; a closed stream ends the session and cancels its work.
 * @see 2024-11-05 basic/transports (HTTP with SSE); 2025-03-26 basic/transports#backwards-compatibility
 */
export function createHttpSse(deps: HttpSseDeps): Dialect {
  const { executor, limits, log } = deps;
  const rs = deps.replicas;
  const link = rs?.link;
  const sessionDeps = { executor, limits: sessionLimits(limits), log, dialect: '2024-11-05', strict: deps.strict, ...(rs ? { logId: rs.logId } : {}) };
  const sessions = new Map<string, SseSession>();
  /** Streams each client holds (`maxSessionsPerClient`): a place is given back when its stream closes. */
  const shares = new ClientShares(limits.maxSessionsPerClient);
  /** Sessions by the digest other replicas name them with (bus messages never carry the id). */
  const byDigest = new Map<string, string>();
  let stopping = false;

  /**
   * Answers `err` for a request that never reached its session, and counts the refusal. `id`: the
   * request's, when its body was read and has one (a POST), else null (JSON-RPC 2.0 §5).
   */
  const refuse = (ex: HttpExchange, code: ErrorCode, detail?: string, id: RequestId | null = null) =>
    refuseWith(ex, new SwitchyardError(code, detail ? { detail } : {}), id);
  const refuseWith = (ex: HttpExchange, err: SwitchyardError, id: RequestId | null = null) => {
    executor.refused(err, '2024-11-05');
    ex.json(err.status, serialize(errorResponse(id, err.toRpcError())), err.headers);
  };

  const newId = (identity: Identity | null): string | undefined =>
    rs
      ? rs.seal.seal(SSE_SESSION_PURPOSE, { p: principalKey(identity), m: executor.mount, r: rs.replicaId } satisfies SseIdState, Date.now() + SSE_ID_LIFE_MS)
      : undefined;

  const open = (ex: HttpExchange) => {
    if (executor.closing) return refuse(ex, 'SWY_ERR_ADMISSION_SHUTTING_DOWN');
    // The client's share first: a client at its share is told so (429) even when every place is taken.
    const client = ex.client;
    if (shares.full(client)) return refuse(ex, 'SWY_ERR_SESSION_CLIENT_LIMIT', `limit ${shares.max} on this mount`);
    if (sessions.size >= limits.maxSessions) return refuse(ex, 'SWY_ERR_SESSION_LIMIT');
    try {
      executor.describe();
    } catch (err) {
      // An upstream that is down: 503 with Retry-After while the GET is still an HTTP answer.
      return refuseWith(ex, err instanceof SwitchyardError ? toWireError(err) : new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err }));
    }
    // The session object exists before initialize: it holds the stream's principal and state.
    const core = new ClientSession(sessionDeps, HTTP_SSE_REVISION, ex.identity, newId(ex.identity));
    // POSTs another replica carries out for this stream come without their Authorization.
    core.rememberAuthorization(ex.headers.get('authorization'));
    // The first event is `endpoint`: a URI reference that resolves against the GET's own URL,
    // so a proxy that publishes us under a stripped prefix still leads the POSTs back to us
    // (2024-11-05 basic/transports: the endpoint event; RFC 3986 §5 reference resolution).
    // Computed before the stream opens: a bad forwarded header is then still an HTTP refusal.
    const endpoint = `${ex.publicUrl(deps.messagePath, true)}?sessionId=${core.id}`;
    // The session lives as long as this stream: taken off node:http once its head is out (an
    // idle session then costs its socket and its own state; docs/sse.md).
    const stream = ex.sse(undefined, { detach: true });
    const s: SseSession = { core, stream };
    sessions.set(core.id, s);
    // Nothing between the check above and here awaits: the place is taken with the session.
    shares.take(client);
    if (rs) byDigest.set(core.logId, core.id);
    stream.send({ event: 'endpoint', data: endpoint });
    try {
      core.attachNotifications((m) => stream.send({ event: 'message', data: serialize(m) }));
    } catch (err) {
      log.warn({ err, sessionId: core.logId }, 'notifications not attached');
    }
    // Held with its credential: a reload that changes `auth` ends it when the new front door
    // refuses that credential, or no longer authenticates the mount, and with it the session; a
    // credential that now proves other scopes or claims keeps it, filtered for them (docs/security.md).
    let ended: 'credential-refused' | 'auth-removed' | undefined;
    const release = executor.streams.hold({
      dialect: '2024-11-05',
      kind: 'http-sse',
      sessionId: core.logId,
      identity: ex.identity,
      credential: ex.credential,
      end: (why) => {
        ended = why === null ? 'auth-removed' : 'credential-refused';
        stream.close();
      },
      follow: (id) => core.follow(id),
    });
    stream.onClose(() => {
      release();
      // Closing the stream ends the session; its work is cancelled (nothing can carry answers).
      sessions.delete(core.id);
      shares.release(client);
      byDigest.delete(core.logId);
      core.close(stopping ? new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN') : undefined);
      // The stream is the session: it ends when the gateway (or a reload removing the mount) closes
      // this dialect, when the gateway cut a client that stopped reading it (limits.maxStreamBufferBytes),
      // when a reload's front door refused its credential or no longer authenticates the mount, or
      // else when its connection ends (docs/operations.md, "Session lines").
      const reason = stopping ? 'shutdown' : (ended ?? (stream.cut ? 'slow-reader' : 'stream-closed'));
      log.info({ sessionId: core.logId, dialect: '2024-11-05', reason }, 'session closed');
      if (channels.sessionClose.hasSubscribers) channels.sessionClose.publish({ mount: executor.mount, dialect: '2024-11-05', sessionId: core.logId, reason });
      if (channels.streamClose.hasSubscribers) channels.streamClose.publish({ mount: executor.mount, dialect: '2024-11-05', kind: 'http-sse' });
    });
    log.info({ sessionId: core.logId, dialect: '2024-11-05' }, 'session opened');
    if (channels.sessionOpen.hasSubscribers) channels.sessionOpen.publish({ mount: executor.mount, dialect: '2024-11-05', sessionId: core.logId });
    // The session is its stream: switchyard_streams{kind="http-sse"} counts it as /status.json
    // does (streamCount is the sessions' count), closed with the session above (docs/operations.md, Metrics).
    if (channels.streamOpen.hasSubscribers) channels.streamOpen.publish({ mount: executor.mount, dialect: '2024-11-05', kind: 'http-sse' });
  };

  /** What a sealed id of this mount says, when it is one. */
  const sealedState = (sid: string): SseIdState | undefined => {
    const v = rs?.seal.open(SSE_SESSION_PURPOSE, sid) as Partial<SseIdState> | undefined;
    return v && typeof v.p === 'string' && typeof v.r === 'string' && v.m === executor.mount ? (v as SseIdState) : undefined;
  };

  const post = async (ex: HttpExchange) => {
    const sid = ex.query.get('sessionId');
    // The body is parsed by now: a refusal names the request's id when it has a readable one.
    const id = idOf(ex.body, limits);
    if (sid === null || sid === '') return refuse(ex, 'SWY_ERR_SESSION_QUERY_REQUIRED', undefined, id);
    // Two `sessionId` parameters name no one session: refused, not delivered to the first (the
    // endpoint event names one URI with one; as a repeated Mcp-Session-Id is in 2025).
    if (ex.query.getAll('sessionId').length > 1) return refuse(ex, 'SWY_ERR_SESSION_QUERY_REQUIRED', 'exactly one', id);
    const s = sessions.get(sid);
    const elsewhere = s ? undefined : sealedState(sid);
    // A session used by another principal than the one that opened its stream does not exist for it.
    if (s ? !s.core.belongsTo(ex.identity) : !elsewhere || elsewhere.p !== principalKey(ex.identity) || elsewhere.r === rs!.replicaId || !link) {
      const owner = s || elsewhere ? undefined : (deps.sessionOwner?.(sid) ?? (rs?.seal.open(SESSION_PURPOSE, sid) !== undefined ? '2025-03-26' : undefined));
      return refuse(ex, owner && owner !== '2024-11-05' ? 'SWY_ERR_SESSION_WRONG_TRANSPORT' : 'SWY_ERR_SESSION_NOT_FOUND', undefined, id);
    }
    // No batching in 2024-11-05 (JSONRPCMessage has no array form), nor in a session of this
    // transport that negotiated 2025-03-26: the detail says so, or the message would contradict itself.
    if (Array.isArray(ex.body)) return refuse(ex, 'SWY_ERR_REQ_BATCH_NOT_ALLOWED', 'in Streamable HTTP sessions, never over HTTP+SSE');
    let kind;
    try {
      kind = classify(ex.body, limits);
    } catch (err) {
      const e = err as SwitchyardError;
      return ex.json(400, serialize(errorResponse(e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(ex.body, limits), e.toRpcError())));
    }
    if (!s) {
      // The stream lives on another replica: that one carries the message out and answers on it,
      // in the client's trace (its server span continues the POST's traceparent).
      const tc = traceContextOfHeaders(ex.headers);
      try {
        await link!.send(elsewhere!.r, {
          kind: 'sse.post',
          sd: rs!.logId(sid),
          body: serialize(ex.body),
          identity: ex.identity,
          ...(ex.headers.get('authorization') !== undefined ? { auth: ex.headers.get('authorization') } : {}),
          ...(tc ? { tp: tc.traceparent, ...(tc.tracestate !== undefined ? { ts: tc.tracestate } : {}) } : {}),
        });
      } catch (err) {
        return refuseWith(ex, err instanceof SwitchyardError ? toWireError(err) : new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err }), id);
      }
      return ex.empty(202);
    }
    // Accepted: 202 with an empty body; the reply goes out as a `message` event.
    ex.empty(202);
    await carryOut(s, ex.body as RpcMessage, kind, ex.headers.get('authorization'), ex.identity, traceContextOfHeaders(ex.headers));
  };

  /** Handles one accepted message of a session whose stream is here: every reply goes out on the stream. */
  const carryOut = async (
    s: SseSession,
    msg: RpcMessage,
    kind: MessageKind,
    authorization: string | undefined,
    identity: Identity | null,
    traceContext?: TraceContext,
  ) => {
    const send = (m: RpcMessage) => s.stream.send({ event: 'message', data: serializeBody(m) });
    // A second `initialize` goes to the session, which refuses it and counts it as a request.
    if (kind === 'request' && (msg as RpcRequest).method === 'initialize' && !s.core.negotiated) {
      const req = msg as RpcRequest;
      try {
        send(initializeOn(s.core, req, traceContext));
      } catch (err) {
        // The upstream went down after the stream opened: the answer travels on the stream.
        send(errorResponse(req.id, toRpcError(err)));
      }
      return;
    }
    const sink: Sink = {
      send,
      finish: (m) => {
        if (m) for (const one of Array.isArray(m) ? m : [m]) send(one);
      },
      streaming: true,
    };
    await s.core.handle(msg, kind, sink, authorization, identity, traceContext);
  };

  /** Answers initialize on an open stream's session (the session exists since the GET). */
  const initializeOn = (core: ClientSession, req: RpcRequest, traceContext?: TraceContext) => {
    checkInitialize(deps.strict, req, INITIALIZE_ON_SSE);
    const result = core.initialize(req.params ?? {}, INITIALIZE_ON_SSE, traceContext, req.id);
    const response = { jsonrpc: '2.0' as const, id: req.id, result };
    deps.strict?.check('out', core.version, response, 'initialize');
    return response;
  };

  // A POST another replica accepted for a stream held here: checked again, answered at once
  // (the client already has its 202), carried out on the stream.
  link?.on('sse.post', (m) => {
    const id = typeof m.sd === 'string' ? byDigest.get(m.sd) : undefined;
    const s = id === undefined ? undefined : sessions.get(id);
    const identity = (m.identity ?? null) as Identity | null;
    if (!s || !s.core.belongsTo(identity)) throw new SwitchyardError('SWY_ERR_SESSION_NOT_FOUND');
    let msg: RpcMessage;
    let kind: MessageKind;
    try {
      msg = parseBody(String(m.body), limits).value as RpcMessage;
      kind = classify(msg, limits);
    } catch (err) {
      throw err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_REQ_INVALID');
    }
    void carryOut(s, msg, kind, typeof m.auth === 'string' ? m.auth : undefined, identity, traceContextOf(m.tp, m.ts)).catch((err: unknown) =>
      log.error({ err, sessionId: s.core.logId }, 'internal error'),
    );
    return null;
  });

  return {
    id: '2024-11-05',
    revisions: REVISIONS,
    get sessionCount() {
      return sessions.size;
    },
    streamCount: () => sessions.size,
    hasSession: (id) => sessions.has(id),
    async handle(ex) {
      if (ex.method === 'GET') return open(ex);
      if (ex.method === 'POST') return post(ex);
      refuse(ex, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED');
    },
    async close() {
      stopping = true;
      await Promise.all(
        [...sessions.values()].map(async (s) => {
          // Every request in flight is answered "shutting down" on the stream before it ends:
          // closing the stream first would leave those requests without a response.
          s.core.close(new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN'));
          await s.core.settled(SETTLE_MS);
          s.stream.close();
        }),
      );
    },
  };
}
