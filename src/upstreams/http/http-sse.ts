// The 2024-11-05 HTTP+SSE connector: one GET stream per upstream session, whose first event
// names the URL every message is POSTed to; replies come back on the stream.

import type { StreamGate } from './stream-gate.js';
import { request, type Dispatcher } from 'undici';
import { CallQueue, driveCall, upstreamStrict, type DriveTarget } from '../../core/calls.js';
import type { HttpSseEraClient } from '../../core/era.js';
import { rpcErrorWords, SwitchyardError } from '../../core/errors.js';
import type { Limits } from '../../core/limits.js';
import { batchedResponse, invalidResponse, isBatched, upstreamMessages } from '../../core/upstream-answers.js';
import { parseBody, serialize, type JsonObject } from '../../core/message.js';
import type { CoreNotification, Implementation, SubscriptionFilter } from '../../core/request.js';
import { NotificationHub, ResourceInterest, type Subscription } from '../../core/upstream.js';
import { askOwnSession, CallTable, deliverToClient, progressOf, routeUnlabelled, sentId, type BadMessage } from '../routing.js';
import { isClientSessionKey, poolKeyForLog, sessionKeyOf, SessionPool, SessionSubscribers, type PoolRef } from './pool.js';
import { authOf, outboundHeaders, type Connector, type ConnectorOptions, type CredentialRef } from './connector.js';
import { judgeRedirect } from './redirect.js';
import {
  invalidEventOf,
  networkErrorText,
  networkErrorWords,
  readText,
  sseMessages,
  traceHeaders,
  UNPARSABLE_EXCERPT_CHARS,
  upstreamFailure,
  type HttpLimits,
} from './transport.js';
import { urlForDisplay } from '../../core/url-text.js';
import { subscriptionLines, SubscriptionSync } from '../subscription-sync.js';
import { createControlReopener, type ControlReopener } from './control.js';

/** Distinct event types kept of those before an `endpoint` event (HttpSseStream.before). */
const MAX_BEFORE_TYPES = 8;
/** Characters kept of each such type. */
const MAX_BEFORE_TYPE_CHARS = 32;
/**
 * Stream messages kept while no `onMessage` takes them (before and during the handshake: the
 * `initialize` reply and what comes after it in the same write, until its session routes), given
 * to `onMessage` in order when set; the rest are dropped and counted (`HttpSseStream.dropped`).
 */
export const MAX_EARLY_MESSAGES = 64;

/** An open HTTP+SSE stream with its endpoint, or why there is none. */
export interface HttpSseStream {
  status?: number;
  /** The URL the stream was opened at: the one given, or where same-origin 307/308 redirects led. */
  url: string;
  /** Each redirect answered on the way, in order: the URL asked, the status, whether it was followed, and why (see judgeRedirect). */
  redirects: Array<{ url: string; status: number; followed: boolean; note: string }>;
  /** The absolute URL to POST to, from the `endpoint` event. */
  endpoint?: string;
  /**
   * The types of the events that came before the `endpoint` event (`message`, or another type),
   * distinct, in the order first seen: at most {@link MAX_BEFORE_TYPES}, each at most
   * {@link MAX_BEFORE_TYPE_CHARS} characters with control characters shown as `?` (the server's
   * text goes into the probe's report and an operator's terminal), and a last `…` when more types
   * came. 2024-11-05 has the server send `endpoint` first. Events without data (which an
   * EventSource does not dispatch) and comments are not counted. Empty when it came first.
   */
  before: string[];
  /** How many events came before the `endpoint` event (all of them; 0 when it came first). */
  beforeCount: number;
  /** What the stream said first (for the probe's report). */
  excerpt?: string;
  /** The network error, when the GET got no answer (the operator's text: it may name the address). */
  error?: string;
  /** The same in words a client may read ({@link networkErrorWords}: no address). */
  clientError?: string;
  /** What the attempt concluded (no address: a client may read it). */
  note: string;
  /** `note` as the operator reads it, when that says more (a refused redirect's origins). */
  operatorNote?: string;
  /**
   * When the GET was answered, after any redirects, with no event stream (a status other than 200,
   * or another `Content-Type`): that answer as `HTTP <status>, <content type>` (`no content type`
   * when absent). Each caller words the finding for what it tried before (the probe: two POSTs).
   */
  answered?: string;
  /**
   * POSTs one request to the endpoint and waits (up to `timeoutMs`) for the stream's message with
   * its id. `inBody` is true when the reply came in the POST's own answer instead (tolerated). A
   * POST answered with a status of 300 or more was not accepted, so no reply is waited for:
   * `reply` is undefined at once, and `refusedText` holds that answer's body ('' when empty).
   * A message with its id that came inside a JSON array (a batch), on the stream or in the POST's
   * answer, ends the wait too: `reply` is undefined and `batched` true (JSON-RPC 2.0 §6: a batch
   * answers only a batch; the caller fails with {@link batchedResponse}).
   */
  call(
    msg: JsonObject,
    timeoutMs: number,
  ): Promise<{ postStatus: number; reply: JsonObject | undefined; inBody?: boolean; refusedText?: string; batched?: true }>;
  close(): void;
  /**
   * When set, receives every stream message no `call` waits for; those that came before it was
   * set (at most {@link MAX_EARLY_MESSAGES}) are given to it first, in order.
   */
  onMessage?: (m: JsonObject) => void;
  /** Messages no `call` waited for that came while `onMessage` was unset, past the {@link MAX_EARLY_MESSAGES} kept: dropped. */
  readonly dropped: number;
  /** When set, called once when the stream ends; at once when it ended before it was set. */
  onEnd?: () => void;
  /**
   * When set, receives the event that could not be read (not JSON, or over the bound: it ends the
   * stream), or a JSON-looking POST answer body of `call` that is not JSON, to be counted
   * (`UpstreamFaults.message`); one that came before it was set is given it when set.
   */
  onUnparsable?: (bad: BadMessage) => void;
  /** True when no GET was sent: the upstream's streams hold every place of its `gate`. */
  full?: boolean;
}

/**
 * POSTs one message to an HTTP+SSE endpoint, bounded by `signal` and `upstreamRequestTimeoutMs`
 * for the headers; returns the status and the body text (bounded).
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (no answer: the endpoint and the error, once)
 */
export async function postToEndpoint(
  endpoint: string,
  msg: unknown,
  headers: Record<string, string>,
  limits: HttpLimits & Pick<Limits, 'upstreamRequestTimeoutMs'>,
  signal: AbortSignal,
  dispatcher?: Dispatcher,
): Promise<{ status: number; text: string }> {
  let r;
  try {
    r = await request(endpoint, {
      dispatcher,
      method: 'POST',
      body: serialize(msg),
      headers: { ...headers, 'content-type': 'application/json' },
      signal,
      headersTimeout: limits.upstreamRequestTimeoutMs,
    });
  } catch (cause) {
    if (signal.aborted) throw signal.reason ?? cause;
    // The origin only, as for every upstream URL: the endpoint's query is the upstream session's
    // id (a bearer for that session), and its path may hold the upstream's key.
    throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', endpoint, networkErrorWords(cause), { operatorDetail: networkErrorText(cause), cause });
  }
  return { status: r.statusCode, text: await readText(r.body, limits.maxUpstreamMessageBytes).catch(() => '') };
}

/**
 * GETs `url` as an HTTP+SSE client and waits (up to `timeoutMs`) for the `endpoint` event,
 * which the era client resolves and checks against the URL the stream came from; an answer that
 * is no event stream has its body read (for the excerpt) for at most `timeoutMs` too. Same-origin
 * 307/308 redirects are followed, at most `MAX_REDIRECTS` in a row, the rule of the probe's POSTs
 * (judgeRedirect); any other redirect ends the attempt, named in `note`. Never throws for
 * network trouble (it is in `error`).
 * @see 2024-11-05 basic/transports (HTTP with SSE: the first event is `endpoint`); RFC 9110 §15.4.8, §15.4.9
 */
export async function openHttpSseStream(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  era: HttpSseEraClient,
  limits: HttpLimits & Pick<Limits, 'upstreamRequestTimeoutMs'>,
  dispatcher?: Dispatcher,
  gate?: StreamGate,
): Promise<HttpSseStream> {
  const ac = new AbortController();
  const waiting = new Map<unknown, (m: JsonObject) => void>();
  const hooks: { onMessage?: (m: JsonObject) => void; onEnd?: () => void; onUnparsable?: (bad: BadMessage) => void } = {};
  /** An event that could not be read, kept until `onUnparsable` is set. */
  let unparsable: BadMessage | undefined;
  /** Messages that came while no `onMessage` took them (bounded: MAX_EARLY_MESSAGES), and how many more were dropped. */
  const early: JsonObject[] = [];
  let dropped = 0;
  const redirects: HttpSseStream['redirects'] = [];
  const origin = new URL(url).origin;
  let at = url;
  const before: string[] = [];
  let beforeCount = 0;
  /** Counts an event before the endpoint, and keeps its type when new and there is room (see HttpSseStream.before). */
  const sawBefore = (type: string) => {
    beforeCount++;
    if (before.length > MAX_BEFORE_TYPES) return;
    // eslint-disable-next-line no-control-regex
    const shown = type.slice(0, MAX_BEFORE_TYPE_CHARS).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
    if (before.includes(shown)) return;
    before.push(before.length === MAX_BEFORE_TYPES ? '…' : shown);
  };
  const none = {
    url,
    redirects,
    before,
    // Every early return is before the stream's events.
    beforeCount: 0,
    dropped: 0,
    call: async (): Promise<never> => {
      throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, 'no endpoint');
    },
    close: () => ac.abort(),
  };
  // The stream's place on the upstream's connections, given back once, whichever way it ends.
  if (gate && !gate.tryTake()) return { ...none, full: true, note: `all ${gate.max} of the upstream's stream places are taken` };
  let placed = gate !== undefined;
  const leave = () => {
    if (placed) gate!.give();
    placed = false;
  };
  let res;
  for (;;) {
    try {
      res = await request(at, {
        dispatcher,
        method: 'GET',
        headers: { ...headers, accept: 'text/event-stream' },
        signal: ac.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: 0,
      });
    } catch (err) {
      leave();
      return { ...none, url: at, error: networkErrorText(err), clientError: networkErrorWords(err), note: 'no answer to the GET' };
    }
    const redirect = judgeRedirect(res.statusCode, res.headers, at, origin, redirects.filter((r) => r.followed).length);
    if (!redirect) break;
    redirects.push({ url: at, status: res.statusCode, followed: 'follow' in redirect, note: redirect.note });
    await res.body.dump().catch(() => {});
    if ('refuse' in redirect) {
      leave();
      return { ...none, url: at, status: res.statusCode, note: redirect.refuse, ...(redirect.operatorRefuse ? { operatorNote: redirect.operatorRefuse } : {}) };
    }
    at = redirect.follow;
  }
  url = at;
  none.url = at;
  const ct = String(res.headers['content-type'] ?? '');
  if (res.statusCode !== 200 || !ct.startsWith('text/event-stream')) {
    // Read for the excerpt only, within the step's time: a server that keeps such a body open
    // (a 200 text/plain, an HTML error page) would otherwise hold the probe and the start for ever.
    const cut = setTimeout(() => ac.abort(), timeoutMs);
    const text = await readText(res.body, 64 * 1024).catch(() => '');
    clearTimeout(cut);
    leave();
    const answered = `HTTP ${res.statusCode}, ${ct || 'no content type'}`;
    return { ...none, status: res.statusCode, excerpt: text, answered, note: `no HTTP+SSE stream (the GET answered ${answered})` };
  }
  let endpoint: string | undefined;
  let problem: string | undefined;
  /** True once the stream ended (or broke) by the server's doing or the network's. */
  let ended = false;
  const body = res.body;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const messages = sseMessages(
      body,
      limits,
      (e) => {
        if (e.event === 'endpoint' && endpoint === undefined && problem === undefined) {
          const v = era.endpoint(e.data, url);
          if ('url' in v) endpoint = v.url;
          else problem = v.refused;
          clearTimeout(timer);
          resolve();
        }
      },
      undefined,
      (e) => {
        // 2024-11-05 basic/transports: the server MUST send an endpoint event first. Tolerated
        // (the SDK's SSE client does too, and nothing is lost: no request is in flight yet), but
        // told, so that the probe can name the break.
        if (endpoint === undefined && problem === undefined && e.event !== 'endpoint' && e.data !== '') sawBefore(e.event ?? 'message');
      },
    );
    void (async () => {
      try {
        for await (const m of messages) {
          // A response inside a batch answers no request of ours (JSON-RPC 2.0 §6): a call waiting
          // for its id is still handed it, to fail at once (call); after the handshake none waits,
          // and the session's routing refuses it.
          const w = m.method === undefined ? waiting.get(m.id) : undefined;
          if (w) {
            waiting.delete(m.id);
            w(m);
          } else if (hooks.onMessage) hooks.onMessage(m);
          // Kept for the session, which routes once its handshake is done (HttpSseStream.onMessage).
          else if (early.length < MAX_EARLY_MESSAGES) early.push(m);
          else dropped++;
        }
      } catch (err) {
        // the stream ended or broke: waiting calls time out, onEnd tells the session; an event
        // that is not JSON is counted by the session
        const bad = invalidEventOf(err);
        if (bad !== undefined && hooks.onUnparsable) hooks.onUnparsable(bad);
        else unparsable = bad;
      }
      ended = true;
      leave();
      clearTimeout(timer);
      resolve();
      hooks.onEnd?.();
    })();
  });
  // Read before the abort below ends the stream on our side.
  const endedFirst = ended;
  if (!endpoint) ac.abort();
  const where = endpoint ? `${new URL(endpoint).pathname}${new URL(endpoint).search}` : '';
  return {
    status: res.statusCode,
    url,
    redirects,
    before,
    beforeCount,
    endpoint,
    excerpt: endpoint ? `event: endpoint, data: ${where}` : undefined,
    note: endpoint
      ? `an endpoint event: HTTP+SSE, POST to ${where}`
      : (problem ?? (endedFirst ? 'the stream ended without an endpoint event' : `no endpoint event within ${timeoutMs} ms`)),
    async call(msg, ms) {
      if (!endpoint) throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, 'no endpoint');
      let timer: NodeJS.Timeout | undefined;
      const reply = new Promise<JsonObject | undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
        waiting.set(msg.id, (m) => {
          clearTimeout(timer);
          resolve(m);
        });
      });
      let r: { status: number; text: string };
      try {
        r = await postToEndpoint(endpoint, msg, headers, limits, AbortSignal.timeout(ms), dispatcher);
      } catch (err) {
        waiting.delete(msg.id);
        clearTimeout(timer);
        throw err;
      }
      // An HTTP+SSE server that wrongly answers in the POST body: take that as the reply.
      const inBody =
        r.status === 200 ? bodyMessages(r.text, limits, (bad) => hooks.onUnparsable?.(bad)).find((m) => m.method === undefined && m.id === msg.id) : undefined;
      if (inBody) {
        waiting.delete(msg.id);
        clearTimeout(timer);
        if (isBatched(inBody)) return { postStatus: r.status, reply: undefined, inBody: true, batched: true };
        return { postStatus: r.status, reply: inBody, inBody: true };
      }
      // The endpoint did not accept the message (the SDK's server: 400 'Invalid message', 404 for
      // an unknown session, 500 'SSE connection not established'): no reply will come on the
      // stream, so waiting out `ms` (the connector's 30 s) would only end in 'no reply'. As for
      // the session's later POSTs (post), which fail on such a status.
      if (r.status >= 300) {
        waiting.delete(msg.id);
        clearTimeout(timer);
        return { postStatus: r.status, reply: undefined, refusedText: r.text };
      }
      const m = await reply;
      if (m && isBatched(m)) return { postStatus: r.status, reply: undefined, batched: true };
      return { postStatus: r.status, reply: m };
    },
    close: () => ac.abort(),
    set onMessage(f: ((m: JsonObject) => void) | undefined) {
      hooks.onMessage = f;
      // What came before, in order (a message it routes may set this again: each is taken off first).
      while (f && hooks.onMessage === f && early.length > 0) f(early.shift()!);
    },
    get dropped() {
      return dropped;
    },
    set onEnd(f: (() => void) | undefined) {
      hooks.onEnd = f;
      // An end before the setter (during the handshake's last POST) is told at once, as an event
      // that was not JSON is: else the session would never learn its stream is gone.
      if (f && ended) f();
    },
    set onUnparsable(f: ((bad: BadMessage) => void) | undefined) {
      hooks.onUnparsable = f;
      if (f && unparsable !== undefined) f(unparsable);
      unparsable = undefined;
    },
  };
}

/**
 * The JSON-RPC messages a POST answer's body carries: one object, or the objects of a JSON array
 * (each marked as batched: {@link upstreamMessages}); none for anything else. A body that starts
 * as JSON (`{`, `[`) and is not (or is past the message bounds) is handed to `unparsable` (its
 * first {@link UNPARSABLE_EXCERPT_CHARS} characters), to be counted; any other body (`Accepted`)
 * is no message, and no fault.
 */
function bodyMessages(text: string, limits: HttpLimits, unparsable: (bad: BadMessage) => void): JsonObject[] {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') return [];
  try {
    return upstreamMessages(parseBody(text, limits).value);
  } catch {
    unparsable({ excerpt: text.slice(0, UNPARSABLE_EXCERPT_CHARS) });
    return [];
  }
}

/** One HTTP+SSE upstream session. */
interface SseSession {
  key: string;
  endpoint: string;
  stream: HttpSseStream;
  nextId: number;
  calls: CallTable;
  hub: () => NotificationHub | undefined;
  auth: Record<string, string>;
  /** Whose upstream credential the session's own messages carry: its client's, or the gateway's (undefined). */
  cred: CredentialRef | undefined;
  /** The session's resource subscriptions, one change at a time (each answered, or given up, before the next). */
  subs: SubscriptionSync;
  /**
   * The gateway's own requests on this session whose response has not come on the stream, by id,
   * with their method and what ends their wait. A log or server request on the stream may be for
   * one of them, so while there is one neither goes to a call (`routeUnlabelled`'s `ownInFlight`).
   * At most one: they are sent one after another (`subs`), each waiting at most upstreamRequestTimeoutMs.
   */
  own: Map<string, { method: string; done: () => void }>;
  ended: boolean;
  /** The revision its initialize settled on (an SDK server over SSE may settle on a 2025 one); 2024-11-05 until then. */
  revision: string;
  /** The client session a pooled session was opened for (undefined: the control session and `shared`). */
  ref?: PoolRef;
}

/**
 * A 2024-11-05 upstream. A control session gives the description and serves gateway-wide
 * subscriptions; client requests use one session per client session (`per-session`) or one for
 * all (`shared`). A lost stream fails its calls, and the next request opens a new session; the
 * control session, and a client's session with subscribers, open again at once (docs/upstreams.md).
 * @see 2024-11-05 basic/transports (HTTP with SSE), basic/lifecycle
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (the URL and why), SWY_ERR_UPSTREAM_PROTOCOL
 */
export async function createHttpSseConnector(o: ConnectorOptions, era: HttpSseEraClient): Promise<Connector> {
  const { limits, url } = o;
  const globalHub = new NotificationHub();
  const subscribers = new SessionSubscribers(limits.maxSessions);

  /**
   * POSTs `msg` on session `s` with the credential for `ref` (default: the session's own); a
   * reply wrongly in the POST body is routed like a stream message. A 401 with a refreshable
   * credential is sent once more with a fresh one.
   */
  const post = async (
    s: SseSession,
    msg: JsonObject,
    extra: Record<string, string>,
    signal: AbortSignal,
    ref: CredentialRef | undefined = s.cred,
  ): Promise<void> => {
    // Strict mode: what the gateway sends, checked against the session's revision (docs/strict.md, "Upstreams").
    o.strict?.check('to-upstream', s.revision, msg);
    const once = async () =>
      postToEndpoint(
        s.endpoint,
        msg,
        { ...(await outboundHeaders(o, ref)), ...s.auth, ...era.sessionHeaders({ revision: '' }), ...extra },
        limits,
        signal,
        o.dispatcher,
      );
    let r = await once();
    if (r.status === 401 && o.credentials?.refreshable) {
      o.credentials.invalidate(ref);
      r = await once();
    }
    if (r.status >= 300) throw upstreamFailure('SWY_ERR_UPSTREAM_PROTOCOL', s.endpoint, `POST answered HTTP ${r.status}`);
    if (r.status === 200) for (const m of bodyMessages(r.text, limits, (bad) => s.calls.faults.message(bad, o.log, o.name))) route(s, m);
  };
  const send = (s: SseSession, msg: JsonObject, extra: Record<string, string> = {}, ref?: CredentialRef) =>
    void post(s, msg, extra, AbortSignal.timeout(limits.upstreamRequestTimeoutMs), ref ?? s.cred).catch(() => {});
  /**
   * Session `s`'s subscriptions, one change at a time, each URI's want (`wanted`) read at its turn
   * (docs/upstreams.md, "Resource subscriptions upstream"): sent at once, a listen's 1,024 URIs
   * were as many POSTs in front of every other client's call on the upstream's connections. A
   * change still queued when the session ends is not sent. Each waits for its response on the
   * stream ({@link ownRequest}).
   */
  const subscriptionsOf = (s: () => SseSession, wanted: (uri: string) => boolean): SubscriptionSync =>
    new SubscriptionSync({
      wanted,
      send: (uri, subscribe) =>
        ownRequest(s(), { jsonrpc: '2.0', id: `c${++s().nextId}`, method: subscribe ? 'resources/subscribe' : 'resources/unsubscribe', params: { uri } }),
      ...subscriptionLines(o.log, o.name, networkErrorText),
    });

  /**
   * POSTs a request of the gateway's own on session `s` and waits for its response on the stream
   * (or in the POST's answer), at most upstreamRequestTimeoutMs, or until the stream ends; in
   * flight meanwhile ({@link SseSession.own}). What the response says is not read: a refused
   * subscription leaves nothing to undo.
   * @throws what the POST throws (refused, network error, timeout): the request is then not in flight.
   */
  const ownRequest = async (s: SseSession, msg: { id: string; method: string } & JsonObject): Promise<void> => {
    let done!: () => void;
    const answered = new Promise<void>((r) => (done = r));
    s.own.set(msg.id, { method: msg.method, done });
    const timer = setTimeout(done, limits.upstreamRequestTimeoutMs);
    timer.unref();
    try {
      await post(s, msg, {}, AbortSignal.timeout(limits.upstreamRequestTimeoutMs));
      await answered;
    } finally {
      clearTimeout(timer);
      s.own.delete(msg.id);
    }
  };

  /** Everything the stream carries: replies by id, the rest through the routing table. */
  const route = (s: SseSession, m: JsonObject) => {
    if (isBatched(m)) {
      // 2024-11-05 has no batches: a response in one fails the call it names (JSON-RPC 2.0 §6: a
      // batch answers only a batch), anything else in one is dropped (docs/upstreams.md, "Batches from an upstream").
      const c = typeof m.method !== 'string' ? s.calls.answer(m.id) : undefined;
      if (c) c.queue.fail(batchedResponse(c.ctx.method));
      else s.calls.faults.batched(m, s.revision, o.log, o.name);
      return;
    }
    if (typeof m.method !== 'string') {
      // The response to a request of the gateway's own ends its wait; a second one is told as any.
      const own = typeof m.id === 'string' ? s.own.get(m.id) : undefined;
      if (own) {
        s.own.delete(m.id as string);
        s.calls.remember(m.id as string, own.method);
        return own.done();
      }
      // By type and value: a response `"1"` does not answer our call `1` (JSON-RPC 2.0 §5: the
      // response's id MUST be the same as the request's), and goes where any unknown id goes.
      const c = s.calls.answer(m.id);
      // A second response for a call already answered: the first stands, the operator hears of it.
      if (!c && s.calls.duplicate(m.id, o.log, o.name)) return;
      // An answer to one of our own requests (`c1`…), or to a cancelled call; or a wrong id: said
      // at debug, as a stdio child's is.
      if (!c) return s.calls.faults.stray(m, sentId(m.id, s.nextId), o.log, o.name);
      const bad = invalidResponse(m, c.ctx.method);
      if (bad) c.queue.fail(bad);
      else if ('error' in m) c.queue.push({ kind: 'error', error: m.error as never });
      else c.queue.push({ kind: 'result', result: m.result as JsonObject });
      return;
    }
    const r = routeUnlabelled(m, s.calls, (p) => era.notificationParams(p), isClientSessionKey(s.key), upstreamStrict(o.strict, s.revision), s.own.size);
    switch (r.to) {
      case 'subscribers':
        return s.hub()?.emit(r.notification);
      case 'call':
        return r.call.queue.push(r.event);
      case 'client':
        return deliverToClient(r, o.log, o.name);
      case 'answer':
        return send(s, { jsonrpc: '2.0', id: r.id, ...r.answer });
      case 'session':
        // The session's own client, on its own stream (the GET stream, the HTTP+SSE stream).
        return askOwnSession(r, s.calls, subscribers.reachOf(s.key), (id, answer) => send(s, { jsonrpc: '2.0', id, ...answer }));
      case 'done':
        return;
      case 'nobody':
        return o.log.debug({ upstream: o.name, method: r.method, inFlight: s.calls.methods() }, 'upstream message has no client');
    }
  };

  const open = async (
    key: string,
    capabilities: JsonObject,
    info: Implementation,
    auth: Record<string, string>,
    cred: CredentialRef | undefined,
    ref?: PoolRef,
  ) => {
    const connect = async () =>
      openHttpSseStream(url, { ...(await outboundHeaders(o, cred)), ...auth }, limits.upstreamRequestTimeoutMs, era, limits, o.dispatcher, o.streams);
    let stream = await connect();
    if (stream.status === 401 && o.credentials?.refreshable) {
      o.credentials.invalidate(cred);
      stream = await connect();
    }
    // Every place is taken by another session's stream: a retryable refusal, not a call that
    // waits for a connection the streams hold.
    if (stream.full) {
      throw new SwitchyardError('SWY_ERR_SESSION_LIMIT', {
        detail: `upstream ${o.name}: ${o.streams?.max ?? 0} HTTP+SSE sessions open, the rest of its maxUpstreamConnections kept for their messages`,
      });
    }
    if (!stream.endpoint) {
      stream.close();
      if (stream.answered !== undefined) {
        // An era pinned to 2024-11-05 makes the GET all that is tried: say so, and (to the operator
        // only: a client cannot change the config) what to write instead, in the terms the operator
        // used (`type: sse`, `era: 2024-11-05`, `--upstream-era 2024-11-05`, `upstreamEra`). A
        // probed era has nothing to change: the finding alone. The advice goes first: /readyz
        // cuts a reason at 200 characters, and what follows it (the server's Content-Type) has
        // no bound of ours.
        const tried = `the GET answered ${stream.answered}: no HTTP+SSE stream`;
        const pinned = o.sseSetting;
        throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, tried, {
          operatorDetail: pinned ? `${pinned.written} tries only a GET (for Streamable HTTP use ${pinned.streamable}); ${tried}` : tried,
        });
      }
      throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, stream.clientError ?? stream.note, {
        operatorDetail: stream.error ?? stream.operatorNote ?? stream.note,
      });
    }
    const s: SseSession = {
      key,
      endpoint: stream.endpoint,
      stream,
      nextId: 0,
      calls: new CallTable(),
      hub: key === 'control' ? () => globalHub : () => subscribers.hubOf(key),
      auth,
      cred,
      // What the session's subscribers want: the control session's are gateway-wide.
      subs: subscriptionsOf(() => s, key === 'control' ? (uri) => controlInterest.has(uri) : (uri) => subscribers.wants(key, uri)),
      own: new Map(),
      ended: false,
      revision: '2024-11-05',
      ref,
    };
    // An event that is not JSON ends the stream, and is counted as a stdio child's line is.
    stream.onUnparsable = (bad) => s.calls.faults.message(bad, o.log, o.name);
    let init;
    let opened = false;
    try {
      // This transport's convention is to offer 2024-11-05, whatever the client speaks (the era client's default).
      const hello = era.initialize({ capabilities, clientInfo: info });
      init = await stream.call({ jsonrpc: '2.0', id: 'init', ...hello }, limits.upstreamRequestTimeoutMs);
    } catch (err) {
      stream.close();
      throw err;
    }
    // JSON-RPC 2.0 §6: a response inside a batch answers no request sent alone.
    const invalid = init.batched ? batchedResponse('initialize') : init.reply ? invalidResponse(init.reply, 'initialize') : undefined;
    if (invalid) {
      stream.close();
      throw invalid;
    }
    const result = init.reply?.result as JsonObject | undefined;
    if (!result) {
      stream.close();
      const why = init.refusedText !== undefined ? `POST answered HTTP ${init.postStatus}` : 'no reply';
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', {
        detail: `initialize failed: ${init.reply?.error ? rpcErrorWords(init.reply.error) : why}`,
        operatorDetail: `${urlForDisplay(url)}: initialize failed: ${init.reply?.error ? JSON.stringify(init.reply.error) : why}`,
      });
    }
    s.revision = era.negotiated(result);
    // Its answer came: the same reply again is a second response for `init`, not an unknown id
    // (docs/upstreams.md, "Second responses").
    s.calls.remember('init', 'initialize');
    await post(s, { jsonrpc: '2.0', ...era.initialized() }, {}, AbortSignal.timeout(limits.upstreamRequestTimeoutMs));
    // From now on every stream message is routed by the session, those that came during the
    // handshake first (docs/upstreams.md, "Messages during an HTTP+SSE handshake"); any past the
    // bound are said.
    stream.onMessage = (m) => route(s, m);
    if (stream.dropped > 0)
      o.log.warn({ upstream: o.name, dropped: stream.dropped, kept: MAX_EARLY_MESSAGES }, 'upstream messages dropped before its session routed them');
    stream.onEnd = () => {
      // Ended by the gateway (end: the pool let it go, or the connector closed), not lost.
      const lost = !s.ended && opened;
      s.ended = true;
      s.subs.stop();
      s.calls.failAll(upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, 'upstream SSE stream lost'));
      // No response can come any more: the gateway's own requests stop waiting.
      for (const own of [...s.own.values()]) own.done();
      const repair = () => {
        if (lost) streamLost(s);
      };
      // A lost stream means a new session (and a new initialize) next time. Only this session
      // leaves the pool: one evicted or replaced may end late, after a new session for the same
      // key opened, which stays (the rule of sessions.ts, sessionLost). The control session is
      // not pooled.
      const held = key === 'control' ? undefined : pool.peek(key);
      if (!held) return repair();
      void held.then((x) => {
        if (x === s) pool.drop(key, held);
        repair();
      }, repair);
    };
    // The stream ended while `initialized` was on its way: the session never opened (the caller's
    // pool forgets it), rather than one whose every call goes to a dead endpoint.
    if (s.ended) throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, 'upstream SSE stream lost during the handshake');
    // From now on an end of the stream is a loss to repair (streamLost), not a failed opening.
    opened = true;
    // What this client session subscribed to before (or while) its upstream session opened.
    s.subs.resync(subscribers.uris(key));
    return { s, init: result };
  };
  const end = (s: SseSession) => {
    s.ended = true;
    s.subs.stop();
    s.stream.close();
  };

  let closed = false;
  /** The gateway's own session; replaced by a new one when its stream is lost (`streamLost`). */
  let control!: SseSession;
  const reopen = createControlReopener({
    log: o.log,
    name: o.name,
    limits,
    open: async () => (await open('control', era.sharedCapabilities, o.clientInfo, {}, undefined)).s,
    reopened: (s) => {
      control = s;
      s.subs.resync(controlInterest.uris());
    },
    end,
    hub: () => globalHub,
  });
  /**
   * A session whose stream the upstream ended (it restarted, a proxy timed the stream out) once it
   * had opened: its calls failed and it left the pool already (onEnd). The control session opens
   * again at once, with backoff while the upstream cannot open one ({@link createControlReopener}).
   * A client's session with subscribers (its resource subscriptions, list changes) opens again at
   * once too, subscribes again and tells them every list may have changed, as a 2025 session lost
   * by its GET stream does: nothing else would, since the client may send no request for hours and
   * was promised its updates. It reopens by the control session's rule ({@link createControlReopener}:
   * at once, then with backoff while the upstream cannot open one, a loss right after a reopening
   * counted as a failed attempt, its subscribers told every list may have changed once it opened),
   * one reopener a client key, at most `maxSessions` (the oldest stops), each stopping once its key
   * has no subscribers left. Without subscribers the client's next request opens a new session.
   * @see 2024-11-05 basic/transports (HTTP with SSE)
   */
  const streamLost = (s: SseSession): void => {
    if (closed) return;
    // Only the current control session can be lost: one replaced had ended first.
    if (s.key === 'control') return reopen.lost();
    const ref = s.ref;
    if (!subscribers.hubOf(s.key) || !ref) return;
    const key = s.key;
    let r = clientReopeners.get(key);
    if (!r) {
      if (clientReopeners.size >= limits.maxSessions) {
        const [oldest, gone] = clientReopeners.entries().next().value!;
        gone.close();
        clientReopeners.delete(oldest);
      }
      const made: ControlReopener = createControlReopener({
        log: o.log,
        name: o.name,
        limits,
        session: poolKeyForLog(key),
        open: () => {
          // Its client's subscribers are gone: nothing to reopen for (the client's next request opens one).
          if (!subscribers.hubOf(key)) {
            made.close();
            clientReopeners.delete(key);
            return Promise.reject(new Error('no subscribers left'));
          }
          // Not refused (SWY_ERR_SESSION_LIMIT) in practice: this key has subscribers and left the
          // pool, so a full pool has a session without subscribers to end.
          return pool.get(ref).session;
        },
        // The pool holds it, subscribed again as it opened; a session opened while closing is the pool's to end.
        reopened: () => {},
        end: () => {},
        hub: () => subscribers.hubOf(key),
      });
      r = made;
      clientReopeners.set(key, r);
    }
    r.lost();
  };
  /** The reopeners of clients' sessions ({@link streamLost}), by pool key, oldest first (at most `maxSessions`). */
  const clientReopeners = new Map<string, ControlReopener>();

  const first = await open('control', era.sharedCapabilities, o.clientInfo, {}, undefined);
  control = first.s;
  const desc = era.describe(first.init, o.name);
  const pool: SessionPool<SseSession> = new SessionPool<SseSession>({
    max: limits.maxSessions,
    isolation: o.isolation,
    open: async (key, ref) => {
      if (key === 'shared') return (await open(key, era.sharedCapabilities, o.clientInfo, {}, undefined)).s;
      return (await open(key, ref.clientCapabilities, ref.clientInfo ?? o.clientInfo, authOf(o, ref), ref, ref)).s;
    },
    end,
    // A session with subscribers stays: only its client's end, or the upstream losing it, ends it.
    subscribers,
  });
  const controlInterest = new ResourceInterest(
    (uri) => control.subs.changed(uri),
    (uri) => control.subs.changed(uri),
  );
  const subscribe = (filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription => {
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
    revision: era.negotiated(first.init),
    describe: () => desc,
    async call(ctx) {
      const s = await pool.get(ctx).session;
      const id = ++s.nextId;
      const q = new CallQueue();
      s.calls.add(id, { queue: q, ctx });
      const extra = { ...authOf(o, ctx), ...traceHeaders(ctx) };
      try {
        await post(
          s,
          { jsonrpc: '2.0', id, method: ctx.method, params: era.requestParams(ctx, ctx.progressToken !== undefined ? id : undefined) },
          extra,
          ctx.signal,
          ctx,
        );
        const target: DriveTarget = {
          queue: q,
          strict: upstreamStrict(o.strict, s.revision),
          respond: (rid, answer) => send(s, { jsonrpc: '2.0', id: rid, ...answer }, extra, ctx),
          finish: () => s.calls.delete(id),
          elicitations: s.calls.elicitations,
          cancel: (reason) => {
            s.calls.delete(id);
            // basic/utilities/cancellation: the server learns it by notification; its late reply is dropped.
            send(s, { jsonrpc: '2.0', ...era.cancelled(id, reason) }, extra, ctx);
          },
        };
        const result = await driveCall(target, ctx, o.held, progressOf);
        if (result.resultType !== 'input_required') s.calls.delete(id);
        return result;
      } catch (err) {
        s.calls.delete(id);
        throw err;
      }
    },
    subscribe,
    subscribeSession(ref, filter, sink) {
      if (o.isolation === 'shared') return subscribe(filter, sink);
      // Refused before its session opens: one that opened would end another to make room.
      subscribers.admit(sessionKeyOf(ref, o.isolation));
      const { key, session } = pool.get(ref);
      return subscribers.add(
        key,
        filter,
        sink,
        (uri) => void session.then((s) => s.subs.changed(uri)).catch(() => {}),
        (uri) => void session.then((s) => s.subs.changed(uri)).catch(() => {}),
        ref,
      );
    },
    forwardNotification(sessionKey, n) {
      // Only to the client session's own upstream session, and only one already open or opening.
      pool.withOwnSession(sessionKey, (s) => {
        if (!s.ended) send(s, { jsonrpc: '2.0', method: n.method, params: n.params });
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
      for (const r of clientReopeners.values()) r.close();
      clientReopeners.clear();
      pool.clear();
      end(control);
    },
  };
}
