// The 2024-11-05 dialect: the HTTP+SSE transport. A GET opens a stream whose first event,
// `endpoint`, names the POST URI; POSTs answer 202 and every reply travels on the stream.

import type { Dialect, DialectDeps, HttpExchange, SseStream } from '../../src/core/dialect.js';
import { SwitchyardError, type ErrorCode } from '../../src/core/errors.js';
import { classify, errorResponse, idOf, resultResponse, serialize, type RpcMessage, type RpcRequest } from '../../src/core/message.js';
import { ClientSession, sessionLimits, type Outbound } from '../../src/core/sessions.js';
import { LEGACY_SSE_REVISION, STREAMABLE_REVISIONS } from '../../src/core/versions.js';

/** Revisions this dialect serves. */
export const REVISIONS = [LEGACY_SSE_REVISION] as const;

interface LegacySession {
  core: ClientSession;
  stream: SseStream;
}

/**
 * Creates the HTTP+SSE dialect (gated: the registry builds it only when enabled).
 * Sessions live as long as their stream; a closed stream ends the session and cancels its work.
 * @see 2024-11-05 basic/transports (HTTP with SSE); 2025-03-26 basic/transports#backwards-compatibility
 */
export function createLegacySseDialect(deps: DialectDeps): Dialect {
  const { executor, limits, log } = deps;
  const sessions = new Map<string, LegacySession>();

  const refuse = (ex: HttpExchange, code: ErrorCode, detail?: string) => {
    const err = new SwitchyardError(code, detail ? { detail } : {});
    ex.json(err.status, serialize(errorResponse(null, err.toRpcError())));
  };

  const open = (ex: HttpExchange) => {
    if (executor.closing) return refuse(ex, 'SWY_ERR_ADMISSION_SHUTTING_DOWN');
    if (sessions.size >= limits.maxSessions) return refuse(ex, 'SWY_ERR_SESSION_LIMIT');
    const core = new ClientSession(executor, sessionLimits(limits), log, LEGACY_SSE_REVISION);
    core.validator = deps.strict;
    const stream = ex.sse();
    const s: LegacySession = { core, stream };
    sessions.set(core.id, s);
    // T5: the first event is `endpoint`, a relative URI on the same origin carrying the session.
    stream.send({ event: 'endpoint', data: `${deps.legacyMessagePath}?sessionId=${core.id}` });
    core.attachNotifications((m) => stream.send({ event: 'message', data: serialize(m) }));
    stream.onClose(() => {
      // T7: closing the stream ends the session; its work is cancelled.
      sessions.delete(core.id);
      core.close();
      log.info({ sessionId: core.id, dialect: '2024-11-05' }, 'session closed');
    });
    log.info({ sessionId: core.id, dialect: '2024-11-05' }, 'session opened');
  };

  const post = (ex: HttpExchange) => {
    const sid = ex.query.get('sessionId');
    if (sid === null || sid === '') return refuse(ex, 'SWY_ERR_SESSION_QUERY_REQUIRED');
    const s = sessions.get(sid);
    if (!s) {
      const owner = deps.sessionOwner?.(sid);
      return refuse(ex, owner && owner !== '2024-11-05' ? 'SWY_ERR_SESSION_WRONG_TRANSPORT' : 'SWY_ERR_SESSION_NOT_FOUND');
    }
    // No batching in 2024-11-05 (JSONRPCMessage has no array form).
    if (Array.isArray(ex.body)) return refuse(ex, 'SWY_ERR_REQ_BATCH_NOT_ALLOWED');
    let kind;
    try {
      kind = classify(ex.body, limits);
    } catch (err) {
      const e = err as SwitchyardError;
      return ex.json(400, serialize(errorResponse(e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(ex.body, limits), e.toRpcError())));
    }
    // Accepted: 202 with an empty body; the reply goes out as a `message` event.
    ex.empty(202);
    const send = (m: RpcMessage) => s.stream.send({ event: 'message', data: serialize(m) });
    const msg = ex.body as RpcMessage;
    if (kind === 'request' && (msg as RpcRequest).method === 'initialize') {
      const req = msg as RpcRequest;
      if (s.core.initialized || s.core.clientInfo !== undefined) {
        send(errorResponse(req.id, new SwitchyardError('SWY_ERR_SESSION_ALREADY_INITIALIZED').toRpcError()));
        return;
      }
      const result = resultResponse(req.id, s.core.initialize(req.params ?? {}, [LEGACY_SSE_REVISION, ...STREAMABLE_REVISIONS]));
      deps.strict?.check('out', s.core.version, result, 'initialize');
      send(result);
      return;
    }
    const out: Outbound = { send, finish: (m) => void (m && send(m)) };
    void s.core.handle(msg, kind, out, typeof ex.headers.authorization === 'string' ? ex.headers.authorization : undefined);
  };

  return {
    id: '2024-11-05',
    revisions: REVISIONS,
    get sessionCount() {
      return sessions.size;
    },
    hasSession: (id) => sessions.has(id),
    async handle(ex) {
      if (ex.method === 'GET') return open(ex);
      if (ex.method === 'POST') return post(ex);
      refuse(ex, 'SWY_ERR_HTTP_METHOD_NOT_ALLOWED');
    },
    async close() {
      for (const s of [...sessions.values()]) s.stream.close();
    },
  };
}
