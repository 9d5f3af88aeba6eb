// The 2025-era Streamable HTTP connector: upstream sessions opened by the initialize handshake,
// each with its GET stream, requests on POSTs whose SSE answers resume after an early close.

import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { CallQueue, driveCall, upstreamStrict, type DriveTarget, type Respond } from '../../core/calls.js';
import { batchAllowed, isBatched, upstreamResult } from '../../core/upstream-answers.js';
import type { SessionEraClient } from '../../core/era.js';
import { SwitchyardError } from '../../core/errors.js';
import type { JsonObject } from '../../core/message.js';
import type { CoreNotification, Implementation, SubscriptionFilter } from '../../core/request.js';
import { NotificationHub, ResourceInterest, type Subscription } from '../../core/upstream.js';
import { askOwnSession, CallTable, deliverToClient, progressOf, routeUnlabelled, sentId, type BadMessage } from '../routing.js';
import { notResultWords, pump, sessionUnknown, type Resume } from './pump.js';
import { isClientSessionKey, poolKeyForLog, sessionKeyOf, SessionPool, SessionSubscribers, type PoolRef } from './pool.js';
import { authOf, outboundHeaders, postWithCredentials, type Connector, type ConnectorOptions, type CredentialRef } from './connector.js';
import {
  drain,
  headerOf,
  invalidEventOf,
  networkErrorText,
  postAndForget,
  postMessage,
  readText,
  sseAnswer,
  traceHeaders,
  type PostAnswer,
} from './transport.js';
import { urlForDisplay } from '../../core/url-text.js';
import { subscriptionLines, SubscriptionSync } from '../subscription-sync.js';
import { createControlReopener, listsMayHaveChanged } from './control.js';

/** One upstream session of the 2025 era. */
interface UpSession {
  key: string;
  id: string | undefined;
  revision: string;
  nextId: number;
  calls: CallTable;
  /** Where list changes and resource updates of this session go. */
  hub: () => NotificationHub | undefined;
  /** Headers the session's own requests carry (its client's Authorization, when forwarded). */
  auth: Record<string, string>;
  /** Whose upstream credential the session's own requests (GET stream, subscriptions, DELETE) carry: its client's, or the gateway's (undefined). */
  cred: CredentialRef | undefined;
  /** The session's resource subscriptions, one change at a time; the next call waits for those queued before it (`idle()`), so that the server sees them first. */
  subs: SubscriptionSync;
  /**
   * The gateway's own requests on this session waiting for their answer (subscriptions, one at a
   * time): a log or server request on the GET stream may be for one of them, so while there is
   * one neither goes to a call (`routeUnlabelled`'s `ownInFlight`).
   */
  own: number;
  /** The GET stream, once opened; aborted when the session ends. */
  get?: AbortController;
  /** Settles once the GET stream's first attempt answered (or failed). */
  getReady?: Promise<void>;
  ended: boolean;
  /** The client session a pooled session was opened for (undefined: the control session). */
  ref?: PoolRef;
}

/**
 * A 2025-era Streamable HTTP upstream. A control session (the gateway's own) gives the
 * description and serves gateway-wide subscriptions; client requests use one upstream session
 * per client session (`per-session`) or one for all (`shared`).
 * @param offer the revision `initialize` offers: a pinned one, `match-client` (the client's own
 *   revision when the era speaks it), or undefined for the newest.
 * @see 2025-11-25 basic/transports#streamable-http, #session-management, #resumability-and-redelivery
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE, SWY_ERR_UPSTREAM_PROTOCOL when the control session cannot open
 */
export async function createSessionsConnector(o: ConnectorOptions, era: SessionEraClient, offer?: string): Promise<Connector> {
  const { limits } = o;
  // Where initialize was answered: the configured URL, or where its same-origin 307/308
  // redirects led (a pinned era has no probe to find that first).
  let url = o.url;
  const globalHub = new NotificationHub();
  const subscribers = new SessionSubscribers(limits.maxSessions);
  /** A session's headers without the credential: the forwarded Authorization, Mcp-Session-Id, MCP-Protocol-Version. */
  const sessionPart = (s: UpSession): Record<string, string> => ({ ...s.auth, ...era.sessionHeaders({ id: s.id, revision: s.revision }) });
  /** Every header of a request on session `s`, the credential for `ref` (default: the session's own) included. */
  const headers = async (s: UpSession, ref: CredentialRef | undefined = s.cred): Promise<Record<string, string>> => ({
    ...(await outboundHeaders(o, ref)),
    ...sessionPart(s),
  });
  /** Strict mode: what the gateway sends on session `s`, checked against its revision (docs/strict.md, "Upstreams"). */
  const checkOut = (s: UpSession, msg: unknown): void => void o.strict?.check('to-upstream', s.revision, msg);
  /** POSTs a message whose answer nobody waits for on session `s`; an answer that cannot be read is counted all the same. */
  const forget = (s: UpSession, msg: unknown, ref?: CredentialRef, extra: Record<string, string> = {}): void => {
    checkOut(s, msg);
    void headers(s, ref ?? s.cred).then(
      (h) => postAndForget(url, msg, { ...h, ...extra }, limits, limits.upstreamRequestTimeoutMs, o.dispatcher, unparsableOn(s)),
      () => {},
    );
  };

  const offerFor = (ref: PoolRef | undefined): string | undefined => {
    if (offer !== 'match-client') return offer;
    return ref && era.revisions.includes(ref.protocolVersion) ? ref.protocolVersion : undefined;
  };

  /** Counts a message of session `s` that cannot be read (not JSON, as a stdio child's line; or over the bound). */
  const unparsableOn = (s: { calls: CallTable }) => (bad: BadMessage) => s.calls.faults.message(bad, o.log, o.name);

  /** POSTs a message of the gateway's own on session `s` (with its headers), bounded by upstreamRequestTimeoutMs. */
  const postOwn = async (s: UpSession, msg: JsonObject): Promise<PostAnswer> =>
    postMessage(url, msg, await headers(s), limits, AbortSignal.timeout(limits.upstreamRequestTimeoutMs), limits.upstreamRequestTimeoutMs, o.dispatcher);
  /** POSTs a request of the gateway's own on session `s` and waits for its answer (bounded). */
  const control = async (s: UpSession, method: string, params: JsonObject): Promise<void> => {
    const msg = { jsonrpc: '2.0', id: `c${++s.nextId}`, method, params };
    checkOut(s, msg);
    s.own++;
    try {
      await drain(await postOwn(s, msg), unparsableOn(s));
    } finally {
      s.own--;
    }
  };
  /**
   * Session `s`'s subscriptions, one change at a time, each URI's want (`wanted`) read at its turn
   * (docs/upstreams.md, "Resource subscriptions upstream"). A change still queued when the session
   * ends is not sent: the session's DELETE takes every subscription with it, and at shutdown the
   * Agent no longer takes requests.
   */
  const subscriptionsOf = (s: () => UpSession, wanted: (uri: string) => boolean): SubscriptionSync =>
    new SubscriptionSync({
      wanted,
      send: (uri, subscribe) => control(s(), subscribe ? 'resources/subscribe' : 'resources/unsubscribe', { uri }),
      // A URI may carry a credential (a signed URL's `?X-Amz-Signature=`, `?sig=`): shown as a
      // stdio child's arguments are, its userinfo and credential query values [redacted].
      ...subscriptionLines(o.log, o.name, networkErrorText),
    });

  /** Routes a message of session `s` that names no request (GET stream, or a stray one on a POST stream). */
  const routeOn = (s: UpSession, m: JsonObject) => {
    // A batch's requests and notifications only from a 2025-03-26 session (docs/upstreams.md, "Batches from an upstream").
    if (isBatched(m) && (typeof m.method !== 'string' || !batchAllowed(s.revision))) return s.calls.faults.batched(m, s.revision, o.log, o.name);
    // A response no POST stream carried its call's answer in (JSON-RPC 2.0 §5): a second one for
    // an id answered (the session's initialize) is told as such; a late one to a request sent
    // here is no fault.
    if (typeof m.method !== 'string') {
      if (s.calls.duplicate(m.id, o.log, o.name)) return;
      return s.calls.faults.stray(m, sentId(m.id, s.nextId), o.log, o.name);
    }
    const r = routeUnlabelled(m, s.calls, (p) => era.notificationParams(p), isClientSessionKey(s.key), upstreamStrict(o.strict, s.revision), s.own);
    switch (r.to) {
      case 'subscribers':
        return s.hub()?.emit(r.notification);
      case 'call':
        return r.call.queue.push(r.event);
      case 'client':
        return deliverToClient(r, o.log, o.name);
      case 'answer':
        return forget(s, { jsonrpc: '2.0', id: r.id, ...r.answer });
      case 'session':
        // The session's own client, on its own stream (the GET stream, the HTTP+SSE stream).
        return askOwnSession(r, s.calls, subscribers.reachOf(s.key), (id, answer) => forget(s, { jsonrpc: '2.0', id, ...answer }));
      case 'done':
        return;
      case 'nobody':
        return o.log.debug({ upstream: o.name, method: r.method, inFlight: s.calls.methods() }, 'upstream message has no client');
    }
  };

  const open = async (
    key: string,
    ref: PoolRef | undefined,
    capabilities: JsonObject,
    info: Implementation,
    auth: Record<string, string>,
    cred: CredentialRef | undefined,
  ): Promise<{ s: UpSession; init: JsonObject }> => {
    const hello = era.initialize({ revision: offerFor(ref), capabilities, clientInfo: info });
    const a = await postWithCredentials(o, cred, (h) =>
      postMessage(
        url,
        { jsonrpc: '2.0', id: 0, ...hello },
        { ...h, ...auth },
        limits,
        AbortSignal.timeout(limits.upstreamRequestTimeoutMs),
        limits.upstreamRequestTimeoutMs,
        o.dispatcher,
        true,
      ),
    );
    if (a.url) url = a.url;
    const q = new CallQueue();
    // The session's table before the session: an initialize answer that is not JSON is counted too.
    const calls = new CallTable();
    await pump(a, 0, q, { other: () => {}, limits, method: 'initialize', unparsable: unparsableOn({ calls }) });
    const ev = await q.next(AbortSignal.timeout(limits.upstreamRequestTimeoutMs));
    if (ev.kind !== 'result')
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', {
        detail: `initialize failed: ${notResultWords(ev)}`,
        operatorDetail: `${urlForDisplay(url)}: initialize failed: ${JSON.stringify(ev)}`,
      });
    const init = upstreamResult('initialize', ev.result);
    const s: UpSession = {
      key,
      id: headerOf(a.headers, 'mcp-session-id'),
      revision: era.negotiated(init),
      nextId: 0,
      calls,
      hub: key === 'control' ? () => globalHub : () => subscribers.hubOf(key),
      auth,
      cred,
      // What the session's subscribers want: the control session's are gateway-wide.
      subs: subscriptionsOf(() => s, key === 'control' ? (uri) => controlInterest.has(uri) : (uri) => subscribers.wants(key, uri)),
      own: 0,
      ended: false,
      ref,
    };
    // Its answer came: the same reply again (on the GET stream) is a second response for id 0,
    // not an unknown id (docs/upstreams.md, "Second responses").
    s.calls.remember(0, 'initialize');
    const initialized = { jsonrpc: '2.0', ...era.initialized() };
    checkOut(s, initialized);
    await postOwn(s, initialized)
      .then((a) => drain(a, unparsableOn(s)))
      .catch(() => {});
    // What this client session subscribed to before (or while) its upstream session opened.
    s.subs.resync(subscribers.uris(key));
    return { s, init };
  };

  const end = (s: UpSession) => {
    s.ended = true;
    s.subs.stop();
    s.get?.abort();
    s.calls.failAll(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'upstream session ended' }));
    // basic/transports#session-management: end the upstream session the gateway no longer needs.
    if (s.id)
      headers(s)
        .then((h) => request(url, { dispatcher: o.dispatcher, method: 'DELETE', headers: h, headersTimeout: limits.upstreamRequestTimeoutMs }))
        .then((r) => r.body.dump())
        .catch(() => {});
  };

  /**
   * Reads (and so consumes) a refused GET stream's answer: true when it says the session is gone
   * ({@link sessionUnknown}, as the call path reads a POST's answer).
   */
  const sessionGone = async (r: Dispatcher.ResponseData): Promise<boolean> => {
    if (r.statusCode !== 400) {
      await r.body.dump();
      return r.statusCode === 404;
    }
    try {
      const json: unknown = JSON.parse(await readText(r.body, limits.maxUpstreamMessageBytes));
      return sessionUnknown({ status: 400, headers: {}, kind: 'json', json });
    } catch {
      return false;
    }
  };

  const gate = o.streams;
  let saidFull = false;
  /** Said once per upstream (warn): its streams hold every place, further sessions wait for one. */
  const streamsFull = () => {
    if (saidFull) return;
    saidFull = true;
    o.log.warn(
      { upstream: o.name, streams: gate?.max, maxUpstreamConnections: limits.maxUpstreamConnections },
      'upstream GET streams at their bound: further sessions wait for one, and until then get no server messages outside their calls',
    );
  };

  /**
   * Keeps a session's GET stream open, reconnecting with backoff and with Last-Event-ID after
   * the server's `retry`, and routes what it carries; waits for a place among the upstream's
   * streams first (`o.streams`). The promise resolves once the first GET answered (its headers),
   * failed, found no place, or `upstreamGetStreamWaitMs` passed, whichever comes first: a call
   * waits for it, but not for a server slow to answer the GET (the GET goes on opening).
   * @see 2025-11-25 basic/transports#listening-for-messages-from-the-server, #resumability-and-redelivery
   */
  const openGet = (s: UpSession): Promise<void> => {
    if (s.getReady) return s.getReady;
    const ac = (s.get = new AbortController());
    let ready!: () => void;
    s.getReady = new Promise<void>((r) => (ready = r));
    // The spec orders nothing between a session's GET and its POSTs (two connections): only the
    // GET's headers say the server holds the stream. Waiting for them is worth a short bound,
    // not the GET's own headers timeout (upstreamRequestTimeoutMs) on every first call.
    const waited = setTimeout(() => ready(), limits.upstreamGetStreamWaitMs);
    waited.unref();
    void s.getReady.then(() => clearTimeout(waited));
    void (async () => {
      let lastEventId: string | undefined;
      let backoff = limits.upstreamBackoffMinMs;
      while (!ac.signal.aborted && !s.ended) {
        let wait = backoff;
        // A place among the upstream's streams first: when they are all open, this session goes
        // on without one (its calls do not wait) until a place frees.
        if (gate && !gate.tryTake()) {
          ready();
          streamsFull();
          try {
            await gate.take(ac.signal);
          } catch {
            break;
          }
        }
        let answer: ReturnType<typeof sseAnswer> | undefined;
        try {
          const r = await request(url, {
            dispatcher: o.dispatcher,
            method: 'GET',
            headers: { ...(await headers(s)), accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
            signal: ac.signal,
            headersTimeout: limits.upstreamRequestTimeoutMs,
            bodyTimeout: 0,
          });
          ready();
          // A server that offers no GET stream says 405 (basic/transports#listening-for-messages-from-the-server).
          if (r.statusCode === 405) return void (await r.body.dump());
          if (r.statusCode !== 200) {
            // The server no longer knows the session (it restarted, or expired it): asking again
            // on it never succeeds. Reported, and this stream ends with the session.
            if (await sessionGone(r)) return sessionLost(s);
            // A refused credential is fetched again on the next attempt.
            if (r.statusCode === 401) o.credentials?.invalidate(s.cred);
            backoff = Math.min(backoff * 2, limits.upstreamBackoffMaxMs);
          } else {
            answer = sseAnswer(r, limits);
            for await (const m of answer.messages!) {
              routeOn(s, m);
              lastEventId = answer.lastEventId ?? lastEventId;
            }
            lastEventId = answer.lastEventId ?? lastEventId;
            backoff = limits.upstreamBackoffMinMs;
            wait = answer.retryMs ?? backoff;
          }
        } catch (err) {
          // An event that is not JSON ends this stream (counted); the next attempt resumes after it,
          // its id included (recorded before its data was parsed): a server that replays from an
          // earlier id would otherwise send it, and have it counted, on every reconnect.
          lastEventId = answer?.lastEventId ?? lastEventId;
          const bad = invalidEventOf(err);
          if (bad !== undefined) unparsableOn(s)(bad);
          backoff = Math.min(backoff * 2, limits.upstreamBackoffMaxMs);
        } finally {
          gate?.give();
        }
        ready();
        if (!ac.signal.aborted) await sleep(Math.min(wait, limits.upstreamBackoffMaxMs), undefined, { signal: ac.signal, ref: false }).catch(() => {});
      }
    })();
    return s.getReady;
  };

  const first = await open('control', undefined, era.sharedCapabilities, o.clientInfo, {}, undefined);
  /** The gateway's own session; replaced by a new one when the upstream loses it (`sessionLost`). */
  let controlSession = first.s;
  let closed = false;
  const reopen = createControlReopener({
    log: o.log,
    name: o.name,
    limits,
    open: async () => (await open('control', undefined, era.sharedCapabilities, o.clientInfo, {}, undefined)).s,
    reopened: (s) => {
      controlSession = s;
      s.subs.resync(controlInterest.uris());
      void openGet(s);
    },
    end,
    hub: () => globalHub,
  });

  /**
   * A session the upstream no longer knows, found by its GET stream. A client's session leaves
   * the pool (ended: DELETE, its calls failed), so that its next call or subscription opens a new
   * one. The control session is replaced at once, with backoff while the upstream cannot open
   * one: its resource subscriptions are sent again and its GET stream reopened, and since the
   * upstream forgot what it had told us, gateway-wide subscribers (the list cache among them)
   * are told every list may have changed.
   * @see 2025-11-25 basic/transports#session-management (404: start a new session)
   */
  const sessionLost = (s: UpSession): void => {
    if (s.ended || closed) return;
    if (s === controlSession) {
      end(s);
      return reopen.lost();
    }
    o.log.info({ upstream: o.name, session: poolKeyForLog(s.key) }, 'upstream session lost: opening a new one');
    const held = pool.peek(s.key);
    if (!held) return end(s);
    void held.then(
      (x) => {
        if (x !== s) return;
        pool.drop(s.key, held);
        replaced(s);
      },
      () => {},
    );
  };
  /**
   * After a client's pooled session `s` the upstream lost has left the pool (found by its GET
   * stream or by a call's answer): if its client subscribed (resources, list changes), a new
   * session at once, which subscribes again and opens its GET stream, and the subscribers are told
   * every list may have changed meanwhile, as the control session's are.
   */
  const replaced = (s: UpSession): void => {
    const hub = subscribers.hubOf(s.key);
    if (!hub || !s.ref || closed) return;
    const failed = (err: unknown) => o.log.warn({ upstream: o.name, err: networkErrorText(err) }, 'upstream session did not reopen');
    try {
      // Not refused (SWY_ERR_SESSION_LIMIT) in practice: this key has subscribers and is not in
      // the pool, so at most maxSessions - 1 sessions there have any, and a full pool has one
      // without to end.
      pool
        .get(s.ref)
        .session.then((next) => openGet(next))
        .catch(failed);
    } catch (err) {
      failed(err);
    }
    listsMayHaveChanged(hub);
  };
  const desc = era.describe(first.init, o.name);
  const pool = new SessionPool<UpSession>({
    max: limits.maxSessions,
    isolation: o.isolation,
    open: async (key, ref) => {
      const shared = key === 'shared';
      return (
        await open(
          key,
          ref,
          shared ? era.sharedCapabilities : ref.clientCapabilities,
          (shared ? undefined : ref.clientInfo) ?? o.clientInfo,
          shared ? {} : authOf(o, ref),
          shared ? undefined : ref,
        )
      ).s;
    },
    end,
    // A session with subscribers stays: only its client's end, or the upstream losing it, ends it.
    subscribers,
  });
  // Gateway-wide subscribers are served by the control session, and their URIs subscribed there.
  const controlInterest = new ResourceInterest(
    (uri) => controlSession.subs.changed(uri),
    (uri) => controlSession.subs.changed(uri),
  );
  const subscribe = (filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription => {
    void openGet(controlSession);
    const sub = globalHub.add(filter, sink);
    const drop = controlInterest.add(filter.resourceSubscriptions ?? []);
    return {
      close() {
        sub.close();
        drop();
      },
    };
  };

  return {
    revision: controlSession.revision,
    describe: () => desc,
    async call(ctx) {
      for (let attempt = 0; ; attempt++) {
        const { key, session } = pool.get(ctx);
        const s = await session;
        // The GET stream opens before the session's first call: a server that sends a request
        // unrelated to any POST drops it when no GET stream is open yet. A server slow to answer
        // the GET holds the call at most upstreamGetStreamWaitMs.
        await openGet(s);
        await s.subs.idle();
        // A call whose client gave up while it waited (cancelled, or past its deadline: the GET
        // stream's headers may take up to upstreamGetStreamWaitMs) is not sent: the client was
        // answered already, and may call again.
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const id = ++s.nextId;
        const ac = new AbortController();
        const onAbort = () => ac.abort(ctx.signal.reason);
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        // Registered before the POST: the server may send the call's requests on the GET stream
        // before the POST's response headers arrive.
        const q = new CallQueue();
        s.calls.add(id, { queue: q, ctx });
        // The call carries its own caller's credential; the session's headers stay the session's.
        const callPart = { ...sessionPart(s), ...authOf(o, ctx), ...traceHeaders(ctx) };
        const body = { jsonrpc: '2.0', id, method: ctx.method, params: era.requestParams(ctx, ctx.progressToken !== undefined ? id : undefined) };
        checkOut(s, body);
        try {
          let a: PostAnswer;
          try {
            a = await postWithCredentials(o, ctx, (h) =>
              postMessage(url, body, { ...h, ...callPart }, limits, ac.signal, limits.requestTimeoutMs, o.dispatcher),
            );
          } catch (err) {
            s.calls.delete(id);
            throw err;
          }
          // basic/transports#session-management: a 404 on a session means start over with a new
          // initialize; done once, unseen by the client. So does a 400 whose error names no
          // request: servers built like the SDK's documented example (server-everything among
          // them) answer an unknown session so ("No valid session ID provided"), after a restart
          // too, and refused the request before reading it, so sending it again is safe.
          if (sessionUnknown(a) && s.id && attempt === 0) {
            s.calls.delete(id);
            await drain(a).catch(() => {});
            if (pool.peek(key) === session) {
              pool.drop(key, session);
              // Its subscribers (a 2025 client's GET stream, a 2026-07-28 listen on this pooled
              // session) learn of the loss here when a call finds it before the GET stream does.
              replaced(s);
            }
            continue;
          }
          const resume: Resume = async (last) => {
            const r = await request(url, {
              dispatcher: o.dispatcher,
              method: 'GET',
              headers: { ...(await outboundHeaders(o, ctx)), ...callPart, accept: 'text/event-stream', 'last-event-id': last },
              signal: ac.signal,
              headersTimeout: limits.upstreamRequestTimeoutMs,
              bodyTimeout: 0,
            });
            if (r.statusCode !== 200 || !String(r.headers['content-type'] ?? '').startsWith('text/event-stream')) {
              await r.body.dump();
              return undefined;
            }
            return sseAnswer(r, limits);
          };
          void pump(a, id, q, {
            // Taken out of the table and remembered as answered the moment its response comes:
            // the same response again (on the GET stream) is then a second response, not a late
            // one (docs/upstreams.md, "Second responses").
            answered: () => void s.calls.answer(id),
            other: (m) => routeOn(s, m),
            batched: (m) => routeOn(s, m),
            unparsable: unparsableOn(s),
            resume,
            limits,
            signal: ac.signal,
            method: ctx.method,
            revision: s.revision,
          });
          const respond: Respond = (rid, answer) => forget(s, { jsonrpc: '2.0', id: rid, ...answer }, ctx, authOf(o, ctx));
          const target: DriveTarget = {
            queue: q,
            strict: upstreamStrict(o.strict, s.revision),
            respond,
            finish: () => s.calls.delete(id),
            elicitations: s.calls.elicitations,
            cancel: (reason) => {
              s.calls.delete(id);
              // basic/utilities/cancellation: tell the server, then stop reading.
              forget(s, { jsonrpc: '2.0', ...era.cancelled(id, reason) }, ctx, authOf(o, ctx));
              ac.abort();
            },
          };
          try {
            return await driveCall(target, ctx, o.held, progressOf);
          } catch (err) {
            s.calls.delete(id);
            throw err;
          }
        } finally {
          ctx.signal.removeEventListener('abort', onAbort);
        }
      }
    },
    subscribe,
    subscribeSession(ref, filter, sink) {
      // One session for every client: its subscribers are everyone's.
      if (o.isolation === 'shared') return subscribe(filter, sink);
      // Refused before its session opens: one that opened would end another to make room.
      subscribers.admit(sessionKeyOf(ref, o.isolation));
      const { key, session } = pool.get(ref);
      const sub = subscribers.add(
        key,
        filter,
        sink,
        (uri) => void session.then((s) => s.subs.changed(uri)).catch(() => {}),
        (uri) => void session.then((s) => s.subs.changed(uri)).catch(() => {}),
        ref,
      );
      session.then((s) => openGet(s)).catch(() => {});
      return sub;
    },
    forwardNotification(sessionKey, n) {
      // Only to the client session's own upstream session, and only one already open or opening:
      // a session opened later asks what it needs then (client/roots: roots/list).
      pool.withOwnSession(sessionKey, (s) => {
        if (!s.ended) forget(s, { jsonrpc: '2.0', method: n.method, params: n.params });
      });
    },
    release(sessionKey) {
      pool.release(sessionKey);
      subscribers.drop(`s:${sessionKey}`);
      // One session for every client: what it keeps for this one goes.
      void pool.peek('shared')?.then(
        (s) => s.calls.elicitations.dropSession(sessionKey),
        () => {},
      );
    },
    async close() {
      closed = true;
      reopen.close();
      pool.clear();
      end(controlSession);
    },
  };
}
