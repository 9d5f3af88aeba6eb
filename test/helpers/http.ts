// Test helper: raw HTTP with undici against a real listener, and SSE reading.

import assert from 'node:assert/strict';
import { request, type Dispatcher } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** A finished HTTP exchange. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
}

/** Headers a 2026-07-28 client sends for `method` (and `name` for Mcp-Name). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
  };
  if (name !== undefined) h['mcp-name'] = name;
  return h;
}

/** The protocol `_meta` of a 2026-07-28 request. */
export function modernMeta(caps: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': caps,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1.0.0' },
    ...extra,
  };
}

/** A 2026-07-28 request body. */
export function modernBody(id: unknown, method: string, params: Record<string, unknown> = {}, caps: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...modernMeta(caps), ...(params._meta as object | undefined) } } };
}

/** Sends one request and reads the whole body. */
export async function send(url: string, method: Dispatcher.HttpMethod, body: string | undefined, headers: Record<string, string>): Promise<RawResponse> {
  const res = await request(url, { method, body, headers });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** POSTs a JSON value (or raw string) with the given headers. */
export function post(url: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> {
  return send(url, 'POST', typeof body === 'string' ? body : JSON.stringify(body), headers);
}

/** The headers of a 2025-era POST: JSON body, both answer types accepted. */
export const H2025: Readonly<Record<string, string>> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/**
 * Opens a 2025-era session on `url` (initialize at `version` with `capabilities`, then
 * `notifications/initialized`), asserting 200 and 202; resolves with the headers of its later POSTs.
 */
export async function initSession(url: string, version = '2025-06-18', capabilities: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: version, capabilities, clientInfo: { name: 'raw-test', version: '1.0.0' } },
  };
  const r = await post(url, init, H2025);
  if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
  const h = { ...H2025, 'mcp-session-id': r.headers['mcp-session-id'] as string };
  const ack = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
  if (ack.status !== 202) throw new Error(`notifications/initialized: ${ack.status} ${ack.text}`);
  return h;
}

/** Parses a whole SSE body into events. */
export function parseSse(text: string): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  const p = createParser({ onEvent: (e) => out.push(e) });
  p.feed(text);
  return out;
}

/**
 * The JSON-RPC messages of a POST's answer, in order: its JSON body as one message, or each SSE
 * event's data parsed (events with no data, such as a priming event, left out).
 */
export function answerMessages(res: RawResponse): Array<Record<string, unknown>> {
  if (res.json) return [res.json as Record<string, unknown>];
  return parseSse(res.text)
    .filter((e) => e.data !== '')
    .map((e) => JSON.parse(e.data) as Record<string, unknown>);
}

/** An open SSE response read incrementally. */
export interface SseReader {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Resolves with the next event (waits up to `ms`). */
  next(ms?: number): Promise<EventSourceMessage>;
  /** Raw text received so far (comments included). */
  raw(): string;
  /** Resolves once the server ended the body (or the connection broke). */
  ended: Promise<void>;
  close(): void;
}

/** Opens a streaming request (GET or POST) and reads SSE events as they come. */
export async function openSse(url: string, method: Dispatcher.HttpMethod, headers: Record<string, string>, body?: string): Promise<SseReader> {
  const ac = new AbortController();
  const res = await request(url, { method, headers, body, signal: ac.signal });
  const queue: EventSourceMessage[] = [];
  const waiters: Array<(e: EventSourceMessage) => void> = [];
  let raw = '';
  const parser = createParser({
    onEvent: (e) => {
      const w = waiters.shift();
      if (w) w(e);
      else queue.push(e);
    },
  });
  // One decoder for the stream: a character split across two chunks is kept whole (decoding
  // each chunk alone turned it into U+FFFD, which a long multi-byte event hit under load).
  const decoder = new TextDecoder();
  res.body.on('data', (chunk: Buffer) => {
    const s = decoder.decode(chunk, { stream: true });
    raw += s;
    parser.feed(s);
  });
  res.body.on('error', () => {});
  const ended = new Promise<void>((resolve) => {
    res.body.on('end', resolve);
    res.body.on('close', resolve);
    res.body.on('error', resolve);
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    raw: () => raw,
    ended,
    next(ms = 5_000) {
      const e = queue.shift();
      if (e) return Promise.resolve(e);
      return new Promise((resolve, reject) => {
        const waiter = (ev: EventSourceMessage) => {
          clearTimeout(t);
          resolve(ev);
        };
        // A waiter that timed out leaves: left in place it would take (and lose) the next event.
        const t = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(new Error(`no SSE event within ${ms} ms; got so far: ${raw.slice(-500)}`));
        }, ms);
        waiters.push(waiter);
      });
    },
    close() {
      ac.abort();
    },
  };
}

/**
 * Reads the JSON-RPC messages of an SSE stream (events without data skipped) up to and including
 * the first response, or the response with `id` when given; waits up to 20 s for each event.
 */
export async function messagesUntilResponse(sse: SseReader, id?: string | number): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (;;) {
    const ev = await sse.next(20_000);
    if (!ev.data) continue;
    const m = JSON.parse(ev.data) as Record<string, unknown>;
    out.push(m);
    if (m.id !== undefined && m.method === undefined && (id === undefined || m.id === id)) return out;
  }
}

/**
 * The next JSON-RPC message on `sse`: the first event with data that is not an HTTP+SSE
 * `endpoint` event, parsed (events without data, such as priming events, are skipped). Rejects
 * when none comes within `ms` (ms).
 */
export async function nextSseMessage(sse: SseReader, ms = 10_000): Promise<Record<string, unknown>> {
  for (;;) {
    const ev = await sse.next(ms);
    if (ev.data && ev.event !== 'endpoint') return JSON.parse(ev.data) as Record<string, unknown>;
  }
}

/** An initialized HTTP+SSE (2024-11-05) session: its stream (past the `initialize` answer) and its POST URL. */
export interface HttpSseSession {
  sse: SseReader;
  /** The message URL the `endpoint` event named, resolved. */
  to: string;
}

/**
 * Opens an HTTP+SSE session on `origin` (`GET /sse`, the `endpoint` event, `initialize` offering
 * 2024-11-05 with `capabilities`, its answer read off the stream, `notifications/initialized`),
 * asserting each step; `headers` go on the GET and each POST (an `authorization`). The stream is
 * closed at teardown.
 * @see 2024-11-05 basic/transports (HTTP with SSE)
 */
export async function openHttpSseSession(
  t: { after(fn: () => void): void },
  origin: string,
  capabilities: Record<string, unknown> = {},
  clientName = 'raw-test',
  headers: Record<string, string> = {},
): Promise<HttpSseSession> {
  const sse = await openSse(`${origin}/sse`, 'GET', { accept: 'text/event-stream', ...headers });
  t.after(() => sse.close());
  const endpoint = await sse.next();
  if (endpoint.event !== 'endpoint') throw new Error(`first event: ${endpoint.event ?? 'message'}, not endpoint`);
  const to = new URL(endpoint.data, `${origin}/sse`).href;
  const h = { 'content-type': 'application/json', ...headers };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities, clientInfo: { name: clientName, version: '1' } },
  };
  const posted = await send(to, 'POST', JSON.stringify(init), h);
  if (posted.status !== 202) throw new Error(`initialize: ${posted.status} ${posted.text}`);
  await sse.next();
  const ack = await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), h);
  if (ack.status !== 202) throw new Error(`notifications/initialized: ${ack.status} ${ack.text}`);
  return { sse, to };
}

/**
 * Opens `n` 2026-07-28 `subscriptions/listen` streams (tools list changes) at `url`, stream `i`
 * with its own opaque bearer token `opaque-i_0123456789abcdef` (an introspected credential each),
 * each closed by `t.after`; resolves once every one answered 200 and its acknowledgement came.
 * @throws Error naming the stream whose status or first event was something else
 */
export async function openTokenListens(t: { after(fn: () => void): void }, url: string, n: number): Promise<SseReader[]> {
  const listens: SseReader[] = [];
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify(modernBody(7, 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
    const sse = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization: `Bearer opaque-${i}_0123456789abcdef` }, body);
    t.after(() => sse.close());
    if (sse.status !== 200) throw new Error(`listen ${i}: HTTP ${sse.status}`);
    const first = (JSON.parse((await sse.next()).data) as { method?: string }).method;
    if (first !== 'notifications/subscriptions/acknowledged') throw new Error(`listen ${i}: first event ${String(first)}`);
    listens.push(sse);
  }
  return listens;
}

/**
 * Opens one 2026-07-28 `subscriptions/listen` stream at `url` for resource updates of `uris`,
 * closed by `t.after`; resolves once its acknowledgement came and named exactly those URIs.
 * @throws AssertionError when the first event is not that acknowledgement
 */
export async function listenResources(t: { after(fn: () => void): void }, url: string, uris: readonly string[]): Promise<SseReader> {
  const body = JSON.stringify(modernBody('L1', 'subscriptions/listen', { notifications: { resourceSubscriptions: uris } }));
  const listen = await openSse(url, 'POST', modernHeaders('subscriptions/listen'), body);
  t.after(() => listen.close());
  const ack = JSON.parse((await listen.next()).data) as { method: string; params: { notifications: unknown } };
  assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
  assert.deepEqual(ack.params.notifications, { resourceSubscriptions: uris });
  return listen;
}
