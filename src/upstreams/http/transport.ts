// Outbound HTTP for MCP upstreams: one POST (JSON or SSE answer), SSE streams decoded as a
// stream of UTF-8, bounded reads, and network errors said once.

import { request, type Dispatcher } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SwitchyardError, type ErrorCode } from '../../core/errors.js';
import type { Limits } from '../../core/limits.js';
import { parseBody, serialize, type JsonObject } from '../../core/message.js';
import { upstreamMessages } from '../../core/upstream-answers.js';
import type { RequestContext } from '../../core/request.js';
import { urlForDisplay } from '../../core/url-text.js';
import { afterLargeMessage } from '../../io/large-message.js';
import { judgeRedirect } from './redirect.js';
import type { BadMessage } from '../routing.js';

/** The answer to one POST: its status and headers, and the JSON-RPC messages it carried. */
export interface PostAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** `json` (one object or array), `sse` (a stream of messages), `empty` (no body), `other` (anything else). */
  kind: 'json' | 'sse' | 'empty' | 'other';
  /** The parsed JSON body (kind json). */
  json?: unknown;
  /** The body text (kind other), at most 2,000 characters. */
  text?: string;
  /**
   * Set when the body was said to be JSON (`Content-Type: application/json`) and is not (or is
   * past the message bounds): its first {@link UNPARSABLE_EXCERPT_CHARS} characters, for the
   * reader to count (`UpstreamFaults.unparsable`). The answer is then kind `other`.
   */
  unparsable?: string;
  /** Messages of an SSE answer, in order (kind sse). Ends when the stream ends. */
  messages?: AsyncIterable<JsonObject>;
  /** The last SSE event id seen so far (for Last-Event-ID resumption). */
  lastEventId?: string;
  /** The last `retry` the server announced, ms. */
  retryMs?: number;
  /** Where the answer came from, when same-origin 307/308 redirects led away from the URL asked (postMessage). */
  url?: string;
}

/** Characters of an upstream's message that is not JSON kept for its log line. */
export const UNPARSABLE_EXCERPT_CHARS = 200;

/**
 * Characters the SSE parser may buffer beyond `maxUpstreamMessageBytes`: what it buffers of a line
 * cut between chunks includes the field's name (`data: `) and line end, which are no part of the
 * event's data. The bound itself is held exactly on each event's data ({@link sseMessages}).
 */
const SSE_FIELD_SLACK_CHARS = 64;

/** What the SSE event each error thrown by {@link sseMessages} for an event it could not read was. */
const invalidEvents = new WeakMap<object, BadMessage>();

/**
 * The event `err` was thrown for by {@link sseMessages}: one that is not JSON (the first
 * {@link UNPARSABLE_EXCERPT_CHARS} characters of its data), or one over the bound (`overChars`);
 * undefined for any other error (a broken stream). Its reader counts it (`UpstreamFaults.message`).
 */
export function invalidEventOf(err: unknown): BadMessage | undefined {
  return typeof err === 'object' && err !== null ? invalidEvents.get(err) : undefined;
}

/** What outbound HTTP needs from the configured limits. */
export type HttpLimits = Pick<Limits, 'maxIntegerDigits' | 'maxIdBytes' | 'maxJsonDepth' | 'maxUpstreamMessageBytes'>;

/**
 * The text of a network failure, once: the error's message, or its code and the messages of
 * the attempts it gathers (happy-eyeballs connects fail with an AggregateError and no message).
 */
export function networkErrorText(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown; cause?: unknown };
  if (err instanceof SwitchyardError && err.cause !== undefined) return networkErrorText(err.cause);
  if (typeof e?.message === 'string' && e.message !== '') return e.message;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return [...new Set(e.errors.map((x) => networkErrorText(x)))].join('; ');
  if (typeof e?.code === 'string') return e.code;
  return String(err);
}

/** The first error code found on `err`, its `cause` or its first aggregated error (undici wraps node's). */
function networkCode(err: unknown, depth = 0): string | undefined {
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown } | null | undefined;
  if (e === null || e === undefined || depth > 4) return undefined;
  if (typeof e.code === 'string' && e.code !== '' && !(err instanceof SwitchyardError)) return e.code;
  return networkCode(e.cause, depth + 1) ?? (Array.isArray(e.errors) ? networkCode(e.errors[0], depth + 1) : undefined);
}

/**
 * A network failure reaching an upstream in words a client may read: what failed, told by its
 * error code (`connection refused`, `TLS handshake failed (CERT_HAS_EXPIRED)`), never the address
 * node's own message carries (`connect ECONNREFUSED 10.0.0.7:8080`): the upstream's host and port
 * are the operator's ({@link networkErrorText} keeps them for the log and /status.json).
 * @see docs/security.md, threat model (upstream URLs)
 */
export function networkErrorWords(err: unknown): string {
  const code = networkCode(err);
  if (code === undefined) return 'network error';
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'connection closed by the upstream';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not resolved';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
  }
  const safe = /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'unknown';
  if (/^(ERR_TLS_|ERR_SSL_|CERT_)|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)) return `TLS handshake failed (${safe})`;
  return `network error (${safe})`;
}

/**
 * An HTTP upstream's failure: `detail` in words a client may read (no address), and the
 * operator's text (`operatorDetail`, default `detail`) after the upstream's origin, for the
 * `request failed` line, `lastError` and /status.json ({@link SwitchyardError.operatorMessage}).
 * @param url the upstream URL (or its HTTP+SSE endpoint) the failure concerns; only its origin is shown.
 * @see docs/security.md, threat model (upstream URLs: the origin is the operator's)
 */
export function upstreamFailure(
  code: ErrorCode,
  url: string | URL,
  detail: string,
  opts: { operatorDetail?: string; cause?: unknown; data?: Record<string, unknown> } = {},
): SwitchyardError {
  return new SwitchyardError(code, {
    detail,
    operatorDetail: `${urlForDisplay(url)}: ${opts.operatorDetail ?? detail}`,
    ...(opts.cause !== undefined ? { cause: opts.cause } : {}),
    ...(opts.data !== undefined ? { data: opts.data } : {}),
  });
}

/** Reads a response body whole, refusing more than `maxBytes`, and decodes it as UTF-8 once complete. @throws SwitchyardError SWY_ERR_UPSTREAM_PROTOCOL */
export async function readText(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    n += (c as Buffer).length;
    if (n > maxBytes) {
      body.destroy();
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `response larger than ${maxBytes} bytes` });
    }
    chunks.push(c as Buffer);
  }
  // Decoding the whole body at once: a character split across chunks arrives intact.
  const text = Buffer.concat(chunks, n).toString('utf8');
  afterLargeMessage(n);
  return text;
}

/**
 * Turns an SSE body into JSON-RPC messages: `message` events (or events without a type) are
 * parsed with the same bounds as inbound bodies, an array's members given one by one and marked
 * as batched (`isBatched`: a response in a batch is never an answer); other event types go to `onOther`. The bytes
 * are decoded as one UTF-8 stream (a character split across chunks arrives intact); an event
 * whose data is over `maxUpstreamMessageBytes` characters ends the stream, however its bytes were
 * cut, and the parser buffers little more than that of one event. `onEvent`, when
 * given, sees every event first, in stream order, whatever its type (the HTTP+SSE stream's
 * "endpoint first" check needs the order the queue of messages does not keep).
 * @see WHATWG HTML §9.2 (event streams are UTF-8); 2025-11-25 basic/transports#streamable-http
 * @throws SwitchyardError SWY_ERR_UPSTREAM_PROTOCOL (invalid JSON in an event, an event over
 *   the bound: {@link invalidEventOf} tells which)
 */
export async function* sseMessages(
  body: AsyncIterable<Buffer | string>,
  limits: HttpLimits,
  onOther?: (e: EventSourceMessage) => void,
  onMeta?: (meta: { id?: string; retryMs?: number }) => void,
  onEvent?: (e: EventSourceMessage) => void,
): AsyncGenerator<JsonObject> {
  const queue: JsonObject[] = [];
  let bad: SwitchyardError | undefined;
  const decoder = new TextDecoder('utf-8');
  const oversize = () => {
    if (bad) return;
    bad = new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `an SSE event larger than ${limits.maxUpstreamMessageBytes} characters` });
    invalidEvents.set(bad, { overChars: limits.maxUpstreamMessageBytes });
  };
  const parser = createParser({
    maxBufferSize: limits.maxUpstreamMessageBytes + SSE_FIELD_SLACK_CHARS,
    onRetry: (ms) => onMeta?.({ retryMs: ms }),
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded') oversize();
    },
    onEvent: (e) => {
      // Nothing after an event that ends the stream (not JSON, over the bound), though the same chunk carried it.
      if (bad) return;
      // The parser bounds only what it buffers across chunks (field names included): each event's
      // data is held to the bound here, so that it does not depend on how the bytes were cut
      // (docs/upstreams.md, "Messages that cannot be read").
      if (e.data.length > limits.maxUpstreamMessageBytes) return oversize();
      onEvent?.(e);
      if (e.id !== undefined) onMeta?.({ id: e.id });
      if (e.event !== undefined && e.event !== 'message') return onOther?.(e);
      if (e.data === '') return; // priming events carry no message
      try {
        const v = parseBody(e.data, limits).value;
        afterLargeMessage(e.data.length);
        // An array (a batch) gives its members, marked: each reader decides what a batched one may be (isBatched).
        for (const m of upstreamMessages(v)) queue.push(m);
      } catch (cause) {
        if (!bad) {
          bad = new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'invalid JSON in an SSE event', cause });
          invalidEvents.set(bad, { excerpt: e.data.slice(0, UNPARSABLE_EXCERPT_CHARS) });
        }
      }
    },
  });
  for await (const chunk of body) {
    if (!bad) parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
    if (bad) throw bad;
  }
  parser.feed(decoder.decode());
  while (queue.length > 0) yield queue.shift()!;
  if (bad) throw bad;
}

/** W3C trace context headers of a request, when the tracing interceptor set one. @see W3C Trace Context §3 */
export function traceHeaders(ctx: Pick<RequestContext, 'traceContext'> | undefined): Record<string, string> {
  const tc = ctx?.traceContext;
  if (!tc) return {};
  return tc.tracestate !== undefined ? { traceparent: tc.traceparent, tracestate: tc.tracestate } : { traceparent: tc.traceparent };
}

/**
 * POSTs one JSON-RPC message with `Accept: application/json, text/event-stream`. With `follow`
 * (the connectors), same-origin 307/308 redirects are followed with the same body and headers,
 * by the one rule (judgeRedirect), and the answer's `url` says where it came from; any other
 * redirect is refused. Without it (the probe, which reports each hop) a 3xx is returned as is.
 * @param headersTimeoutMs time to receive the response headers, ms.
 * @param dispatcher the upstream's own undici Agent (bounded connections); the global one when absent.
 * @param follow follow redirects by the one rule (default false).
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (connection refused, reset: the URL's
 *   origin and the network error, said once), SWY_ERR_REQ_DEADLINE (no response headers within
 *   `headersTimeoutMs`), SWY_ERR_UPSTREAM_PROTOCOL (with `follow`: a redirect the rule refuses,
 *   named); the signal's reason when it aborted
 * @see RFC 9110 §15.4.8, §15.4.9
 */
export async function postMessage(
  url: string,
  message: unknown,
  headers: Record<string, string>,
  limits: HttpLimits,
  signal: AbortSignal | undefined,
  headersTimeoutMs: number,
  dispatcher?: Dispatcher,
  follow = false,
): Promise<PostAnswer> {
  const body = serialize(message);
  const origin = follow ? new URL(url).origin : '';
  let at = url;
  for (let followed = 0; ; followed++) {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(at, {
        dispatcher,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        signal,
        headersTimeout: headersTimeoutMs,
        bodyTimeout: 0,
      });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason ?? cause;
      // No answer within the upstream's own requestTimeoutMs (a call through the aggregate has a
      // longer deadline of its own): that is the deadline, not an unreachable upstream.
      if ((cause as { code?: unknown } | null)?.code === 'UND_ERR_HEADERS_TIMEOUT')
        throw new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `${headersTimeoutMs} ms`, cause });
      throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', url, networkErrorWords(cause), { operatorDetail: networkErrorText(cause), cause });
    }
    const redirect = follow ? judgeRedirect(res.statusCode, res.headers, at, origin, followed) : undefined;
    if (!redirect) {
      const answer = await answerOf(res, limits);
      // Set on the answer itself: an SSE answer's reader keeps updating that object.
      if (at !== url) answer.url = at;
      return answer;
    }
    await res.body.dump().catch(() => {});
    if ('refuse' in redirect)
      throw upstreamFailure('SWY_ERR_UPSTREAM_PROTOCOL', url, redirect.refuse, { operatorDetail: redirect.operatorRefuse ?? redirect.refuse });
    at = redirect.follow;
  }
}

/** Reads a response as a PostAnswer: SSE lazily, JSON and anything else whole (bounded). */
export async function answerOf(res: Dispatcher.ResponseData, limits: HttpLimits): Promise<PostAnswer> {
  const ct = String(res.headers['content-type'] ?? '').toLowerCase();
  const base = { status: res.statusCode, headers: res.headers };
  if (ct.startsWith('text/event-stream')) return sseAnswer(res, limits);
  if (ct.startsWith('application/json')) {
    const text = await readText(res.body, limits.maxUpstreamMessageBytes);
    try {
      return { ...base, kind: 'json', json: parseBody(text, limits).value };
    } catch {
      return { ...base, kind: 'other', text: text.slice(0, 2000), unparsable: text.slice(0, UNPARSABLE_EXCERPT_CHARS) };
    }
  }
  const text = await readText(res.body, limits.maxUpstreamMessageBytes).catch(() => '');
  return { ...base, kind: text === '' ? 'empty' : 'other', text: text.slice(0, 2000) };
}

/** An SSE response as an answer whose messages are read lazily, tracking event ids and `retry`. */
export function sseAnswer(res: Dispatcher.ResponseData, limits: HttpLimits): PostAnswer {
  const answer: PostAnswer = { status: res.statusCode, headers: res.headers, kind: 'sse' };
  answer.messages = sseMessages(res.body, limits, undefined, (m) => {
    if (m.id !== undefined) answer.lastEventId = m.id;
    if (m.retryMs !== undefined) answer.retryMs = m.retryMs;
  });
  return answer;
}

/**
 * Discards whatever is left of an answer (so the connection can be reused). With `unparsable`, a
 * body that is not JSON, or an SSE event that is not or is over the bound, is handed to it first
 * (to be counted).
 * @throws what reading the SSE answer throws
 */
export async function drain(answer: PostAnswer, unparsable?: (bad: BadMessage) => void): Promise<void> {
  if (answer.unparsable !== undefined) unparsable?.({ excerpt: answer.unparsable });
  try {
    if (answer.messages) for await (const _ of answer.messages) void _;
  } catch (err) {
    const bad = invalidEventOf(err);
    if (bad !== undefined) unparsable?.(bad);
    throw err;
  }
}

/** A header value of a response, the first one if repeated. */
export function headerOf(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * POSTs a message whose answer nobody waits for (a notification, an answer to a server request,
 * a cancellation): bounded by `timeoutMs`, its answer drained, failures dropped (the call it
 * belongs to learns of a broken upstream on its own stream). An answer that is not JSON (a body,
 * an SSE event) or an event over the bound still goes to `unparsable`, to be counted
 * (docs/upstreams.md, "Second responses").
 */
export function postAndForget(
  url: string,
  message: unknown,
  headers: Record<string, string>,
  limits: HttpLimits,
  timeoutMs: number,
  dispatcher?: Dispatcher,
  unparsable?: (bad: BadMessage) => void,
): void {
  postMessage(url, message, headers, limits, AbortSignal.timeout(timeoutMs), timeoutMs, dispatcher)
    .then((a) => drain(a, unparsable))
    .catch(() => {});
}
