// The one table for upstream messages that name no request of ours (a stdio child's stdout, the
// 2025 GET stream, the 2024-11-05 stream): list changes and resource updates go to subscribers,
// progress to the call that owns the token, a log message to the one request in flight when that
// request is a call that asked for logs (else, on a connection of one client session, to that
// session's stream),
// a server request to the one request in flight when it is a call that can take input (else, a `roots/list`, sampling or
// elicitation request on a connection of one client session, to that session's stream; any other
// is refused), the cancellation of such a request to where it went, and a URL-mode elicitation's
// completion to the client that accepted that elicitation.

import {
  ElicitationRoutes,
  ServerCancelled,
  trackElicitation,
  type CallEvent,
  type CallQueue,
  type NotifyClient,
  type Respond,
  type UpstreamStrict,
} from '../core/calls.js';
import { SwitchyardError, toRpcError } from '../core/errors.js';
import type { SessionReach } from '../core/upstream.js';

export { progressOf } from '../core/calls.js';
import type { RpcErrorObject } from '../core/errors.js';
import { idKey, type JsonObject, type RequestId } from '../core/message.js';
import type { CoreNotification, RequestContext } from '../core/request.js';
import type { CoreLog } from '../core/exchange.js';
import { askWithoutTask, INPUT_METHODS } from '../core/gate.js';
import { sampledLine } from '../log/sample.js';
import { Lines } from '../log/lines.js';
import { channels, type UpstreamFaultKind } from '../core/diagnostics.js';

/** A client call in flight on one upstream connection, with the queue its events go to. */
export interface LiveCall {
  queue: CallQueue;
  ctx: RequestContext;
}

/** Notifications that go to subscribers rather than to a call. */
export const SUBSCRIBER_NOTIFICATIONS: ReadonlySet<string> = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

/** Answered request ids a connection remembers, to tell a second response for one id (CallTable.duplicate). */
export const MAX_ANSWERED_REMEMBERED = 256;
/** Protocol faults of one kind (a second response for one id, a dropped batch) logged one by one per connection before only every 1,000th is. */
export const FAULTS_LOGGED = 10;

/**
 * True when response id `id` names a request Switchyard may have sent on a connection whose ids
 * come from one counter now at `nextId`: a number from 1 to `nextId`, or `c<n>` (a request of the
 * gateway's own on an HTTP session) with `n` from 1 to `nextId`. False for any other id: the
 * upstream made it up, or changed its type (JSON-RPC 2.0 §5: a response's id is the request's).
 */
export function sentId(id: unknown, nextId: number): boolean {
  if (typeof id === 'number') return Number.isInteger(id) && id >= 1 && id <= nextId;
  if (typeof id !== 'string' || !/^c[1-9][0-9]{0,15}$/.test(id)) return false;
  return Number(id.slice(1)) <= nextId;
}

/**
 * A message an upstream sent that is no message Switchyard can read: bytes that are not JSON
 * (`excerpt`: their first 200 characters, for the log) or an SSE event longer than the bound
 * (`overChars`: `maxUpstreamMessageBytes`, which the SSE parser counts in characters). Its reader
 * hands it to {@link UpstreamFaults.message}.
 */
export type BadMessage = { excerpt: string } | { overChars: number };

/**
 * The protocol faults one upstream connection's upstream commits that no call sees, counted by
 * kind: each is published on the `upstreamFault` diagnostics channel (the metric
 * `switchyard_upstream_protocol_faults_total`, docs/operations.md), and its log line is limited
 * per connection and kind to the first {@link FAULTS_LOGGED}, then every 1,000th (`sampledLine`),
 * each line with the count so far. Bounded: one number per kind.
 */
export class UpstreamFaults {
  private readonly counts = new Map<UpstreamFaultKind, number>();

  /**
   * Counts one fault of `kind` of upstream `upstream` (its config name) and publishes it. Returns
   * the count on this connection when the fault's line is to be logged, else 0.
   */
  count(kind: UpstreamFaultKind, upstream: string): number {
    const n = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, n);
    if (channels.upstreamFault.hasSubscribers) channels.upstreamFault.publish({ upstream, kind });
    return sampledLine(n, FAULTS_LOGGED, 1000) ? n : 0;
  }

  /**
   * A message of a batch (a JSON array) that nothing takes: a request or notification from an
   * upstream whose revision has no batches (`batch_dropped`, at warn: `upstream batch dropped`,
   * with `upstream`, `revision` (the one it speaks; `unknown` before its handshake settled one),
   * `method` and `count`, the messages dropped on this connection so far), or a response that
   * answers no call in flight (`batched_response`, at debug).
   * @see 2025-06-18 changelog (JSON-RPC batching removed); JSON-RPC 2.0 §6 (a batch answers only a batch)
   */
  batched(m: JsonObject, revision: string | undefined, log: CoreLog, upstream: string): void {
    if (typeof m.method === 'string') {
      const n = this.count('batch_dropped', upstream);
      if (n > 0) log.warn({ upstream, revision: revision ?? 'unknown', method: m.method, count: n }, 'upstream batch dropped');
      return;
    }
    const n = this.count('batched_response', upstream);
    if (n > 0) log.debug({ upstream, id: idText(m.id), count: n }, 'upstream batched response answers no call');
  }

  /**
   * Bytes the upstream sent as a message that are not JSON (or JSON past the message bounds): a
   * stdio line, a Streamable HTTP JSON body, the data of an SSE event on a POST's answer, a GET
   * stream or the HTTP+SSE stream, an HTTP+SSE POST's answer body that starts as JSON, the answer
   * to a message POSTed with no answer awaited. Counted as `unparsable` and said at error, `upstream sent an
   * invalid message`, with `upstream`, `excerpt` (`excerpt()`, called only for a line logged: its
   * first 200 characters or bytes) and `count`. What becomes of the message (a line skipped, a
   * call failed, a stream ended) is its reader's to decide; every reader counts here.
   */
  unparsable(excerpt: () => string, log: CoreLog, upstream: string): void {
    const n = this.count('unparsable', upstream);
    if (n > 0) log.error({ upstream, excerpt: excerpt(), count: n }, Lines.upstreamBadMessage);
  }

  /**
   * An SSE event longer than `maxChars` (`maxUpstreamMessageBytes`) characters, which the parser
   * stopped buffering: counted as `oversize` (its own kind: the cure may be the operator's bound,
   * not the upstream) and said at error, `upstream sent an invalid message`, with `upstream`,
   * `maxBytes` (the bound, as a stdio line's over it is said) and `count`. What becomes of it (a
   * call failed, a stream ended) is its reader's, as for {@link unparsable}.
   */
  oversize(maxChars: number, log: CoreLog, upstream: string): void {
    const n = this.count('oversize', upstream);
    if (n > 0) log.error({ upstream, maxBytes: maxChars, count: n }, Lines.upstreamBadMessage);
  }

  /** Counts and says `bad` as {@link unparsable} or {@link oversize}, whichever it is. */
  message(bad: BadMessage, log: CoreLog, upstream: string): void {
    if ('overChars' in bad) this.oversize(bad.overChars, log, upstream);
    else this.unparsable(() => bad.excerpt, log, upstream);
  }

  /**
   * A response outside a batch that answers no call in flight and is no second response
   * ({@link CallTable.duplicate} first): a late answer to a request Switchyard sent (`sent`
   * true: a cancelled or timed-out call, a request of its own) is no fault; any other id is
   * `unknown_id`. Both are said at debug, `upstream answer matches no request in flight`.
   */
  stray(m: JsonObject, sent: boolean, log: CoreLog, upstream: string): void {
    if (!sent) this.count('unknown_id', upstream);
    log.debug({ upstream, id: idText(m.id) }, 'upstream answer matches no request in flight');
  }
}

/** A response id as logs give it (`idKey`: its type kept, `n:4`), or `''` for one that is no id. */
function idText(id: unknown): string {
  return typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint' ? idKey(id) : '';
}

/** The error a server request gets when no client can take it. */
export const UNROUTABLE: RpcErrorObject = Object.freeze({ code: -32603, message: 'Switchyard cannot route this request to a client' });

/**
 * Server requests a connection of one client session may send that client outside any call: the
 * client features a server may request (2025-11-25 client/roots, client/sampling,
 * client/elicitation), which the 2025 revisions let it send on the GET stream unrelated to any
 * client request (basic/transports#listening-for-messages-from-the-server; 2024-11-05 has one
 * stream for all). Whether the client can take one (its revision has the method, it declared the
 * capability and mode, it has a stream open) is its session's `ask` to decide. `ping` is
 * answered at once; anything else is refused, as on a shared connection. From 2026-07-28 on a
 * server sends none of these outside a request (SEP-2260, basic/patterns/mrtr), and such a client
 * has no stream for them: its pooled connection is never one client session's.
 */
export const OUTSIDE_CALL_METHODS: ReadonlySet<string> = new Set(['roots/list', 'sampling/createMessage', 'elicitation/create']);

/**
 * The client calls in flight on one upstream connection (a stdio child, a 2025 session, an
 * HTTP+SSE session), by our request id, which is also the progress token the upstream sees. Keyed
 * by `idKey`, which keeps the id's type: a response or progress token `"1"` does not name our
 * request `1` (JSON-RPC 2.0 §5: a response's id MUST be the same as the request's).
 */
export class CallTable {
  private readonly calls = new Map<string, LiveCall>();
  /** Where the completion of each URL-mode elicitation sent on this connection goes. */
  readonly elicitations = new ElicitationRoutes();

  /** Registers a call under our request id. */
  add(id: RequestId, call: LiveCall): void {
    this.calls.set(idKey(id), call);
  }

  /** The call with our id (or progress token) `id`, of the same type and value (`"1"` is not `1`). */
  get(id: unknown): LiveCall | undefined {
    return typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint' ? this.calls.get(idKey(id)) : undefined;
  }

  /** Forgets a call; true when it was there. */
  delete(id: RequestId): boolean {
    return this.calls.delete(idKey(id));
  }

  /**
   * Takes the call with our id `id` out of the table as answered, its response just come, and
   * remembers the id ({@link remember}); undefined when no such call is in flight. Taken out at
   * once, not when its caller reads the answer: a second response for the id, in the same chunk
   * or later, then finds no call and is told as such ({@link duplicate}).
   */
  answer(id: unknown): LiveCall | undefined {
    const c = this.get(id);
    if (c === undefined) return undefined;
    this.calls.delete(idKey(id as RequestId));
    this.remember(id as RequestId, c.ctx.method);
    return c;
  }

  /** Ids of the last {@link MAX_ANSWERED_REMEMBERED} requests answered on this connection (`idKey`), with their methods. */
  private readonly answered = new Map<string, string>();
  /** The faults of this connection's upstream that no call sees, counted and said (duplicates among them). */
  readonly faults = new UpstreamFaults();

  /** Remembers that request `id` (of method `method`) got its response; the oldest of {@link MAX_ANSWERED_REMEMBERED} is forgotten. */
  remember(id: RequestId, method: string): void {
    const key = idKey(id);
    if (this.answered.size >= MAX_ANSWERED_REMEMBERED && !this.answered.has(key)) this.answered.delete(this.answered.keys().next().value!);
    this.answered.set(key, method);
  }

  /**
   * True when response id `id` names a request already answered on this connection (one of the
   * last {@link MAX_ANSWERED_REMEMBERED}): a second response for one id, which JSON-RPC does not
   * allow. Nothing is done with it (the client has the first); it is logged at warn, `upstream
   * sent a second response for one id`, with the upstream, the id (`idKey`), the method and the
   * count on this connection: the first {@link FAULTS_LOGGED} each, then every 1,000th
   * ({@link UpstreamFaults}), so that a flood of them is said without a line each; counted as
   * `duplicate_response`. False for any other
   * id (a late answer to a cancelled or timed-out call, a wrong one), left to the caller.
   * @see JSON-RPC 2.0 §4 (the server MUST reply with a Response, one per request), §5
   */
  duplicate(id: unknown, log: CoreLog, upstream: string): boolean {
    if (typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') return false;
    const key = idKey(id);
    const method = this.answered.get(key);
    if (method === undefined) return false;
    const n = this.faults.count('duplicate_response', upstream);
    if (n > 0) log.warn({ upstream, id: key, method, count: n }, 'upstream sent a second response for one id');
    return true;
  }

  /** Calls in flight. */
  get size(): number {
    return this.calls.size;
  }

  /** The methods in flight, for logs. */
  methods(): string[] {
    return [...this.calls.values()].map((c) => c.ctx.method);
  }

  /** The call whose server request `id` is open (sent to its client, or queued for it). */
  asking(id: unknown): LiveCall | undefined {
    if (typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') return undefined;
    for (const c of this.calls.values()) if (c.queue.isOpen(id)) return c;
    return undefined;
  }

  /**
   * The call that is the one request in flight on the connection: the table's only call, when
   * `ownInFlight` (the gateway's own requests in flight, which the table does not hold) is 0.
   * Messages that name no request go to it or to no call: among several, an owner is never guessed.
   */
  only(ownInFlight = 0): LiveCall | undefined {
    if (ownInFlight !== 0 || this.calls.size !== 1) return undefined;
    for (const c of this.calls.values()) return c;
    return undefined;
  }

  /**
   * Server requests sent to the connection's one client session outside any call, by the
   * upstream's id (`idKey`: 1 and "1" are different ids), with what takes each back from the client. Made
   * with its first entry; bounded by the client session's own bound on the server requests it
   * has not answered (SWY_ERR_SESSION_PENDING_LIMIT refuses the rest at once).
   */
  private outside: Map<string, AbortController> | undefined;

  /** Records server request `id` as sent to the client outside a call; false when one with that id is still open. */
  openOutside(id: RequestId, ac: AbortController): boolean {
    const key = idKey(id);
    if (this.outside?.has(key)) return false;
    (this.outside ??= new Map()).set(key, ac);
    return true;
  }

  /** Forgets server request `id` once answered; false when it was taken back meanwhile (no answer goes upstream then). */
  closeOutside(id: RequestId, ac: AbortController): boolean {
    const key = idKey(id);
    if (this.outside?.get(key) !== ac) return false;
    this.outside.delete(key);
    if (this.outside.size === 0) this.outside = undefined;
    return true;
  }

  /**
   * Takes back server request `id` sent outside a call: the upstream cancelled it with `reason`.
   * The client is told (with the id it saw) by the ask's abort; no answer goes upstream.
   * @returns false when no such request is open.
   * @see 2025-11-25 basic/utilities/cancellation
   */
  withdrawOutside(id: unknown, reason: string | undefined): boolean {
    if (typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') return false;
    const key = idKey(id);
    const ac = this.outside?.get(key);
    if (!ac) return false;
    this.outside!.delete(key);
    if (this.outside!.size === 0) this.outside = undefined;
    ac.abort(new ServerCancelled(reason));
    return true;
  }

  /** Fails every call (the connection is gone) and forgets them, and takes back what was sent outside calls. */
  failAll(err: unknown): void {
    const all = [...this.calls.values()];
    this.calls.clear();
    for (const c of all) c.queue.fail(err);
    const outside = this.outside;
    this.outside = undefined;
    if (outside) for (const ac of outside.values()) ac.abort(err);
  }
}

/** What to do with one message that names no request of ours. */
export type Route =
  /** Deliver to subscribers (list changes, resource updates), params already cleaned by the era client. */
  | { to: 'subscribers'; notification: CoreNotification }
  /** Push onto a call's queue. */
  | { to: 'call'; call: LiveCall; event: CallEvent }
  /** Deliver to the one client session a server request concerned (it carries it, or drops it). */
  | { to: 'client'; notify: NotifyClient; notification: CoreNotification }
  /** Answer the server's request directly. */
  | { to: 'answer'; id: RequestId; answer: { result: JsonObject } | { error: RpcErrorObject } }
  /** Send the server's request to the connection's one client session, outside any call ({@link askOwnSession}). */
  | { to: 'session'; id: RequestId; method: string; params: JsonObject }
  /** Nothing left to do: the message was applied (an upstream's cancellation of a request sent outside a call). */
  | { to: 'done' }
  /** Nobody takes it (a log with no single owner on a shared connection, an unknown notification). */
  | { to: 'nobody'; method: string };

/**
 * Decides where one upstream message with a `method` goes (responses are matched by id before
 * this). Over stdio, on a 2025 GET stream and on an HTTP+SSE stream, log messages and server
 * requests name no originating request: they are routed only when exactly one call could own
 * them, never guessed.
 * @param clean the era client's `notificationParams`.
 * @param ownSession true when the connection serves exactly one client session (a per-session
 *   upstream session of the stateful HTTP eras): a log message no call owns then goes to that
 *   session's subscribers (its notification stream), where otherwise it goes nowhere, and a
 *   `roots/list`, `sampling/createMessage` or `elicitation/create` no call owns goes to that
 *   session ({@link OUTSIDE_CALL_METHODS}), where otherwise it is refused.
 * @param strict strict mode on this connection (the revision it speaks): the message is checked
 *   against that revision's schema, direction `from-upstream`, unless it goes to a call as an
 *   event that call's driver checks; a violation is only logged (docs/strict.md, "Upstreams").
 *   Absent: not checked (strict mode off, or no revision settled yet).
 * @param ownInFlight requests of the gateway's own in flight on the connection, not in `calls`
 *   (a subscription, a list for annotations; pings left out), any of which a log message or a
 *   server request may have come from: while there is one, neither goes to a call.
 * @see 2025-11-25 basic/transports#listening-for-messages-from-the-server; basic/utilities/progress; basic/utilities/ping;
 *   server/utilities/logging; client/elicitation#url-mode; basic/utilities/cancellation
 */
export function routeUnlabelled(
  m: JsonObject,
  calls: CallTable,
  clean: (params: JsonObject) => JsonObject,
  ownSession = false,
  strict?: UpstreamStrict,
  ownInFlight = 0,
): Route {
  const r = routeOf(m, calls, clean, ownSession, ownInFlight);
  // Strict mode: a message outside a call is checked here, where every connector routes it; one
  // that goes to a call as its progress, log or server request is checked by the call's driver
  // (driveCall), an upstream's cancellation of its own request by no driver, so here.
  if (strict && (r.to !== 'call' || r.event.kind === 'cancelled')) strict.validator.check('from-upstream', strict.revision, m);
  return r;
}

/** {@link routeUnlabelled} without strict mode's check. */
function routeOf(m: JsonObject, calls: CallTable, clean: (params: JsonObject) => JsonObject, ownSession: boolean, ownInFlight: number): Route {
  const method = String(m.method);
  let params = (m.params && typeof m.params === 'object' && !Array.isArray(m.params) ? m.params : {}) as JsonObject;
  if ('id' in m && m.id !== null && m.id !== undefined) {
    const id = m.id as RequestId;
    params = askWithoutTask(method, params);
    // A ping is answered at once, whoever it is for (basic/utilities/ping).
    if (method === 'ping') return { to: 'answer', id, answer: { result: {} } };
    // A server request names no request here (a stdio line, a GET stream), and any request in
    // flight may have made the server ask: another client's completion or list, or one of the
    // gateway's own. Only the one request in flight can own it, and only when it is a call that
    // can take input; the sole such call among several would be a guess that shows another
    // client's question to this one (client/elicitation, client/sampling).
    const only = calls.only(ownInFlight);
    const owner = only && INPUT_METHODS.has(only.ctx.method) ? only : undefined;
    if (owner) return { to: 'call', call: owner, event: { kind: 'request', id, method, params } };
    // A server may ask for the roots, a sampling or an elicitation on the GET stream unrelated to
    // any request (basic/transports#listening-for-messages-from-the-server); on a connection of
    // one client session, that session is the only client it can mean.
    if (ownSession && OUTSIDE_CALL_METHODS.has(method)) return { to: 'session', id, method, params };
    return { to: 'answer', id, answer: { error: UNROUTABLE } };
  }
  if (SUBSCRIBER_NOTIFICATIONS.has(method)) return { to: 'subscribers', notification: { method, params: clean(params) } };
  if (method === 'notifications/progress') {
    // The token the upstream holds is our request id (basic/utilities/progress).
    const call = calls.get(params.progressToken);
    return call ? { to: 'call', call, event: { kind: 'progress', params } } : { to: 'nobody', method };
  }
  if (method === 'notifications/cancelled') {
    // The upstream takes back a server request of its own: to the call it went to, which tells
    // its client with the id the client saw and answers nothing (basic/utilities/cancellation).
    const call = calls.asking(params.requestId);
    const reason = typeof params.reason === 'string' ? params.reason : undefined;
    if (call) return { to: 'call', call, event: { kind: 'cancelled', requestId: params.requestId as RequestId, reason } };
    return calls.withdrawOutside(params.requestId, reason) ? { to: 'done' } : { to: 'nobody', method };
  }
  if (method === 'notifications/elicitation/complete') {
    // To the client that accepted that URL-mode elicitation, once (2025-11-25 client/elicitation#url-mode).
    const notify = typeof params.elicitationId === 'string' ? calls.elicitations.take(params.elicitationId) : undefined;
    return notify ? { to: 'client', notify, notification: { method, params: clean(params) } } : { to: 'nobody', method };
  }
  if (method === 'notifications/message') {
    // A log names no request, and any request in flight may have made the server write it:
    // another client's call (one that asked for no logs included: the gateway never sends
    // `logging/setLevel` upstream, so the server logs for every call) or one of the gateway's own
    // (a subscription it opened for another client). Only the one request in flight can own it;
    // the sole call that asked for logs among several would be a guess that hands it another
    // client's log (server/utilities/logging).
    const call = calls.only(ownInFlight);
    if (call && call.ctx.logLevel !== undefined) return { to: 'call', call, event: { kind: 'log', params } };
    // A session-level log (server/utilities/logging): on a connection that serves one client
    // session, that session is its only possible client; its own stream carries it, through its
    // level filter. On a shared one nobody can be named.
    return ownSession ? { to: 'subscribers', notification: { method, params: clean(params) } } : { to: 'nobody', method };
  }
  return { to: 'nobody', method };
}

/**
 * Delivers a `client` route: the notification goes to the one client session it concerns; when
 * that session can no longer take it (ended, no stream open, a revision without it) it is logged
 * at debug and dropped, as any message without a client.
 */
export function deliverToClient(r: Extract<Route, { to: 'client' }>, log: CoreLog, upstream: string): void {
  if (!r.notify(r.notification.method, r.notification.params)) log.debug({ upstream, method: r.notification.method }, 'upstream message has no client');
}

/**
 * Delivers a `session` route: the server request goes to the connection's one client session on
 * that session's own stream (`reach.ask`, from its notification subscription), and the client's
 * result or error goes back upstream under the upstream's id (`respond`). Without `reach` (the
 * client has no stream open that could carry it) the upstream is answered
 * SWY_ERR_REQ_INPUT_UNSUPPORTED naming that; a request whose id one still open has is refused
 * SWY_ERR_REQ_DUPLICATE_ID; the session's `ask` refuses what its client cannot take (the method
 * not in its revision, a capability or mode it did not declare, its pending bound, its deadline).
 * A URL-mode elicitation the client accepts has its completion routed to it, as inside a call.
 * What the upstream cancels, or what is open when the connection ends
 * ({@link CallTable.failAll}), is taken back from the client, and nothing is answered for it.
 * @see 2025-11-25 client/roots; client/sampling; client/elicitation#url-mode;
 *   basic/transports#listening-for-messages-from-the-server; basic/utilities/cancellation
 */
export function askOwnSession(r: Extract<Route, { to: 'session' }>, calls: CallTable, reach: SessionReach | undefined, respond: Respond): void {
  if (!reach) {
    const e = new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: 'the client session has no stream open to carry a request outside a call' });
    return respond(r.id, { error: e.toRpcError() });
  }
  const ac = new AbortController();
  if (!calls.openOutside(r.id, ac)) return respond(r.id, { error: new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID').toRpcError() });
  const settled = trackElicitation(calls.elicitations, r.method, r.params, reach.notifyClient, reach.sessionKey);
  reach.ask(r.method, r.params, ac.signal).then(
    (result) => {
      settled(result);
      if (calls.closeOutside(r.id, ac)) respond(r.id, { result });
    },
    (err: unknown) => {
      settled(undefined);
      if (calls.closeOutside(r.id, ac)) respond(r.id, { error: toRpcError(err) });
    },
  );
}
