// One client on a message channel (the stdio front door): each message is assigned to its era
// by itself (a 2026-07-28 `_meta` ⇒ stateless; `initialize` ⇒ one initialize-era session), and
// served by that era's server. Transport-neutral: the channel only parses and writes lines.

import { SwitchyardError, toRpcError } from '../src/core/errors.js';
import type { CoreLog, MessagePeer, Sink } from '../src/core/exchange.js';
import type { Executor } from '../src/core/executor.js';
import type { Identity } from '../src/core/identity.js';
import type { Limits } from '../src/core/limits.js';
import {
  classify,
  errorResponse,
  idKey,
  idOf,
  resultResponse,
  type RpcMessage,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from '../src/core/message.js';
import type { MessageValidator } from '../src/core/strict.js';
import { INITIALIZE_REVISIONS } from './2025-03-26/codec.js';
import { openSession, runBatch, sessionlessBatchError } from './2025-03-26/server.js';
import { NO_SINK, sessionLimits, type ClientSession } from './2025-03-26/session.js';
import { hasModernMeta, type CacheDefaults } from './2026-07-28/codec.js';
import { createStatelessServer } from './2026-07-28/server.js';

/** What a message peer is built with. */
export interface MessagePeerOptions {
  executor: Executor;
  limits: Limits;
  log: CoreLog;
  strict?: MessageValidator;
  cache: CacheDefaults;
  /** The principal of the channel (stdio: the local user, from configuration); null when none. */
  identity: Identity | null;
  /** Writes one message or batch reply to the client; false when the channel is dead. */
  write: (msg: RpcMessage | RpcResponse[]) => boolean;
}

interface Entry {
  /** Set once the client cancelled it or the channel died: nothing more is written for it. */
  cancelled: boolean;
  /** Aborts a stateless request (session requests are cancelled through the session). */
  ac: AbortController | undefined;
}

/**
 * Creates the peer of one client.
 * @see 2025-11-25 basic/transports#stdio, basic/lifecycle; 2026-07-28 basic/patterns/cancellation
 *   (stdio: `notifications/cancelled`), basic/patterns/subscriptions
 */
export function createMessagePeer(opts: MessagePeerOptions): MessagePeer {
  const { executor, limits, log, write, identity } = opts;
  const stateless = createStatelessServer({ executor, limits, log, strict: opts.strict, cache: opts.cache, dialect: 'stdio' });
  const sessionDeps = { executor, limits: sessionLimits(limits), log, dialect: 'stdio', strict: opts.strict };
  const inflight = new Map<string, Entry>();
  const work = new Set<Promise<void>>();
  let session: ClientSession | undefined;
  let reading = true;
  let dead = false;

  const track = (p: Promise<void>) => {
    const q = p.catch((err: unknown) => log.error({ err }, 'internal error')).finally(() => work.delete(q));
    work.add(q);
  };

  const settle = async () => {
    while (work.size > 0) await Promise.allSettled([...work]);
  };

  /** A sink for one request: nothing is written once it was cancelled; its entry goes at its end. */
  const sinkFor = (key: string, entry: Entry, reply: (m: RpcResponse) => void): Sink => ({
    send(m) {
      if (dead || entry.cancelled) return false;
      // After EOF the client cannot answer a server request.
      if ('id' in m && 'method' in m && !reading) return false;
      return write(m);
    },
    finish(m) {
      if (inflight.get(key) === entry) inflight.delete(key);
      if (!m || entry.cancelled || dead) return;
      for (const one of Array.isArray(m) ? m : [m]) reply(one as RpcResponse);
    },
    streaming: true,
  });

  const open = (req: RpcRequest) => {
    try {
      // Every initialize-era revision defined stdio; the newest is the counter-offer.
      const opened = openSession(sessionDeps, req, INITIALIZE_REVISIONS, identity);
      session = opened.session;
      log.info({ sessionId: session.logId, dialect: 'stdio', version: session.version }, 'session opened');
      write(opened.response);
      session.attachNotifications((m) => void write(m));
    } catch (err) {
      write(errorResponse(req.id, toRpcError(err)));
    }
  };

  const onNotification = (n: RpcNotification) => {
    if (n.method === 'notifications/cancelled') {
      const rid = n.params?.requestId;
      if (typeof rid === 'string' || typeof rid === 'number' || typeof rid === 'bigint') {
        const e = inflight.get(idKey(rid));
        if (e) {
          // basic/utilities/cancellation: stop the work and send nothing more for it.
          e.cancelled = true;
          e.ac?.abort();
          inflight.delete(idKey(rid));
        }
      }
    }
    if (session) void session.handle(n, 'notification', NO_SINK);
  };

  const onMessage = (value: unknown, reply: (m: RpcResponse) => void) => {
    let kind;
    try {
      kind = classify(value, limits);
    } catch (err) {
      const e = err as SwitchyardError;
      log.info({ code: e.code }, 'request refused');
      return reply(errorResponse(e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(value, limits), e.toRpcError()));
    }
    if (kind === 'response') {
      if (session) void session.handle(value as RpcResponse, 'response', NO_SINK);
      else log.debug({ rpcId: (value as RpcResponse).id }, 'stdio response without a session dropped');
      return;
    }
    if (kind === 'notification') return onNotification(value as RpcNotification);
    const req = value as RpcRequest;
    const key = idKey(req.id);
    // basic/messages: ids are unique among the client's requests in flight.
    if (inflight.has(key)) return reply(errorResponse(req.id, new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID').toRpcError()));
    if (hasModernMeta(req.params)) {
      const entry: Entry = { cancelled: false, ac: new AbortController() };
      inflight.set(key, entry);
      return track(stateless.handle(req, { headers: undefined, identity, signal: entry.ac!.signal }, sinkFor(key, entry, reply)));
    }
    if (req.method === 'initialize' && !session) return open(req);
    if (session) {
      const entry: Entry = { cancelled: false, ac: undefined };
      inflight.set(key, entry);
      return track(session.handle(req, 'request', sinkFor(key, entry, reply), undefined, identity));
    }
    // basic/lifecycle: before initialize, only ping is answered.
    if (req.method === 'ping') reply(resultResponse(req.id, {}));
    else reply(errorResponse(req.id, new SwitchyardError('SWY_ERR_SESSION_NOT_INITIALIZED').toRpcError()));
  };

  const onBatch = (items: unknown[]) => {
    // JSON-RPC batches: only in a session that negotiated 2025-03-26 (2025-06-18 changelog: removed).
    // 2025-03-26 basic/lifecycle: the initialize request MUST NOT be part of a JSON-RPC batch.
    if (!session) return void write(errorResponse(null, sessionlessBatchError(items).toRpcError()));
    track(
      runBatch(session, items, limits, undefined, identity).then(
        (replies) => void (replies.length > 0 && write(replies)),
        (err: unknown) => void write(errorResponse(null, toRpcError(err))),
      ),
    );
  };

  let ending: Promise<void> | undefined;
  let sessionClosed = false;
  /** Closes the session, once, and logs `session closed` with `reason` (docs/operations.md, "Session lines"). */
  const closeSession = (reason: string, err?: SwitchyardError) => {
    if (!session || sessionClosed) return;
    sessionClosed = true;
    session.close(err);
    log.info({ sessionId: session.logId, dialect: 'stdio', reason }, 'session closed');
  };
  return {
    receive(value, batch) {
      if (dead) return;
      if (batch) onBatch(value as unknown[]);
      else onMessage(value, (m) => void write(m));
    },
    end(reason = 'eof') {
      ending ??= (async () => {
        reading = false;
        session?.failPending(new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: 'the client closed its input' }));
        await settle();
        stateless.close();
        closeSession(reason, new SwitchyardError('SWY_ERR_SESSION_ENDED', { detail: 'end of input' }));
      })();
      return ending;
    },
    async kill(reason = 'stream-closed') {
      dead = true;
      reading = false;
      for (const e of inflight.values()) {
        e.cancelled = true;
        e.ac?.abort();
      }
      inflight.clear();
      closeSession(reason);
      stateless.close();
      await settle();
    },
  };
}
