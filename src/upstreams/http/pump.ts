// The answer pump: one POST's answer (JSON or SSE) turned into a call's events, resuming an SSE
// answer the server closes before the response.

import { setTimeout as sleep } from 'node:timers/promises';
import type { CallEvent, CallQueue } from '../../core/calls.js';
import { rpcErrorWords, SwitchyardError } from '../../core/errors.js';
import { askWithoutTask } from '../../core/gate.js';
import type { Limits } from '../../core/limits.js';
import { batchAllowed, batchedResponse, invalidResponse, isBatched, upstreamMessages } from '../../core/upstream-answers.js';
import type { JsonObject, RequestId } from '../../core/message.js';
import { invalidEventOf, type PostAnswer } from './transport.js';
import type { BadMessage } from '../routing.js';

/** Resumes a broken SSE answer after an event id (a GET with Last-Event-ID); undefined when it cannot. */
export type Resume = (lastEventId: string) => Promise<PostAnswer | undefined>;

/** How one answer is pumped. */
export interface PumpOptions {
  /** Messages of the answer that belong to no call event (e.g. a list change on a POST stream). */
  other: (m: JsonObject) => void;
  /** Resumption, for eras that have it (2025 Streamable HTTP). */
  resume?: Resume;
  /** `maxUpstreamResumes` bounds the resumptions; `upstreamBackoffMaxMs` caps the server's `retry`. */
  limits: Pick<Limits, 'maxUpstreamResumes' | 'upstreamBackoffMaxMs'>;
  /** Aborts the wait before a resumption. */
  signal?: AbortSignal;
  /** The request's method, named in the error for an answer that is no response (`tools/call: …`). */
  method?: string;
  /** The revision the upstream speaks: a 2025-03-26 one's batched requests and notifications are taken, any other's dropped (undefined: none taken). */
  revision?: string;
  /**
   * Where a message of a batch that the answer's reader does not take goes, to be counted and
   * said (`UpstreamFaults.batched`): a response that is not this call's, or a request or
   * notification from an upstream not speaking 2025-03-26. Omitted: dropped unsaid.
   */
  batched?: (m: JsonObject) => void;
  /**
   * Where a message that cannot be read goes, to be counted and said (`UpstreamFaults.message`):
   * a JSON body that is not JSON, an SSE event whose data is not, an SSE event over the bound.
   * The call fails as it would without it. Omitted: not counted.
   */
  unparsable?: (bad: BadMessage) => void;
  /**
   * Called once when the response to the request comes (before the call's queue gets it), so
   * that its connection takes the call out of its table and remembers the id as answered
   * (`CallTable.answer`): a second response for it, on another stream, is then told as such.
   */
  answered?: () => void;
}

/**
 * Why a call's first event is not its result, in Switchyard's own words: `JSON-RPC error -32603`
 * (the code only: the error's message and data are the upstream's words, which go to the operator
 * as `JSON.stringify(ev)`), or `a request instead of the result` for a server request, progress or
 * a log message where a setup call (initialize, server/discover) wanted its result.
 */
export function notResultWords(ev: CallEvent): string {
  return ev.kind === 'error' ? rpcErrorWords(ev.error) : `a ${ev.kind} instead of the result`;
}

/**
 * A message that belongs to the call whose answer carries it (progress, a log message, a
 * server request on its stream) as a CallEvent; undefined for anything else.
 */
export function toEvent(m: JsonObject): CallEvent | undefined {
  if (typeof m.method !== 'string') return undefined;
  const params = (m.params ?? {}) as JsonObject;
  if ('id' in m && m.id !== null && m.id !== undefined)
    return { kind: 'request', id: m.id as RequestId, method: m.method, params: askWithoutTask(m.method, params) };
  if (m.method === 'notifications/progress') return { kind: 'progress', params };
  if (m.method === 'notifications/message') return { kind: 'log', params };
  return undefined;
}

/**
 * The error of a JSON answer that is one error response tied to no request (id null, or, as some
 * servers send it, absent): the server could not read the request, or refused it before reading
 * it, and since a POST carries exactly one request it is that request's answer (JSON-RPC 2.0 §5,
 * Response object: id). Undefined for any other answer.
 * @see JSON-RPC 2.0 §5
 */
export function unattributedError(answer: PostAnswer): JsonObject | undefined {
  const m = answer.kind === 'json' ? answer.json : undefined;
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return undefined;
  const msg = m as JsonObject;
  if ((msg.id !== null && msg.id !== undefined) || 'method' in msg || 'result' in msg) return undefined;
  return msg.error !== null && typeof msg.error === 'object' && !Array.isArray(msg.error) ? (msg.error as JsonObject) : undefined;
}

/**
 * True when an answer on an upstream session says the server no longer knows that session: a 404,
 * or a 400 whose body is one error tied to no request, as servers built like the SDK's documented
 * example answer an unknown session id ("No valid session ID provided"), after a restart too.
 * @see 2025-11-25 basic/transports#session-management (404: start a new session)
 */
export function sessionUnknown(answer: PostAnswer): boolean {
  return answer.status === 404 || (answer.status === 400 && unattributedError(answer) !== undefined);
}

/**
 * Pushes the events of the answer to request `id` into `queue`, ending with its result or
 * error. An SSE answer that ends before the response is resumed when it carried event ids,
 * at most `maxUpstreamResumes` times, after the server's `retry` (capped); otherwise the queue
 * fails with SWY_ERR_UPSTREAM_UNAVAILABLE.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (a server may close after an
 *   id-bearing event; the client reconnects with Last-Event-ID after `retry` ms)
 */
export async function pump(answer: PostAnswer, id: RequestId, queue: CallQueue, o: PumpOptions): Promise<void> {
  for (let n = 0; n < o.limits.maxUpstreamResumes && answer.kind === 'sse' && o.resume; n++) {
    if (await pumpOnce(answer, id, queue, o, true)) return;
    const last = answer.lastEventId;
    if (last === undefined) break;
    try {
      await sleep(Math.min(answer.retryMs ?? 0, o.limits.upstreamBackoffMaxMs), undefined, { signal: o.signal });
    } catch {
      return queue.fail(o.signal?.reason ?? new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
    }
    const next = await o.resume(last).catch(() => undefined);
    if (!next) break;
    next.lastEventId ??= last;
    answer = next;
  }
  await pumpOnce(answer, id, queue, o, false);
}

/** One answer's events; true when the response came (false: the stream ended first, and `quiet` left the queue open). */
async function pumpOnce(answer: PostAnswer, id: RequestId, queue: CallQueue, o: PumpOptions, quiet: boolean): Promise<boolean> {
  const { other, method } = o;
  const take = (m: JsonObject) => {
    // Same type and value (`===`): a response `"1"` does not answer our request `1` (JSON-RPC 2.0 §5).
    if (m.id === id && !('method' in m)) {
      o.answered?.();
      // JSON-RPC 2.0 §6: a batch is answered only to a batch, and a POST of ours carries one request.
      if (isBatched(m)) {
        queue.fail(batchedResponse(method));
        return true;
      }
      const bad = invalidResponse(m, method);
      if (bad) queue.fail(bad);
      else if ('error' in m) queue.push({ kind: 'error', error: m.error as never });
      else queue.push({ kind: 'result', result: m.result as JsonObject });
      return true;
    }
    // A batch's other responses answer nothing of ours; its requests and notifications only a 2025-03-26 upstream may send.
    if (isBatched(m) && (!('method' in m) || !batchAllowed(o.revision))) {
      o.batched?.(m);
      return false;
    }
    const ev = toEvent(m);
    if (ev) queue.push(ev);
    else other(m);
    return false;
  };
  if (answer.kind === 'json') {
    for (const m of upstreamMessages(answer.json)) if (take(m)) return true;
    const unread = unattributedError(answer);
    if (unread) {
      queue.push({ kind: 'error', error: unread as never });
      return true;
    }
    // A refusal with a JSON body that is no JSON-RPC message (an OAuth resource server's
    // `{"error":"invalid_token"}`, RFC 6750 §3) is that HTTP error, as with any other body.
    if (answer.status < 200 || answer.status > 299) return refusedWith(answer.status, JSON.stringify(answer.json), queue);
    queue.fail(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'JSON answer without the response' }));
    return true;
  }
  if (answer.kind === 'sse' && answer.messages) {
    try {
      for await (const m of answer.messages) if (take(m)) return true;
    } catch (err) {
      const bad = invalidEventOf(err);
      if (bad !== undefined) o.unparsable?.(bad);
      if (quiet && !(err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_PROTOCOL')) return false;
      queue.fail(err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'stream broke', cause: err }));
      return true;
    }
    if (quiet) return false;
    queue.fail(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'stream ended before the response' }));
    return true;
  }
  if (answer.unparsable !== undefined) o.unparsable?.({ excerpt: answer.unparsable });
  return refusedWith(answer.status, answer.text, queue);
}

/**
 * Fails `queue` with the HTTP error `status`. The body is the upstream's words, and may repeat the
 * credential the gateway sent it (`Invalid API key: sk-…`): the operator's (the log line, at most
 * 2,000 characters of it), never the client's, as a stdio child's stderr is.
 */
function refusedWith(status: number, body: string | undefined, queue: CallQueue): true {
  const refused = new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `HTTP ${status}` });
  const said = body?.trim().slice(0, 2000);
  queue.fail(said ? new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { message: refused.message, operatorMessage: `${refused.message} ${said}` }) : refused);
  return true;
}
