// The MCP connection to a stdio child: our request ids, the calls and requests in flight, the
// routing of what it sends, and its handshake through the era clients.

import { CallQueue, cancelReasonOf, driveCall, upstreamStrict, type DriveTarget, type CallHolder } from '../../core/calls.js';
import { batchAllowed, batchedResponse, invalidResponse, isBatched, upstreamError, upstreamMessages } from '../../core/upstream-answers.js';
import type { CoreLog } from '../../core/exchange.js';
import type { EraClients, OutboundMessage } from '../../core/era.js';
import { PeerRpcError, rpcErrorWords, SwitchyardError, type RpcErrorObject } from '../../core/errors.js';
import type { Limits } from '../../core/limits.js';
import { serializeBody, type JsonBody } from '../../core/json-pieces.js';
import { parseJsonBytes, type JsonBytes } from '../../core/json-bytes.js';
import { idKey, type JsonObject, type RequestId } from '../../core/message.js';
import type { CoreNotification, Implementation, RequestContext, SubscriptionFilter } from '../../core/request.js';
import { honouredFilter, NotificationHub, ResourceInterest, type ServerDescription, type Subscription } from '../../core/upstream.js';
import { CallTable, deliverToClient, progressOf, routeUnlabelled, sentId, UNROUTABLE } from '../routing.js';
import { subscriptionLines, SubscriptionSync } from '../subscription-sync.js';
import { sampledLine } from '../../log/sample.js';
import type { MessageValidator } from '../../core/strict.js';

/** Invalid stdout lines logged one by one before only every 1,000th is. */
const INVALID_LINES_LOGGED = 10;

/** Which era a stdio child is spoken to in: found at start (`auto`), or pinned. */
export type StdioEra = 'auto' | '2024-11-05' | '2025-03-26' | '2025-06-18' | '2025-11-25' | '2026-07-28';

/** What a connection is built with. */
export interface ConnectionOptions {
  /** Name in logs. */
  name: string;
  /** The description's name when the child gives none (its program). */
  fallbackName: string;
  log: CoreLog;
  limits: Limits;
  /** The gateway's Implementation, sent where a client has none. */
  clientInfo: Implementation;
  /** Holds calls waiting for a 2026 client's input (server requests from an initialize-era child). */
  held: CallHolder;
  eras: Pick<EraClients, 'stateless' | 'sessions'>;
  era: StdioEra;
  /** Writes one line to the child (one string, or the pieces of a large message); false when no child can take it. */
  write(line: JsonBody): boolean;
  /** Bytes written to the child that it has not read yet. */
  backlog(): number;
  /** Strict mode's validator: what the upstream sends for a call or outside one, and what the gateway sends it, are checked against its revision's schema (its handshake is checked by the era clients: strictEraClients in core/strict.ts; docs/strict.md, "Upstreams"); absent when strict mode is off. */
  strict?: MessageValidator;
}

/** The MCP side of a stdio upstream; the process side feeds it lines and exits. */
export interface StdioConnection {
  /** The child's description, once a handshake is done. */
  describe(): ServerDescription;
  /**
   * The handshake with a freshly spawned child: `server/discover` first (`auto`: a result or a
   * recognised error means 2026-07-28, anything else an initialize-era child), then `initialize`
   * and `notifications/initialized` for the initialize era; afterwards what subscribers want is
   * asked for again. With `auto`, a discover unanswered within `upstreamProbeTimeoutMs` stays open
   * while `initialize` is tried: whichever era's answer comes first decides (a late DiscoverResult
   * or modern error: 2026-07-28, logged at warn `upstream answered server/discover after the probe
   * deadline`), and an `initialize` refused or unanswered while discover is open waits for its
   * answer (until `upstreamStartTimeoutMs` from when it was sent) before the start fails. A probe
   * left unanswered by an initialize-era child is logged at warn (`upstream did not answer
   * server/discover`, with a hint to pin the era), and the restarts of this connection's child
   * skip it until an `initialize` fails.
   * @returns the revision the child speaks.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (no answer within `upstreamStartTimeoutMs`, or not the pinned era)
   */
  handshake(): Promise<string>;
  /** One line the child wrote (bytes, without its `\n`): one buffer, or a long line's chunks in order. */
  onLine(line: JsonBytes): void;
  /** The child is gone: every request in flight fails with `err`. */
  onExit(err: SwitchyardError): void;
  /** One client request, driven to its end. @throws PeerRpcError, SwitchyardError */
  request(ctx: RequestContext): Promise<JsonObject>;
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription;
  /** Forgets what is kept for client session `sessionKey` (where its URL-mode elicitations' completions go). */
  release(sessionKey: string): void;
  /**
   * Sends the child a `ping` of the gateway's own; settles when it is answered (a result or an
   * error: a 2026-07-28 child, which has no `ping`, answers -32601), when `timeoutMs` (ms) passes,
   * or at once when it cannot be sent. Whether the child wrote anything meanwhile is the caller's
   * to check.
   * @returns why it could not be sent (the child not reading its stdin, its table of calls full, no
   *   child: the refusal's message), or undefined when it was sent, answered or not
   * @see 2025-11-25 basic/utilities/ping (the receiver MUST respond promptly; the sender MAY
   *   treat a missing answer as a stale connection and restart it)
   */
  ping(timeoutMs: number): Promise<string | undefined>;
  /**
   * The child's stdin drained (ChildOptions.onDrain): when its backlog is within
   * `maxUpstreamMessageBytes` again, the subscription changes refused for it go again, as after a
   * call's end. Without it a gateway with no call ending kept such a URI unsubscribed.
   */
  drained(): void;
}

/** The first `max` bytes of a line (one buffer or its chunks), decoded for a log record. */
function excerptOf(line: JsonBytes, max: number): string {
  const parts: Uint8Array[] = [];
  let n = 0;
  for (const p of Array.isArray(line) ? (line as readonly Uint8Array[]) : [line as Uint8Array]) {
    if (n >= max) break;
    parts.push(p.subarray(0, max - n));
    n += parts[parts.length - 1].length;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** An answer to the era probe's `server/discover`: its result, or the error it was answered with. */
type ProbeAnswer = { result?: JsonObject; error?: RpcErrorObject };

/**
 * What a failed `server/discover` says about the era: an error answer is an answer (it may be a
 * recognised modern one); no answer in time or an invalid one says nothing (undefined).
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE, as given (the child is gone or cannot be written to)
 */
function probeFailure(err: unknown): ProbeAnswer | undefined {
  if (err instanceof PeerRpcError) return { error: err.rpc };
  if (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE') throw err;
  return undefined;
}

interface Pending {
  /** The request's method, for logs and for what a log message may have come from. */
  method: string;
  resolve: (r: JsonObject) => void;
  reject: (e: unknown) => void;
}

/**
 * Creates the connection. Every request gets our id (also its progress token), unique among
 * all in flight, so that clients never collide and answers reach only their sender.
 * @see 2025-11-25 basic/transports#stdio; spec digest README "Era detection" (stdio client)
 */
export function createStdioConnection(o: ConnectionOptions): StdioConnection {
  const { log, limits } = o;
  const { stateless, sessions } = o.eras;
  const hub = new NotificationHub();
  const calls = new CallTable();
  /** The gateway's own requests in flight, by `idKey` of our id (a response `"1"` does not answer our `1`). */
  const pending = new Map<string, Pending>();
  let nextId = 0;
  let desc: ServerDescription | undefined;
  /**
   * The revision the running child's handshake settled on: undefined from the start of each
   * handshake until then (its `server/discover` and `initialize` are the era clients' to check).
   */
  let spoken: string | undefined;
  let modern = false;
  let listenId: number | undefined;
  /** Errors with id null the child sent (logged like invalid lines: the first few, then every 1000th). */
  let unattributedErrors = 0;
  /**
   * `auto` only: an earlier child of this command let `server/discover` go unanswered until the
   * probe's deadline and then spoke the initialize era. Its restarts skip the probe (as a pinned
   * era would) instead of paying that wait each time; a restart whose initialize then fails
   * probes again.
   */
  let discoverUnanswered = false;

  const send = (msg: unknown): boolean => {
    // Strict mode: once the handshake has settled a revision, what the child is sent is checked against it (docs/strict.md, "Upstreams").
    if (o.strict && spoken !== undefined) o.strict.check('to-upstream', spoken, msg);
    return o.write(serializeBody(msg));
  };
  /**
   * Refuses a new request while the child has not read `maxUpstreamMessageBytes` of what was
   * written to it: a child that stopped reading its stdin would otherwise make the gateway keep
   * every later request's bytes (the pipe holds 64 KiB; the rest waits in the gateway).
   * @throws SwitchyardError SWY_ERR_UPSTREAM_OVERLOADED
   */
  const checkBacklog = () => {
    const queued = o.backlog();
    if (queued > limits.maxUpstreamMessageBytes)
      throw new SwitchyardError('SWY_ERR_UPSTREAM_OVERLOADED', { message: `Upstream overloaded: the child has not read ${queued} bytes written to its stdin` });
  };

  /**
   * A request of the gateway's own: `answer` resolves with its result (rejects with a PeerRpcError
   * for an error answer, SWY_ERR_UPSTREAM_PROTOCOL for an invalid one, SWY_ERR_REQ_DEADLINE after
   * `timeoutMs` ms, SWY_ERR_UPSTREAM_UNAVAILABLE when it cannot be sent or the child exits).
   * `abandon()` stops waiting: the answer never settles, and a late response is logged at debug
   * as matching nothing (the era probe drops the request the other era's answer made moot).
   */
  const open = (m: OutboundMessage, timeoutMs: number): { answer: Promise<JsonObject>; abandon: () => void } => {
    if (pending.size + calls.size >= limits.maxInFlightPerUpstream)
      return { answer: Promise.reject(new SwitchyardError('SWY_ERR_UPSTREAM_OVERLOADED')), abandon: () => {} };
    try {
      checkBacklog();
    } catch (err) {
      return { answer: Promise.reject(err), abandon: () => {} };
    }
    const id = ++nextId;
    const key = idKey(id);
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<JsonObject>((resolve, reject) => {
      timer = setTimeout(() => {
        if (!pending.delete(key)) return;
        reject(new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `${m.method} after ${timeoutMs} ms` }));
        // basic/utilities/cancellation: the child is told the request is given up, in the words a
        // call cut by its deadline gives (`request timed out after N ms`, cancelReasonOf);
        // `initialize` MUST NOT be cancelled (basic/utilities/cancellation).
        if (m.method !== 'initialize') {
          const reason = cancelReasonOf(new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `${timeoutMs} ms` }));
          send({ jsonrpc: '2.0', ...(modern ? stateless : sessions).cancelled(id, reason) });
        }
      }, timeoutMs);
      timer.unref();
      pending.set(key, {
        method: m.method,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      if (!send({ jsonrpc: '2.0', id, ...m })) {
        pending.delete(key);
        clearTimeout(timer);
        reject(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE'));
      }
    });
    return {
      answer,
      abandon: () => {
        if (pending.delete(key)) clearTimeout(timer);
      },
    };
  };
  /** A request of the gateway's own; resolves with its result (see `open`). */
  const call = (m: OutboundMessage, timeoutMs: number): Promise<JsonObject> => open(m, timeoutMs).answer;

  /** One listen for what subscribers want (2026-07-28 children); a changed want replaces it. */
  const listen = () => {
    if (!modern || !desc) return;
    if (listenId !== undefined) send({ jsonrpc: '2.0', ...stateless.cancelled(listenId, 'subscriptions changed') });
    listenId = undefined;
    const uris = interest.uris();
    const filter = honouredFilter(
      { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true, ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}) },
      desc.capabilities,
    );
    if (Object.keys(filter).length === 0) return;
    const id = ++nextId;
    if (send({ jsonrpc: '2.0', id, ...stateless.listen(filter, o.clientInfo) })) listenId = id;
  };
  // A URI wanted or no longer wanted: a 2026-07-28 child gets the whole listen again, any other
  // the one change, in turn.
  const wantChanged = (uri: string): void => (modern ? listen() : subs.changed(uri));
  const interest = new ResourceInterest(wantChanged, wantChanged);
  /**
   * The child's subscriptions (initialize era), one change at a time, each URI's want read when
   * its turn comes (docs/upstreams.md, "Resource subscriptions upstream"). Sent at once, the
   * `resources/subscribe` of a listen's 1,024 URIs took as many of `maxInFlightPerUpstream`, and
   * every other client's call was refused SWY_ERR_UPSTREAM_OVERLOADED until the child had
   * answered them all. A failed change is not retried; one this side refused before writing it
   * (the child's in-flight calls at `maxInFlightPerUpstream`, or its stdin backlog) is not made,
   * and goes again once a client's call ends, or once the child's stdin drains within its bound.
   */
  const lines = subscriptionLines(log, o.name, (err) => (err instanceof Error ? err.message : String(err)));
  const subs = new SubscriptionSync({
    wanted: (uri) => interest.has(uri),
    ready: () => desc !== undefined && !modern,
    send: (uri, subscribe) => call({ method: subscribe ? 'resources/subscribe' : 'resources/unsubscribe', params: { uri } }, limits.upstreamRequestTimeoutMs),
    // Said as an HTTP upstream's are. A child gone meanwhile is no failure of the subscription: its restart is sent it again.
    ...lines,
    failed: (uri, subscribe, err) => {
      if (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE') return;
      lines.failed(uri, subscribe, err);
    },
    // Only `open`'s admission throws this code, before a byte is written (a child's own error is a
    // PeerRpcError). Not a failure: said at debug (`deferred`), and it goes again once a call ends.
    notSent: (err) => err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_OVERLOADED',
  });

  /**
   * An error response tied to no request (id null or absent). With exactly one request of ours
   * unanswered (a client's call, one of the gateway's own, or the listen), the error is its
   * answer: it reaches that call's client as the child's error, as an HTTP upstream's does for
   * its POST's one request, where it would otherwise wait for its deadline (the listen gets
   * nothing: its answers are not read). With several, guessing could hand one client's call
   * another's failure while its own answer is still coming, so every one of them goes on to its
   * answer or its deadline. Logged at warn either way, bounded like invalid lines, with the
   * error's code and the start of its message, how many requests were unanswered, and the
   * method it answered.
   * @see JSON-RPC 2.0 §5 (id: null when the request's id could not be read)
   */
  const unattributed = (error: unknown) => {
    const inFlight = calls.size + pending.size + (listenId !== undefined ? 1 : 0);
    let answered: string | undefined;
    if (inFlight === 1) {
      const c = calls.only();
      if (c) {
        answered = c.ctx.method;
        c.queue.push({ kind: 'error', error: error as RpcErrorObject });
      } else {
        const [only] = pending;
        if (only) {
          pending.delete(only[0]);
          answered = only[1].method;
          only[1].reject(upstreamError(error));
        }
      }
    }
    if (!sampledLine(++unattributedErrors, INVALID_LINES_LOGGED, 1000)) return;
    const e = (error !== null && typeof error === 'object' ? error : {}) as JsonObject;
    const text = typeof e.message === 'string' ? e.message : '';
    log.warn(
      {
        upstream: o.name,
        code: e.code,
        message: text.length > 200 ? `${text.slice(0, 200)}…` : text,
        count: unattributedErrors,
        inFlight,
        ...(answered !== undefined ? { answered } : {}),
      },
      'upstream sent an error for no request',
    );
  };

  /**
   * The gateway's own requests in flight that a log message or a server request may have come
   * from (a subscription opened for some client, a list): all but pings, which no server logs or
   * asks for. Bounded by `maxInFlightPerUpstream`, and counted only for those messages.
   */
  const ownRequestsInFlight = (): number => {
    let n = 0;
    for (const p of pending.values()) if (p.method !== 'ping') n++;
    return n;
  };

  const onMessage = (msg: JsonObject) => {
    // A line that is a JSON array (a batch): requests and notifications in it only a 2025-03-26
    // child may send (docs/upstreams.md, "Batches from an upstream"); a response in it fails the
    // request it names, below (JSON-RPC 2.0 §6: a batch is answered only to a batch, and the
    // gateway sends none).
    if (typeof msg.method === 'string' && isBatched(msg) && !batchAllowed(spoken)) return calls.faults.batched(msg, spoken, log, o.name);
    if (typeof msg.method === 'string') {
      const r = routeUnlabelled(
        msg,
        calls,
        (p) => (modern ? stateless.notificationParams(p) : sessions.notificationParams(p)),
        false,
        upstreamStrict(o.strict, spoken),
        msg.method === 'notifications/message' || msg.id !== undefined ? ownRequestsInFlight() : 0,
      );
      switch (r.to) {
        case 'subscribers':
          return hub.emit(r.notification);
        case 'call':
          return r.call.queue.push(r.event);
        case 'client':
          return deliverToClient(r, log, o.name);
        case 'answer':
          if ('error' in r.answer) log.warn({ upstream: o.name, method: msg.method, inFlight: calls.methods() }, 'upstream message has no client');
          send({ jsonrpc: '2.0', id: r.id, ...r.answer });
          return;
        case 'nobody':
          return log.debug({ upstream: o.name, method: r.method }, 'upstream message has no client');
        // A child is shared by every client: routeUnlabelled names no own session for it (and so
        // nothing of it is ever sent outside a call to take back).
        case 'session':
          send({ jsonrpc: '2.0', id: r.id, error: UNROUTABLE });
          return;
        case 'done':
          return;
      }
    }
    // By type and value: our ids are numbers, and a response `"1"` answers none of them (JSON-RPC
    // 2.0 §5: the response's id MUST be the same as the request's). It goes below, as any id
    // that matches nothing.
    const c = calls.answer(msg.id);
    if (c) {
      const bad = isBatched(msg) ? batchedResponse(c.ctx.method) : invalidResponse(msg, c.ctx.method);
      if (bad) c.queue.fail(bad);
      else if ('error' in msg) c.queue.push({ kind: 'error', error: msg.error as RpcErrorObject });
      else c.queue.push({ kind: 'result', result: msg.result as JsonObject });
      return;
    }
    const key = typeof msg.id === 'string' || typeof msg.id === 'number' || typeof msg.id === 'bigint' ? idKey(msg.id) : '';
    const p = pending.get(key);
    if (!p) {
      // An error tied to no request (id null, or absent as some servers send it): the child could
      // not read a message of ours. JSON-RPC cannot say which; when one request alone is
      // unanswered it is that one's answer, and otherwise nobody's (docs/upstreams.md).
      if ((msg.id === null || msg.id === undefined) && msg.error !== undefined && msg.result === undefined && !isBatched(msg)) unattributed(msg.error);
      // A second response for an id already answered: the first stands, the operator hears of it.
      else if (calls.duplicate(msg.id, log, o.name)) return;
      // A batched response that answers nothing of ours (JSON-RPC 2.0 §6: a batch answers only a batch).
      else if (isBatched(msg)) calls.faults.batched(msg, spoken, log, o.name);
      // A late answer to a cancelled or timed-out request, or to our listen (no fault); or an id never sent.
      else calls.faults.stray(msg, sentId(msg.id, nextId), log, o.name);
      return;
    }
    pending.delete(key);
    calls.remember(msg.id as RequestId, p.method);
    const bad = isBatched(msg) ? batchedResponse(p.method) : invalidResponse(msg, p.method);
    if (bad) p.reject(bad);
    else if ('error' in msg) p.reject(upstreamError(msg.error));
    else p.resolve((msg.result ?? {}) as JsonObject);
  };

  return {
    describe() {
      if (!desc) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      return desc;
    },

    ping: (timeoutMs) =>
      call({ method: 'ping', params: {} }, timeoutMs).then(
        () => undefined,
        // Its deadline, an error answer (a PeerRpcError) or an invalid one (SWY_ERR_UPSTREAM_PROTOCOL):
        // it was sent. Anything else refused it before it was written.
        (err: unknown) =>
          err instanceof SwitchyardError && err.code !== 'SWY_ERR_REQ_DEADLINE' && err.code !== 'SWY_ERR_UPSTREAM_PROTOCOL' ? err.message : undefined,
      ),

    async handshake() {
      const startMs = limits.upstreamStartTimeoutMs;
      spoken = undefined;
      let next: ServerDescription | undefined;
      /** The probe's wait when `server/discover` got no answer by its deadline (auto only). */
      let probeUnansweredMs: number | undefined;
      /**
       * `auto` only: a `server/discover` unanswered at the probe's deadline stays open (until
       * `upstreamStartTimeoutMs` from when it was sent) while `initialize` is tried: `answer` is its
       * answer, undefined for none or an invalid one.
       */
      let late: { answer: Promise<ProbeAnswer | undefined>; abandon: () => void; sentAt: number } | undefined;
      const probeMs = o.era === 'auto' ? Math.min(limits.upstreamProbeTimeoutMs, Math.ceil(startMs / 4)) : startMs;
      const remembered = o.era === 'auto' && discoverUnanswered;
      if (remembered) log.debug({ upstream: o.name }, 'upstream era probe skipped: an earlier start of this child did not answer it');
      else if (o.era === 'auto' || o.era === stateless.revisions[0]) {
        // Era probe (digest "Era detection", stdio): only a modern result or modern error means 2026-07-28.
        const sentAt = performance.now();
        const discover = open(stateless.discover(o.clientInfo), o.era === 'auto' ? startMs : probeMs);
        const answered = discover.answer.then((result): ProbeAnswer | undefined => ({ result }), probeFailure);
        answered.catch(() => {});
        let answer: ProbeAnswer | undefined;
        if (o.era === 'auto') {
          let timer: NodeJS.Timeout | undefined;
          const deadline = new Promise<'deadline'>((r) => (timer = setTimeout(() => r('deadline'), probeMs)));
          const outcome = await Promise.race([answered, deadline]).finally(() => clearTimeout(timer));
          if (outcome === 'deadline') {
            // No answer yet: the child may be an initialize-era one that drops the method, or a
            // 2026-07-28 one still starting (its answer then comes before initialize's, below).
            probeUnansweredMs = probeMs;
            late = { answer: answered, abandon: discover.abandon, sentAt };
          } else answer = outcome;
        } else answer = await answered;
        if (answer && stateless.recognises(answer)) {
          // A -32022 naming 2026-07-28 without a result: discovery proper tells the capabilities.
          const result = answer.result ?? (await call(stateless.discover(o.clientInfo), startMs));
          next = stateless.describe(result, o.fallbackName);
        } else if (o.era !== 'auto') {
          throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
            detail: `the child does not speak ${o.era}: server/discover answered ${answer ? (answer.error ? rpcErrorWords(answer.error) : `without listing ${o.era}`) : 'nothing'}`,
            operatorDetail: `the child does not speak ${o.era}: server/discover answered ${answer ? JSON.stringify(answer.result ?? answer.error).slice(0, 200) : 'nothing'}`,
          });
        }
      }
      if (!next) {
        const revision = o.era === 'auto' ? undefined : o.era;
        const init = open(sessions.initialize({ revision, capabilities: sessions.sharedCapabilities, clientInfo: o.clientInfo }), startMs);
        const initialized = init.answer.then(
          (result) => ({ result }),
          (err: unknown) => ({ err }),
        );
        /** A late DiscoverResult (or modern error) that came before initialize's answer, or instead of a refusal of it. */
        let modernLate: ProbeAnswer | undefined;
        let outcome: { result: JsonObject } | { err: unknown } | undefined;
        if (late) {
          // Whichever era's answer comes first names the era (digest "Era detection", stdio: a
          // result or recognised modern error means 2026-07-28). A child still starting reads its
          // stdin in order, so a 2026-07-28 one answers discover before it refuses initialize.
          const first = await Promise.race([initialized, late.answer.then((discovered) => ({ discovered }))]);
          if ('discovered' in first) {
            if (first.discovered && stateless.recognises(first.discovered)) {
              modernLate = first.discovered;
              // Its answer (a refusal, or a dual-era child's InitializeResult) is no longer wanted;
              // initialize is never cancelled (2025-11-25 basic/utilities/cancellation).
              init.abandon();
            } else {
              // It answered, late and not in the 2026-07-28 era: slow, not silent.
              if (first.discovered) probeUnansweredMs = undefined;
              outcome = await initialized;
            }
          } else {
            outcome = first;
            if ('result' in first) late.abandon();
            else if (!(first.err instanceof SwitchyardError && first.err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE')) {
              // Refused (a 2026-07-28 child answers -32601) or unanswered while discover is still
              // open: its answer, until its deadline, decides; without one the refusal stands.
              const discovered = await late.answer;
              if (discovered && stateless.recognises(discovered)) modernLate = discovered;
            }
          }
        } else outcome = await initialized;
        if (modernLate && late) {
          const result = modernLate.result ?? (await call(stateless.discover(o.clientInfo), startMs));
          next = stateless.describe(result, o.fallbackName);
          const rev = next.upstreamRevision;
          log.warn(
            {
              upstream: o.name,
              waitedMs: Math.round(performance.now() - late.sentAt),
              probeTimeoutMs: probeMs,
              revision: rev,
              hint: `raise upstreamProbeTimeoutMs, or pin the era: --upstream-era ${rev} on the command line, era: ${rev} on the upstream in a config file`,
            },
            'upstream answered server/discover after the probe deadline',
          );
        } else if (outcome && 'err' in outcome) {
          const err = outcome.err;
          // The child may no longer be the one remembered (its program changed on disk): probe it next time.
          discoverUnanswered = false;
          if (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE') throw err;
          // The child's message is its own words, and may repeat what it was given (`bad key sk-…`):
          // the operator's, as its stderr is; a client reads the code.
          if (err instanceof PeerRpcError)
            throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
              detail: `initialize failed: ${rpcErrorWords(err.rpc)}`,
              operatorDetail: `initialize failed: ${err.rpc.message}`,
            });
          // An answer that is no response (both result and error, or neither): not "no answer".
          if (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_PROTOCOL')
            throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
              detail: err.detail,
              // The same words, with the child's error message for the operator (invalidResponse).
              operatorDetail: err.operatorDetail ?? err.detail,
              cause: err,
            });
          throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
            detail: `no answer to initialize within ${startMs} ms`,
            // A child slow to start (a first `npx -y` download, a large runtime) is killed at this
            // bound on each attempt and never comes up: name the limit that lets it.
            operatorDetail: `no answer to initialize within ${startMs} ms (limits.upstreamStartTimeoutMs; raise it for a server slow to start)`,
            cause: err,
          });
        } else if (outcome) {
          next = sessions.describe(outcome.result, o.fallbackName);
          // basic/lifecycle#initialization: the client MUST send `initialized` after a successful
          // initialize; checked against the revision just settled.
          spoken = next.upstreamRevision;
          send({ jsonrpc: '2.0', ...sessions.initialized() });
          if (probeUnansweredMs !== undefined) {
            // Every start of such a child pays the probe's wait unless the era is pinned; restarts
            // of this one skip it from now on (`discoverUnanswered`).
            discoverUnanswered = true;
            const rev = next.upstreamRevision;
            log.warn(
              {
                upstream: o.name,
                waitedMs: probeUnansweredMs,
                revision: rev,
                hint: `pin the era to start without the probe: --upstream-era ${rev} on the command line, era: ${rev} on the upstream in a config file`,
              },
              'upstream did not answer server/discover',
            );
          }
        }
      }
      // Unreachable: every path above described the child or threw.
      if (!next) throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT');
      modern = next.upstreamRevision === stateless.revisions[0];
      spoken = next.upstreamRevision;
      desc = next;
      listenId = undefined;
      // What subscribers asked for before this child (or before this restart).
      if (modern) listen();
      else subs.resync(interest.uris());
      return next.upstreamRevision;
    },

    onLine(line) {
      // A line in chunks is long (LONG_STRING_BYTES and more): never empty.
      const one = Array.isArray(line) ? undefined : (line as Uint8Array);
      if (one && (one.length === 0 || (one.length === 1 && one[0] === 13))) return;
      let msg: unknown;
      try {
        // Flat long strings: the answer is held beside the request still waiting for it (its
        // long strings young pieces) while it is routed and written; as pieces too, the
        // scavenges its decoding causes found both alive and promoted them (json-bytes.ts `flat`).
        msg = parseJsonBytes(line, limits, { flat: true }).value;
      } catch {
        // Bounded logging: a child that floods stdout with garbage must not flood the log.
        return calls.faults.unparsable(() => excerptOf(line, 200), log, o.name);
      }
      for (const m of upstreamMessages(msg)) onMessage(m);
    },

    drained() {
      if (o.backlog() <= limits.maxUpstreamMessageBytes) subs.retry();
    },

    onExit(err) {
      listenId = undefined;
      for (const [k, p] of [...pending]) {
        pending.delete(k);
        p.reject(err);
      }
      calls.failAll(err);
    },

    async request(ctx) {
      if (pending.size + calls.size >= limits.maxInFlightPerUpstream) throw new SwitchyardError('SWY_ERR_UPSTREAM_OVERLOADED');
      checkBacklog();
      const id: RequestId = ++nextId;
      const queue = new CallQueue();
      calls.add(id, { queue, ctx });
      const token = ctx.progressToken !== undefined ? id : undefined;
      const params = modern ? stateless.requestParams(ctx, o.clientInfo, token) : sessions.requestParams(ctx, token);
      if (!send({ jsonrpc: '2.0', id, method: ctx.method, params })) {
        calls.delete(id);
        throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      }
      const era = modern ? stateless : sessions;
      const target: DriveTarget = {
        queue,
        strict: upstreamStrict(o.strict, desc?.upstreamRevision),
        respond: (rid, answer) => void send({ jsonrpc: '2.0', id: rid, ...answer }),
        finish: () => calls.delete(id),
        elicitations: calls.elicitations,
        cancel: (reason) => {
          // basic/utilities/cancellation: tell the child to stop; its late response is dropped.
          if (calls.delete(id)) send({ jsonrpc: '2.0', ...era.cancelled(id, reason) });
        },
      };
      try {
        return await driveCall(target, ctx, o.held, progressOf);
      } catch (err) {
        calls.delete(id);
        throw err;
      } finally {
        // A place among the in-flight calls may have freed: a subscription change refused for want of one goes again.
        subs.retry();
      }
    },

    release(sessionKey) {
      calls.elicitations.dropSession(sessionKey);
    },

    subscribe(filter, sink) {
      const sub = hub.add(filter, sink);
      const drop = interest.add(filter.resourceSubscriptions ?? []);
      return {
        close() {
          sub.close();
          drop();
        },
      };
    },
  };
}
