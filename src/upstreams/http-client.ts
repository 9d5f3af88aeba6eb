// Outbound HTTP for MCP upstreams: one POST (JSON or SSE answer), SSE streams, bounded reads.

import { request, type Dispatcher } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SwitchyardError } from '../core/errors.js';
import { parseBody, serialize, type JsonObject } from '../core/message.js';
import type { Limits } from '../core/limits.js';

/** The answer to one POST: its status and headers, and the JSON-RPC messages it carried. */
export interface PostAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** `json` (one object or array), `sse` (a stream of messages), or `empty` (202/204, no body). */
  kind: 'json' | 'sse' | 'empty' | 'other';
  /** The parsed JSON body (kind json). */
  json?: unknown;
  /** The raw body text (kind other), at most `maxExcerptBytes`. */
  text?: string;
  /** Messages of an SSE answer, in order (kind sse). Ends when the stream ends. */
  messages?: AsyncIterable<JsonObject>;
  /** The last SSE event id seen so far (for Last-Event-ID resumption). */
  lastEventId?: string;
  /** The last `retry` the server announced, ms. */
  retryMs?: number;
}

/** What outbound requests need from the configured limits. */
export type HttpLimits = Pick<Limits, 'maxBodyBytes' | 'maxIntegerDigits' | 'maxIdBytes' | 'maxJsonDepth'>;

/** Reads a response body as text, refusing more than `max` bytes. @throws SwitchyardError SWY_ERR_UPSTREAM_PROTOCOL */
export async function readText(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    n += (c as Buffer).length;
    if (n > max) {
      body.destroy();
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `response larger than ${max} bytes` });
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Turns an SSE body into JSON-RPC messages: `message` events (or events without a type)
 * parsed with the same limits as inbound bodies; other event types are passed to `onOther`.
 * @see WHATWG HTML §9.2 (event stream); 2025-11-25 basic/transports#streamable-http
 */
export async function* sseMessages(
  body: AsyncIterable<Buffer | string>,
  limits: HttpLimits,
  onOther?: (e: EventSourceMessage) => void,
  onMeta?: (meta: { id?: string; retryMs?: number }) => void,
): AsyncGenerator<JsonObject> {
  const queue: JsonObject[] = [];
  let bad: unknown;
  const parser = createParser({
    onRetry: (ms) => onMeta?.({ retryMs: ms }),
    onEvent: (e) => {
      if (e.id !== undefined) onMeta?.({ id: e.id });
      if (e.event !== undefined && e.event !== 'message') return onOther?.(e);
      if (e.data === '') return; // priming events carry no message
      try {
        const v = parseBody(e.data, limits).value;
        if (v && typeof v === 'object' && !Array.isArray(v)) queue.push(v as JsonObject);
      } catch (err) {
        bad = err;
      }
    },
  });
  for await (const chunk of body) {
    parser.feed(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    if (bad) throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'invalid JSON in an SSE event', cause: bad });
    while (queue.length > 0) yield queue.shift()!;
  }
}

/**
 * POSTs one JSON-RPC message with `Accept: application/json, text/event-stream`.
 * @param timeoutMs time to receive the response headers, ms.
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (connection refused, reset, timeout)
 */
export async function postMessage(
  url: string,
  message: unknown,
  headers: Record<string, string>,
  limits: HttpLimits,
  signal: AbortSignal | undefined,
  timeoutMs = 30_000,
): Promise<PostAnswer> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: 'POST',
      body: serialize(message),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: 0,
    });
  } catch (cause) {
    if (signal?.aborted) throw signal.reason ?? cause;
    throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${new URL(url).origin}: ${(cause as Error).message}`, cause });
  }
  const ct = String(res.headers['content-type'] ?? '').toLowerCase();
  const base = { status: res.statusCode, headers: res.headers };
  if (ct.startsWith('text/event-stream')) return sseAnswer(res, limits);
  if (ct.startsWith('application/json')) {
    const text = await readText(res.body, limits.maxBodyBytes * 4);
    try {
      return { ...base, kind: 'json', json: parseBody(text, limits).value };
    } catch {
      return { ...base, kind: 'other', text: text.slice(0, 2000) };
    }
  }
  const text = await readText(res.body, limits.maxBodyBytes * 4).catch(() => '');
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

/** Discards whatever is left of an answer (so the connection can be reused). */
export async function drain(answer: PostAnswer): Promise<void> {
  if (answer.messages) for await (const _ of answer.messages) void _;
}

/** A header value of a response, first one if repeated. */
export function headerOf(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Finds the response to `id` among an answer's messages, handing others to `onOther`. */
export async function responseIn(answer: PostAnswer, id: string | number, onOther: (m: JsonObject) => void | Promise<void>): Promise<JsonObject | undefined> {
  if (answer.kind === 'json') {
    const list = Array.isArray(answer.json) ? (answer.json as JsonObject[]) : [answer.json as JsonObject];
    return list.find((m) => m && m.id === id && ('result' in m || 'error' in m));
  }
  if (answer.kind === 'sse' && answer.messages) {
    for await (const m of answer.messages) {
      if (m.id === id && ('result' in m || 'error' in m) && !('method' in m)) return m;
      await onOther(m);
    }
  }
  return undefined;
}
