// The 2025 Streamable HTTP binding (2025-03-26, 2025-06-18, 2025-11-25): Mcp-Session-Id sessions,
// POST answers as JSON or a resumable SSE stream, the GET stream, DELETE, Last-Event-ID. With
// replicas, the session id carries the sealed session state and any replica serves it.

import { LRUCache } from 'lru-cache';
import type { Dialect } from '../../src/core/dialect.js';
import { channels } from '../../src/core/diagnostics.js';
import { SwitchyardError, toWireError, type ErrorCode } from '../../src/core/errors.js';
import { traceContextOfHeaders } from '../../src/core/trace.js';
import type { CoreLog, HttpExchange, Sink, SseStream } from '../../src/core/exchange.js';
import type { Executor } from '../../src/core/executor.js';
import { ClientShares } from '../../src/core/client-share.js';
import { policyViewKey, principalKey } from '../../src/core/identity.js';
import { loggedSubject } from '../../src/core/logged-text.js';
import type { Limits } from '../../src/core/limits.js';
import { classify, errorResponse, idKey, idOf, parseBody, serialize, type RequestId, type RpcMessage, type RpcRequest } from '../../src/core/message.js';
import { serializeBody } from '../../src/core/json-pieces.js';
import type { BufferedEvent, ReplicaMessage, ReplicaServices } from '../../src/core/replica.js';
import type { MessageValidator } from '../../src/core/strict.js';
import { FLAGS, STREAMABLE_REVISIONS } from './codec.js';
import {
  openSealedSession,
  parseChanges,
  parseStreamName,
  replicaOfServerRequest,
  sealSession,
  serverIdSuffix,
  SSE_SESSION_PURPOSE,
  streamName,
  type StreamName,
} from './replicas.js';
import { openSession, runBatch, sessionlessBatchError } from './server.js';
import { ClientSession, initialState, sessionLimits, NO_SINK, type SessionDeps, type SessionState } from './session.js';
import { admitted, LogicalStream, type ResumeBudget, type StreamKind, type StreamMirror } from './streams.js';

/** Revisions this binding serves, newest first. */
export const REVISIONS = STREAMABLE_REVISIONS;

/** Per-session bounds that are not configurable (documented in docs/dialects.md). */
const MAX_STREAMS_PER_SESSION = 32;
/** Lease on a session's GET stream, ms; renewed every third of it while the stream is open. */
const GET_LEASE_MS = 30_000;
/**
 * How long a replica trusts the shared ledger's last admission of a session it holds, ms: its
 * requests within it skip the round trip. A DELETE elsewhere reaches it by broadcast, and waits
 * this long for every replica's acknowledgement, so no replica serves a deleted session after
 * the DELETE was answered; idle time is counted from the last admission (at most this much early).
 */
const ADMISSION_TRUST_MS = 1_000;
/** The `retry` a replica announces when it closes a resumed stream whose request runs elsewhere, ms. */
const POLL_RETRY_MS = 500;
/**
 * Time a request's stream stays in the shared buffer after its response, ms (a client that lost
 * the connection just before it resumes within this); while the request runs, each event keeps
 * it for the request deadline plus this.
 */
const POST_STREAM_GRACE_MS = 60_000;
/** How long a closing session waits for its requests' error answers, ms. */
const SETTLE_MS = 1_000;
/**
 * The log line (info) of a session whose GET stream was (re)opened with a credential of its
 * principal proving other scopes, claims or client: its notifications follow that identity now.
 */
export const GET_IDENTITY_FOLLOWED = 'session notifications now follow the identity its GET stream proves';
/**
 * What one session id is made of: visible ASCII (2025-11-25 basic/transports#session-management)
 * but the comma, which no id this gateway issues holds (UUIDs, base64url sealed ids) and which
 * joins repeated field lines (RFC 9110 §5.3: `a,b` as well as `a, b`).
 */
const ONE_SESSION_ID = /^[\x21-\x2b\x2d-\x7e]+$/;

interface HttpSession {
  core: ClientSession;
  /** Its streams, for resumption (made with the first: a session that never streamed has none). */
  streams: Map<string, LogicalStream> | undefined;
  /** The session's GET stream (connected or not). */
  get: LogicalStream | undefined;
  /**
   * The GET stream the session's notifications go into here, with or without a connection (then
   * they are kept for the client's resumption); undefined once another replica carries them, or
   * before any GET stream.
   */
  carrying?: LogicalStream;
  /** In a cluster, renews the GET stream lease while `carrying` is set. */
  renew?: NodeJS.Timeout;
  nextStream: number;
  /** When the shared ledger last admitted the session here (`performance.now()`, ms). */
  admittedAt?: number;
  /**
   * The client whose `maxSessionsPerClient` place the session holds (`clientKey`), given back when
   * it leaves the cache; undefined for a runtime rebuilt from a sealed id opened on another
   * replica (counted there), or a client counted against no one.
   */
  client?: string;
}

/** What the 2025 binding is built with. */
export interface StreamableHttpDeps {
  executor: Executor;
  limits: Limits;
  log: CoreLog;
  strict?: MessageValidator;
  /** The id of the dialect that holds session `id`, if any (set by the registry). */
  sessionOwner?: (id: string) => string | undefined;
  /**
   * Sessions any replica can serve: sealed session ids, the shared ledger, resumption buffers
   * and the bus. Absent: sessions live in this process (random ids), as for one replica.
   */
  replicas?: ReplicaServices;
}

const DIALECT = '2025-03-26';

/**
 * Creates the 2025 Streamable HTTP dialect of one mount.
 * @see 2025-11-25 basic/transports#streamable-http; #session-management; #resumability-and-redelivery;
 *   2025-06-18 basic/transports#protocol-version-header
 */
export function createStreamableHttp(deps: StreamableHttpDeps): Dialect {
  const { executor, limits, log } = deps;
  const rs = deps.replicas;
  const link = rs?.link;
  /** Sealed sessions by the digest other replicas name them with (bus messages never carry the id). */
  const byDigest = new Map<string, string>();

  async function persistChanges(core: ClientSession): Promise<void> {
    const changes = core.changes();
    await rs!.ledger.setState(core.id, JSON.stringify(changes), limits.sessionIdleMs);
    // Answered only once the replicas holding the session took the change (or after the second a
    // replica trusts its last admission, when the ledger hands it over anyway), as a DELETE is:
    // a replica that served the session within that second skips the ledger, so a request sent
    // there right after this answer would otherwise run with the old log level or subscriptions.
    // The one holding the session's GET stream resubscribes.
    await link?.broadcast({ kind: 's25.changed', sd: core.logId, changes: changes }, ADMISSION_TRUST_MS);
  }

  const sessionDeps: SessionDeps = {
    executor,
    limits: sessionLimits(limits),
    log,
    dialect: DIALECT,
    strict: deps.strict,
    ...(rs ? { logId: rs.logId, onChange: persistChanges, ...(link ? { serverIdSuffix: serverIdSuffix(rs.replicaId) } : {}) } : {}),
  };
  /** What every session's streams keep for resumption, together (`resumeBufferBytes`). */
  const resumeBudget: ResumeBudget = { used: 0, max: limits.resumeBufferBytes };
  /** Why sessions leaving the cache end (a delete or shutdown sets it around the removal). */
  let ending: { why: SwitchyardError | undefined; reason: string } = { why: undefined, reason: 'expired' };
  /** Sessions each client opened here (`maxSessionsPerClient`), given back whichever way a session leaves the cache. */
  const shares = new ClientShares(limits.maxSessionsPerClient);
  const sessions = new LRUCache<string, HttpSession>({
    max: limits.maxSessions,
    ttl: limits.sessionIdleMs,
    updateAgeOnGet: true,
    dispose: (s) => {
      byDigest.delete(s.core.logId);
      shares.release(s.client);
      closeSession(s, ending.why, ending.reason);
    },
  });
  const sweep = setInterval(
    () => {
      // A session with a live stream or work in flight is not idle: keep it fresh, then drop the
      // expired. The busy ones are found first and touched after the walk: a touch (`get`) moves
      // a session to the front of the cache's order, where the walk would meet it again (two
      // busy sessions made it endless, and the gateway answered nothing more).
      const busy: string[] = [];
      for (const [id, s] of sessions.entries()) if (s.get?.attached || s.core.inFlight > 0 || s.core.pendingAsks > 0) busy.push(id);
      for (const id of busy) {
        sessions.get(id);
        rs?.ledger.touch(id, limits.sessionIdleMs).catch(() => {});
      }
      sessions.purgeStale();
    },
    Math.min(60_000, Math.max(1_000, limits.sessionIdleMs / 4)),
  );
  sweep.unref();

  function closeSession(s: HttpSession, why: SwitchyardError | undefined, reason: string): void {
    // Requests still running get `why` as their answer on their own streams, which end when
    // they finish; only the GET stream ends now. Nothing can resume them any more, and what the
    // GET stream kept for a resumption goes with the session.
    s.core.close(why ?? new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: reason }));
    void stopCarrying(s);
    s.get?.end();
    if (s.streams) for (const st of s.streams.values()) st.release();
    log.info({ sessionId: s.core.logId, dialect: DIALECT, reason }, 'session closed');
    if (channels.sessionClose.hasSubscribers) channels.sessionClose.publish({ mount: executor.mount, dialect: DIALECT, sessionId: s.core.logId, reason });
  }

  const remove = (id: string, why: SwitchyardError | undefined, reason: string) => {
    ending = { why, reason };
    try {
      sessions.delete(id);
    } finally {
      ending = { why: undefined, reason: 'expired' };
    }
  };

  const keep = (s: HttpSession): HttpSession => {
    sessions.set(s.core.id, s);
    if (rs) byDigest.set(s.core.logId, s.core.id);
    return s;
  };

  /** Answers `err` with its catalogue status and headers. */
  const answerError = (ex: HttpExchange, err: SwitchyardError, id: RequestId | null = null) =>
    ex.json(err.status, serialize(errorResponse(id, err.toRpcError())), err.headers);
  /** Answers `err` for a request that never reached the executor, and counts the refusal. */
  const refuseWith = (ex: HttpExchange, err: SwitchyardError, id: RequestId | null = null) => {
    executor.refused(err, DIALECT);
    answerError(ex, err, id);
  };
  const refuse = (ex: HttpExchange, code: ErrorCode, id: RequestId | null = null, detail?: string, data?: Record<string, unknown>) =>
    refuseWith(ex, new SwitchyardError(code, { detail, data }), id);
  // A local error (status 0) is never answered as itself: SWY_ERR_INTERNAL_FAULT, 500.
  const asCatalogue = (err: unknown) => (err instanceof SwitchyardError ? toWireError(err) : new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err }));

  /**
   * Stores a stream's events in the shared buffer (each before it is sent), for `ttlMs` after
   * each, and `POST_STREAM_GRACE_MS` after a final one.
   */
  const mirrorOf = (streamId: string, ttlMs: number): StreamMirror | undefined => {
    const buffer = rs?.buffer;
    if (!buffer) return undefined;
    return {
      put: (seq, data, last) =>
        buffer.put(streamId, seq, data, last ? POST_STREAM_GRACE_MS : ttlMs).catch((err: unknown) => {
          // Local work continues: the event still goes out, it just cannot be resumed elsewhere.
          log.warn({ stream: streamId, err: { message: (err as Error).message } }, 'stream event not stored for other replicas');
        }),
    };
  };

  /** switchyard_stream_events_dropped_total: events of a stream dropped before any connection carried them. */
  const countDropped = (kind: StreamKind) => (events: number) => {
    if (channels.streamDrop.hasSubscribers) channels.streamDrop.publish({ mount: executor.mount, dialect: DIALECT, kind, events });
  };
  const droppedGet = countDropped('get');
  const droppedRequest = countDropped('request');

  const newStream = (s: HttpSession, prefix: 'p' | 'g', rid?: RequestId): LogicalStream => {
    const streams = (s.streams ??= new Map<string, LogicalStream>());
    if (streams.size >= MAX_STREAMS_PER_SESSION) {
      // Forget the oldest finished stream; if none is finished, the oldest one but the session's
      // GET stream (which may be holding notifications for a client about to resume it).
      let victim: string | undefined;
      for (const [k, v] of streams)
        if (v.done) {
          victim = k;
          break;
        }
      if (victim === undefined)
        for (const [k, v] of streams)
          if (v !== s.get) {
            victim = k;
            break;
          }
      if (victim !== undefined) {
        streams.get(victim)?.release();
        streams.delete(victim);
      }
    }
    const n = (++s.nextStream).toString(36);
    const id = link ? streamName(s.core.logId, rs.replicaId, prefix, n, rid) : `${prefix}${n}`;
    const ttlMs = prefix === 'p' ? limits.requestTimeoutMs + POST_STREAM_GRACE_MS : limits.sessionIdleMs;
    const st = new LogicalStream(id, {
      kind: prefix === 'g' ? 'get' : 'request',
      capacity: limits.resumeBufferEvents,
      mirror: mirrorOf(id, ttlMs),
      budget: resumeBudget,
      // The GET stream keeps the session's notifications unfiltered and decides each as it is
      // written, live or replayed, for the session's identity and the policy in force then.
      ...(prefix === 'g'
        ? { maxChars: limits.resumeBufferGetStreamBytes, onDrop: droppedGet, admit: (m: RpcMessage) => s.core.shown(m) }
        : { onDrop: droppedRequest }),
    });
    streams.set(st.id, st);
    return st;
  };

  /** The answer channel of one POST: JSON until a message must precede the response, then a resumable SSE stream. */
  const postSink = (ex: HttpExchange, s: HttpSession, rid: RequestId): Sink => new PostSink(ex, s.core, () => newStream(s, 'p', rid), countRequestStream);

  /** switchyard_streams{kind="request"}: a POST's answer that became an SSE stream, while its connection carries it. */
  const countRequestStream = (live: SseStream): void => {
    if (!channels.streamOpen.hasSubscribers) return;
    channels.streamOpen.publish({ mount: executor.mount, dialect: DIALECT, kind: 'request' });
    live.onClose(() => channels.streamClose.publish({ mount: executor.mount, dialect: DIALECT, kind: 'request' }));
  };

  const opened = (ex: HttpExchange, core: ClientSession, response: RpcMessage) => {
    log.info({ sessionId: core.logId, dialect: DIALECT, version: core.version }, 'session opened');
    if (channels.sessionOpen.hasSubscribers) channels.sessionOpen.publish({ mount: executor.mount, dialect: DIALECT, sessionId: core.logId });
    // 2025-11-25 basic/transports#session-management: the id goes on the InitializeResult response.
    ex.json(200, serialize(response), { 'mcp-session-id': core.id });
  };

  const initialize = async (ex: HttpExchange, msg: RpcRequest) => {
    // purgeStale walks every session: only at the limit, where an expired one may free the slot
    // (below it, each initialize would cost O(sessions) and 100,000 sessions never open).
    if (sessions.size >= limits.maxSessions) sessions.purgeStale();
    // The client's share first: a client at its share is told so (429) even when every place is
    // taken. Taken now, before the shared ledger is awaited (concurrent initializes of one client
    // cannot all pass), and given back on every way out that keeps no session.
    const client = ex.client;
    if (!shares.take(client)) return refuse(ex, 'SWY_ERR_SESSION_CLIENT_LIMIT', msg.id, `limit ${shares.max} on this mount`);
    let kept = false;
    try {
      if (sessions.size >= limits.maxSessions) return refuse(ex, 'SWY_ERR_SESSION_LIMIT', msg.id);
      kept = await openKept(ex, msg, client);
    } finally {
      if (!kept) shares.release(client);
    }
  };

  /** Opens a session for `initialize` and keeps it, counted against `client`; false when it was refused (and answered). */
  const openKept = async (ex: HttpExchange, msg: RpcRequest, client: string | undefined): Promise<boolean> => {
    let sealed: { id: string; createdAtMs: number } | undefined;
    if (rs) {
      try {
        if (executor.closing) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
        const state = initialState(msg.params ?? {}, REVISIONS, ex.identity, executor.mount, DIALECT, Date.now());
        sealed = { id: sealSession(rs, state), createdAtMs: state.c };
        // 2025-11-25 basic/transports#session-management: the session lives from here; any replica may see its next request.
        await rs.ledger.touch(sealed.id, limits.sessionIdleMs);
      } catch (err) {
        const e = asCatalogue(err);
        refuseWith(ex, e, msg.id);
        return false;
      }
    }
    let done;
    try {
      done = openSession(sessionDeps, msg, REVISIONS, ex.identity, sealed, traceContextOfHeaders(ex.headers));
    } catch (err) {
      const e = asCatalogue(err);
      // An upstream that is down answers initialize with 503, its reason and Retry-After. That
      // comes from the answer itself, which the request channels already counted as an error, so
      // it is no refusal as well.
      if (e.entry.fault === 'upstream') answerError(ex, e, msg.id);
      // Strict mode's refusal keeps the path it names and its JSON-RPC code; a state too large, its size.
      else if (e.code === 'SWY_ERR_REQ_SCHEMA' || e.code === 'SWY_ERR_SESSION_STATE_TOO_LARGE') refuseWith(ex, e, msg.id);
      else refuse(ex, e.code, msg.id, undefined, e.data);
      return false;
    }
    keep({ core: done.session, streams: undefined, get: undefined, nextStream: 0, client });
    opened(ex, done.session, done.response);
    return true;
  };

  const post = async (ex: HttpExchange) => {
    const body = ex.body;
    const sid = sessionHeader(ex);
    if (sid === null) return;
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
      const s = await lookup(ex, sid);
      if (!s) return;
      if (kind === 'response') {
        // The answer to a server-to-client request another replica sent goes to that replica.
        const to = link ? replicaOfServerRequest((msg as { id?: unknown }).id) : undefined;
        if (to !== undefined && to !== rs!.replicaId) {
          try {
            await link!.send(to, { kind: 's25.response', sd: s.core.logId, body: serialize(msg) });
          } catch (err) {
            // A replica that is gone took its request with it: nothing waits for this answer any more.
            if (!(err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_OWNER_GONE')) return refuseWith(ex, asCatalogue(err));
            log.info({ sessionId: s.core.logId, replica: to }, 'answer for a replica that is gone dropped');
          }
          return ex.empty(202, { 'mcp-session-id': s.core.id });
        }
      }
      if (kind !== 'request') {
        // basic/utilities/cancellation: the request may run on any replica.
        if (kind === 'notification' && (msg as { method?: unknown }).method === 'notifications/cancelled')
          void link?.broadcast({ kind: 's25.cancel', sd: s.core.logId, body: serialize(msg) });
        await s.core.handle(msg, kind, NO_SINK, auth, ex.identity);
        return ex.empty(202, { 'mcp-session-id': s.core.id });
      }
      await s.core.handle(msg, 'request', postSink(ex, s, (msg as RpcRequest).id), auth, ex.identity, traceContextOfHeaders(ex.headers));
      return;
    }
    // A batch (JSON array): never without a session; 2025-03-26 basic/lifecycle: the initialize
    // request MUST NOT be part of a JSON-RPC batch, and a batch holding one is refused as such.
    if (sid === undefined) return refuseWith(ex, sessionlessBatchError(body));
    const s = await lookup(ex, sid);
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

  /** Refuses an id this dialect does not know: 400 when another transport's session has it, else 404. */
  const unknown = (ex: HttpExchange, sid: string, id: RequestId | null) => {
    const owner = deps.sessionOwner?.(sid) ?? (rs && rs.seal.open(SSE_SESSION_PURPOSE, sid) !== undefined ? '2024-11-05' : undefined);
    refuse(ex, owner && owner !== DIALECT ? 'SWY_ERR_SESSION_WRONG_TRANSPORT' : 'SWY_ERR_SESSION_NOT_FOUND', id);
  };

  /** The protocol version header check (2025-06-18 basic/transports#protocol-version-header: invalid or unsupported value: 400). */
  const badVersionHeader = (ex: HttpExchange, id: RequestId | null): boolean => {
    const pv = ex.headers.get('mcp-protocol-version');
    if (pv !== undefined && !(REVISIONS as readonly string[]).includes(pv.trim())) {
      refuse(ex, 'SWY_ERR_SESSION_VERSION_HEADER', id, pv);
      return true;
    }
    return false;
  };

  /**
   * The request's `Mcp-Session-Id`: undefined when absent, null when it cannot name one session
   * (answered 400 `SWY_ERR_SESSION_ID_MALFORMED` here). Several field lines reach us joined with
   * `", "` (Node's `req.headers`, Fetch `Headers`), and a space is no character of a session id,
   * so a joined value is caught by its characters wherever the header bag cannot count the lines.
   * A request naming two sessions is malformed, not one for an unknown session (404 would tell
   * the client to start over).
   * @see 2025-11-25 basic/transports#session-management (ids are visible ASCII, 0x21–0x7E)
   */
  const sessionHeader = (ex: HttpExchange): string | undefined | null => {
    const sid = ex.headers.get('mcp-session-id');
    if (sid === undefined || (ONE_SESSION_ID.test(sid) && ex.headers.count('mcp-session-id') <= 1)) return sid;
    refuse(ex, 'SWY_ERR_SESSION_ID_MALFORMED', idOf(ex.body, limits));
    return null;
  };

  /** Finds the session for a request, answering 400/404 (or 503 when the shared ledger is down) itself when there is none. */
  const lookup = async (ex: HttpExchange, sid: string | undefined | null): Promise<HttpSession | undefined> => {
    // Malformed: answered by `sessionHeader`.
    if (sid === null) return undefined;
    const id = idOf(ex.body, limits);
    // 2025-11-25 basic/transports#session-management: missing id on a non-initialize request: 400.
    if (sid === undefined) {
      refuse(ex, 'SWY_ERR_SESSION_REQUIRED', id);
      return undefined;
    }
    if (!rs) {
      const s = sessions.get(sid);
      // Unknown or ended session: 404 (basic/transports#session-management); an HTTP+SSE session's id: 400.
      // A session used by another principal than the one that opened it is, for that caller, a
      // session that does not exist (basic/security_best_practices#session-hijacking).
      if (!s || !s.core.belongsTo(ex.identity)) {
        if (s) refuse(ex, 'SWY_ERR_SESSION_NOT_FOUND', id);
        else unknown(ex, sid, id);
        return undefined;
      }
      return badVersionHeader(ex, id) ? undefined : s;
    }
    return lookupSealed(ex, sid, id, rs);
  };

  /**
   * A sealed session: its runtime here, or rebuilt from the id. Every request passes the shared
   * ledger once (revoked or idle: 404), which also hands over what changed on other replicas.
   */
  const lookupSealed = async (ex: HttpExchange, sid: string, id: RequestId | null, rs: ReplicaServices): Promise<HttpSession | undefined> => {
    let s = sessions.get(sid);
    let state: SessionState | undefined;
    if (!s) {
      state = openSealedSession(rs, sid, executor.mount, DIALECT);
      if (!state) {
        unknown(ex, sid, id);
        return undefined;
      }
    }
    // basic/security_best_practices#session-hijacking: bound to the principal that opened it.
    if ((s ? s.core.principal : state!.p) !== principalKey(ex.identity)) {
      refuse(ex, 'SWY_ERR_SESSION_NOT_FOUND', id);
      return undefined;
    }
    if (Date.now() >= (s ? s.core.createdAtMs : state!.c) + rs.sessionMaxAgeMs) {
      if (s) remove(sid, undefined, 'expired');
      refuse(ex, 'SWY_ERR_SESSION_NOT_FOUND', id);
      return undefined;
    }
    if (badVersionHeader(ex, id)) return undefined;
    if (link && s && !s.core.isClosed && s.admittedAt !== undefined && performance.now() - s.admittedAt < ADMISSION_TRUST_MS) return s;
    const admittedAt = performance.now();
    let found;
    try {
      found = await rs.ledger.admit(sid, limits.sessionIdleMs);
    } catch (err) {
      // Fail closed: no request passes unchecked while the ledger cannot say.
      refuseWith(ex, asCatalogue(err), id);
      return undefined;
    }
    if (found.admission !== 'live') {
      if (sessions.has(sid)) remove(sid, new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: found.admission }), found.admission);
      refuse(ex, 'SWY_ERR_SESSION_NOT_FOUND', id);
      return undefined;
    }
    // Another request of the session may have rebuilt it meanwhile.
    s = sessions.get(sid);
    if (!s || s.core.isClosed) {
      state ??= openSealedSession(rs, sid, executor.mount, DIALECT);
      if (!state) {
        refuse(ex, 'SWY_ERR_SESSION_NOT_FOUND', id);
        return undefined;
      }
      s = keep({ core: ClientSession.restore(sessionDeps, sid, state, ex.identity), streams: undefined, get: undefined, nextStream: 0, client: undefined });
      log.debug({ sessionId: s.core.logId, dialect: DIALECT }, 'session restored');
      // A rebuilt runtime is a session this replica holds until it closes (closeSession publishes
      // its close), so it is counted open as one opened here is: the sessions gauge then equals
      // the count /status.json reports (docs/operations.md, Metrics) instead of missing it.
      if (channels.sessionOpen.hasSubscribers) channels.sessionOpen.publish({ mount: executor.mount, dialect: DIALECT, sessionId: s.core.logId });
    }
    s.admittedAt = admittedAt;
    s.core.applyChanges(parseChanges(found.state));
    return s;
  };

  /** The lease that keeps one GET stream per session in the cluster. */
  const getLease = (s: HttpSession) => `get:${s.core.logId}`;

  /**
   * Takes the session's GET stream lease: free, ours, or held by a replica whose stream is no
   * longer attached (or that is gone).
   * @returns false when another replica carries the session's GET stream now.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`, `SWY_ERR_CLUSTER_FORWARD_TIMEOUT`
   */
  const claimGet = async (s: HttpSession): Promise<boolean> => {
    if (!link) return true;
    const key = getLease(s);
    if (await link.claim(key, GET_LEASE_MS)) return true;
    const holder = await link.ownerOf(key);
    if (holder === undefined) return link.claim(key, GET_LEASE_MS);
    let attached = false;
    try {
      attached = (await link.send(holder, { kind: 's25.get-attached', sd: s.core.logId })) === true;
    } catch (err) {
      if (!(err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_OWNER_GONE')) throw err;
    }
    return !attached && link.claim(key, GET_LEASE_MS, holder);
  };

  /** True when this replica may open the session's GET stream now; otherwise it answered (409, or 503 when the ledger cannot say). */
  const mayOpenGet = async (ex: HttpExchange, s: HttpSession): Promise<boolean> => {
    let mine: boolean;
    try {
      mine = await claimGet(s);
    } catch (err) {
      refuseWith(ex, asCatalogue(err));
      return false;
    }
    if (mine && !s.get?.attached) return true;
    refuse(ex, 'SWY_ERR_SESSION_STREAM_CONFLICT');
    return false;
  };

  /** Opens the session's GET stream here, after the replayed events of the stream it continues. */
  const openGet = (ex: HttpExchange, s: HttpSession, replay: readonly BufferedEvent[] = []) => {
    followGet(ex, s);
    const st = newStream(s, 'g');
    s.get = st;
    // Lives as long as the client keeps it: taken off node:http once its head is out (docs/sse.md).
    const live: SseStream = ex.sse({ 'mcp-session-id': s.core.id }, { detach: true });
    // Stored unfiltered (by whichever replica carried the stream): decided now, for the identity
    // this GET proved and the policy in force here.
    const shown = (m: RpcMessage) => s.core.shown(m);
    for (const ev of replay) {
      const data = ev.data === '' ? null : admitted(ev.data, shown);
      if (data !== null) live.send({ event: 'message', id: ev.id, data });
    }
    st.attach(live, -1, FLAGS.priming(s.core.version));
    carryGet(ex, s, st, live);
  };

  /**
   * Makes the session's notifications follow the identity the GET `ex` proved, before its stream
   * carries (or replays) anything. For a new GET stream and for one resumed with Last-Event-ID.
   */
  const followGet = (ex: HttpExchange, s: HttpSession) => {
    // The GET proved `ex.identity`, the session's principal (`lookup` answered any other 404). A
    // client that (re)opens its stream with a refreshed token granting other scopes or claims
    // hears from now on what that token's requests are let see, not what the session's earlier
    // token was (nor, at a resumption, what it was when the replayed notifications arrived): the
    // session's filter follows it before the stream carries anything, and the stream is held
    // (and checked again at a reload or expiry) with that identity.
    if (policyViewKey(ex.identity) !== policyViewKey(s.core.identity)) {
      s.core.follow(ex.identity);
      log.info(
        { sessionId: s.core.logId, dialect: DIALECT, principal: { iss: loggedSubject(ex.identity?.issuer), sub: loggedSubject(ex.identity?.subject) } },
        GET_IDENTITY_FOLLOWED,
      );
    }
  };

  /**
   * Makes `live` the connection of the session's GET stream `st` (after {@link followGet}): the
   * session's notifications go into `st` (unless they already do: a resumed stream kept them
   * while it had no connection), it is counted in switchyard_streams while `live` is open. For a
   * new GET stream and for one resumed with Last-Event-ID alike.
   */
  const carryGet = (ex: HttpExchange, s: HttpSession, st: LogicalStream, live: SseStream) => {
    carryNotifications(s, st);
    if (channels.streamOpen.hasSubscribers) channels.streamOpen.publish({ mount: executor.mount, dialect: DIALECT, kind: 'get' });
    // Held with the credential of the GET that opened it: a reload that changes `auth` closes this
    // connection when the new front door refuses that credential. The session stays, as it does
    // for its requests (each is authenticated again): its notifications keep going into `st`,
    // for a resumption that must pass the front door (docs/security.md). A credential that now
    // proves other scopes or claims keeps the connection, and the session's filter follows them.
    const release = executor.streams.hold({
      dialect: DIALECT,
      kind: 'get',
      sessionId: s.core.logId,
      identity: ex.identity,
      credential: ex.credential,
      end: () => live.close(),
      follow: (id) => s.core.follow(id),
    });
    live.onClose(() => {
      release();
      // The notifications keep going into `st`, kept for the client's resumption (bounded by the
      // stream's buffer); they stop with the session, or when another replica takes the stream.
      if (channels.streamClose.hasSubscribers) channels.streamClose.publish({ mount: executor.mount, dialect: DIALECT, kind: 'get' });
    });
  };

  /**
   * Sends the session's notifications into its GET stream `st` from now on, connected or not; in
   * a cluster this replica keeps the stream's lease while it does, so that another replica
   * opening the session's GET stream asks it first (`s25.get-attached`).
   * @see 2025-11-25 basic/transports#listening-for-messages-from-the-server; #resumability-and-redelivery
   */
  const carryNotifications = (s: HttpSession, st: LogicalStream) => {
    if (s.carrying === st) return;
    try {
      // Unfiltered: `st` decides each as it writes it (its `admit`), live or at a resumption.
      s.core.attachNotifications((m) => st.send(m), { decideAtDelivery: true });
      s.carrying = st;
    } catch (err) {
      log.warn({ err, sessionId: s.core.logId }, 'notifications not attached');
      return;
    }
    if (link && !s.renew) {
      s.renew = setInterval(() => void link.claim(getLease(s), GET_LEASE_MS).catch(() => {}), GET_LEASE_MS / 3);
      s.renew.unref();
    }
  };

  /**
   * Stops sending the session's notifications into its GET stream here (the session ended, or
   * another replica takes the stream over), and gives the lease back.
   * @returns once the lease is released (at once without a cluster).
   */
  const stopCarrying = async (s: HttpSession): Promise<void> => {
    if (s.carrying === undefined && s.renew === undefined) return;
    s.carrying = undefined;
    s.core.detachNotifications();
    if (s.renew) {
      clearInterval(s.renew);
      s.renew = undefined;
      await link?.release(getLease(s));
    }
  };

  /** Logs a GET stream resumed from an event older than what its buffer holds. */
  const resumedWithGap = (s: HttpSession, stream: string, missed: number | undefined) =>
    log.info({ sessionId: s.core.logId, dialect: DIALECT, stream, missed }, 'GET stream resumed with a gap');

  /** True when event data `data` is the response to `rid` (or to anything, when the request id is unknown). */
  const answers = (data: string, rid: RequestId | undefined): boolean => {
    try {
      const m = JSON.parse(data) as Record<string, unknown>;
      if (m === null || typeof m !== 'object' || 'method' in m || !('result' in m || 'error' in m)) return false;
      return rid === undefined || (m.id !== null && (typeof m.id === 'string' || typeof m.id === 'number') && idKey(m.id) === idKey(rid));
    } catch {
      return false;
    }
  };

  /**
   * Resumes the session's GET stream that another replica carried (or this one, before a
   * restart): the lease first, which makes the replica that buffered the stream's notifications
   * stop and store them all (`s25.get-attached`), then the events after `last` from the shared
   * buffer (what it still holds, when `last` is older), then a new GET stream of this replica.
   * Nothing is sent twice: the other replica adds nothing to the old stream once it answered.
   */
  const resumeGetElsewhere = async (ex: HttpExchange, s: HttpSession, streamId: string, last: string, rs: ReplicaServices) => {
    if (!(await mayOpenGet(ex, s))) return;
    let replay: BufferedEvent[] | undefined;
    let err: SwitchyardError | undefined;
    try {
      replay = await rs.buffer!.replayAfter(streamId, last, { allowGap: true });
    } catch (e) {
      err = asCatalogue(e);
    }
    if (!replay || s.get?.attached) {
      // The lease taken above holds no stream here: give it back for the client's next attempt.
      if (!s.get?.attached && s.carrying === undefined) void link?.release(getLease(s));
      if (err) return refuseWith(ex, err);
      return refuse(ex, replay ? 'SWY_ERR_SESSION_STREAM_CONFLICT' : 'SWY_ERR_SESSION_BAD_EVENT_ID');
    }
    const from = Number(last.slice(last.lastIndexOf('.') + 1));
    const first = replay.length > 0 ? Number(replay[0].id.slice(replay[0].id.lastIndexOf('.') + 1)) : undefined;
    if (first !== undefined && first > from + 1) resumedWithGap(s, streamId, first - from - 1);
    openGet(ex, s, replay);
  };

  /**
   * Resumes a stream this replica does not hold, from the shared buffer: exactly the events after
   * `last`; then a GET stream continues here (`resumeGetElsewhere`), and a POST stream whose
   * request is still running (or just ended) on its replica closes with a `retry` (the client
   * polls again, 2025-11-25 basic/transports#resumability-and-redelivery), or, when that replica
   * is gone or no longer knows the stream, ends with an error response for its request.
   */
  const resumeElsewhere = async (ex: HttpExchange, s: HttpSession, streamId: string, name: StreamName, last: string, rs: ReplicaServices) => {
    if (name.kind === 'g') return resumeGetElsewhere(ex, s, streamId, last, rs);
    let replay: BufferedEvent[] | undefined;
    try {
      replay = await rs.buffer!.replayAfter(streamId, last);
    } catch (err) {
      return refuseWith(ex, asCatalogue(err));
    }
    if (!replay) return refuse(ex, 'SWY_ERR_SESSION_BAD_EVENT_ID');
    const live = ex.sse({ 'mcp-session-id': s.core.id });
    for (const ev of replay) if (ev.data !== '') live.send({ event: 'message', id: ev.id, data: ev.data });
    if (replay.some((ev) => answers(ev.data, name.rid))) return live.close();
    // `done`: the response was stored after the replay was read; the next poll gets it.
    let state = 'unknown';
    if (link && name.replica !== rs.replicaId) {
      try {
        state = String(await link.send(name.replica, { kind: 's25.stream-state', sd: s.core.logId, stream: streamId }));
      } catch (err) {
        // Not known to be gone (Redis down, slow replica): let the client ask again.
        if (!(err instanceof SwitchyardError && err.code === 'SWY_ERR_CLUSTER_OWNER_GONE')) state = 'running';
      }
    }
    if (state === 'running' || state === 'done') {
      live.send({ data: '', retryMs: POLL_RETRY_MS });
      return live.close();
    }
    if (name.rid !== undefined) {
      const gone = new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: 'the replica running this request stopped; reissue it' });
      live.send({ event: 'message', data: serialize(errorResponse(name.rid, gone.toRpcError())) });
    }
    live.close();
  };

  const get = async (ex: HttpExchange) => {
    const s = await lookup(ex, sessionHeader(ex));
    if (!s) return;
    const last = ex.headers.get('last-event-id');
    if (last !== undefined) {
      // 2025-11-25 basic/transports#resumability-and-redelivery: replay only that stream.
      const dot = last.lastIndexOf('.');
      const streamId = dot > 0 ? last.slice(0, dot) : '';
      const st = s.streams?.get(streamId);
      const name = rs?.buffer && !st ? parseStreamName(streamId) : undefined;
      // A stream of another session is, for this one, an unknown id.
      if (name && name.session === s.core.logId) return resumeElsewhere(ex, s, streamId, name, last, rs!);
      // The sequence number exactly as we wrote it (decimal digits): `0x3`, ` 3` or `+3` name no event.
      const digits = dot > 0 ? last.slice(dot + 1) : '';
      const seq = /^(?:0|[1-9][0-9]{0,15})$/.test(digits) ? Number(digits) : NaN;
      // A GET stream resumes from any event it issued: from one older than its buffer, with what
      // the buffer holds (the spec lets a server resume without replaying; a 400 would end an
      // SDK client's GET stream for good once its retries are spent). A POST stream does not:
      // its response must not be skipped silently.
      if (!st || !(st.has(seq) || (st.kind === 'get' && st.issued(seq)))) return refuse(ex, 'SWY_ERR_SESSION_BAD_EVENT_ID');
      if (st.attached) return refuse(ex, 'SWY_ERR_SESSION_STREAM_CONFLICT');
      if (st === s.get) {
        // The session's GET stream, resumed: what it kept while no connection carried it, then
        // the session's notifications live (its lease first, in a cluster).
        if (!(await mayOpenGet(ex, s))) return;
        if (s.get !== st || st.attached) return refuse(ex, 'SWY_ERR_SESSION_STREAM_CONFLICT');
      }
      const missed = st.kind === 'get' ? st.missedAfter(seq) : 0;
      if (missed > 0) resumedWithGap(s, st.id, missed);
      // A GET stream lives as long as the client keeps it: taken off node:http once its head is
      // out (docs/sse.md); a POST stream's resumption ends with its request.
      const live = ex.sse({ 'mcp-session-id': s.core.id }, { detach: st === s.get });
      if (st === s.get) followGet(ex, s);
      st.attach(live, seq, false);
      if (st === s.get) carryGet(ex, s, st, live);
      return;
    }
    if (s.get?.attached) return refuse(ex, 'SWY_ERR_SESSION_STREAM_CONFLICT');
    if (await mayOpenGet(ex, s)) openGet(ex, s);
  };

  const del = async (ex: HttpExchange) => {
    const s = await lookup(ex, sessionHeader(ex));
    if (!s) return;
    if (rs) {
      try {
        // Until the sealed expiry: after it the id does not open anyway.
        await rs.ledger.revoke(s.core.id, s.core.createdAtMs + rs.sessionMaxAgeMs);
      } catch (err) {
        return refuseWith(ex, asCatalogue(err));
      }
      // Every replica that may still trust an earlier admission ends the session before the answer.
      await link?.broadcast({ kind: 's25.end', sd: s.core.logId }, ADMISSION_TRUST_MS);
    }
    // 2025-11-25 basic/transports#session-management: later requests with this id get 404.
    remove(s.core.id, new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: 'deleted' }), 'delete');
    ex.empty(200);
  };

  if (link) {
    /** The session another replica names by digest, if it has a runtime here. */
    const named = (m: ReplicaMessage): HttpSession | undefined => {
      const id = typeof m.sd === 'string' ? byDigest.get(m.sd) : undefined;
      return id === undefined ? undefined : sessions.get(id);
    };
    const parsed = (body: unknown): RpcMessage | undefined => {
      if (typeof body !== 'string') return undefined;
      try {
        return parseBody(body, limits).value as RpcMessage;
      } catch {
        return undefined;
      }
    };
    link.on('s25.response', async (m) => {
      const s = named(m);
      const msg = parsed(m.body);
      if (s && msg) await s.core.handle(msg, 'response', NO_SINK);
      return null;
    });
    link.on('s25.cancel', async (m) => {
      const s = named(m);
      const msg = parsed(m.body);
      if (s && msg) await s.core.handle(msg, 'notification', NO_SINK);
      return null;
    });
    link.on('s25.changed', (m) => {
      named(m)?.core.applyChanges(m.changes ?? {});
      return null;
    });
    link.on('s25.end', (m) => {
      const s = named(m);
      if (s) remove(s.core.id, new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: 'deleted' }), 'delete');
      return null;
    });
    // Asked by a replica about to open the session's GET stream (`claimGet`): true while a
    // connection carries it here. Otherwise this replica lets it go: its notifications stop going
    // into the stream kept for a resumption, and the answer waits until every event it kept is in
    // the shared buffer, where the asking replica reads the replay next (none is lost or doubled).
    link.on('s25.get-attached', async (m) => {
      const s = named(m);
      if (!s) return false;
      if (s.get?.attached) return true;
      const st = s.carrying;
      await stopCarrying(s);
      await st?.flushed();
      return false;
    });
    link.on('s25.stream-state', (m) => {
      const st = typeof m.stream === 'string' ? named(m)?.streams?.get(m.stream) : undefined;
      return st === undefined ? 'unknown' : st.done ? 'done' : 'running';
    });
  }

  return {
    id: DIALECT,
    revisions: REVISIONS,
    get sessionCount() {
      return sessions.size;
    },
    streamCount: () => {
      let n = 0;
      for (const s of sessions.values()) if (s.streams) for (const st of s.streams.values()) if (st.attached) n++;
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

/**
 * The answer channel of one POST of a session: JSON until a message must precede the response,
 * then a resumable SSE stream (`open` makes it). A class, not an object literal with a
 * `streaming` getter, which V8 makes anew for every request.
 * @see 2025-11-25 basic/transports#sending-messages-to-the-server
 */
class PostSink implements Sink {
  private st: LogicalStream | undefined;
  /** True once the response went: nothing follows it on this POST (the GET stream carries what comes later). */
  private finished = false;
  private readonly sessionHeader: Record<string, string>;

  constructor(
    private readonly ex: HttpExchange,
    private readonly core: ClientSession,
    private readonly newStream: () => LogicalStream,
    private readonly opened: (live: SseStream) => void,
  ) {
    this.sessionHeader = { 'mcp-session-id': core.id };
  }

  get streaming(): boolean {
    return this.st !== undefined;
  }

  private open(): LogicalStream {
    if (!this.st) {
      this.st = this.newStream();
      const live = this.ex.sse(this.sessionHeader);
      this.opened(live);
      this.st.attach(live, -1, FLAGS.priming(this.core.version));
    }
    return this.st;
  }

  send(msg: RpcMessage): boolean {
    if (this.core.isClosed || this.finished) return false;
    this.open().send(msg);
    return true;
  }

  finish(msg: RpcMessage | RpcMessage[] | null, status?: number, headers?: Readonly<Record<string, string>>): void {
    this.finished = true;
    const st = this.st;
    if (st) {
      const all = msg ? (Array.isArray(msg) ? msg : [msg]) : [];
      all.forEach((m, i) => st.send(m, i === all.length - 1));
      st.end();
    } else if (msg) this.ex.json(status ?? 200, serializeBody(msg), { ...headers, ...this.sessionHeader });
    else this.ex.empty(202, this.sessionHeader);
  }
}
