// HTTP upstreams of every era: 2026-07-28 stateless, 2025 Streamable HTTP sessions, and
// 2024-11-05 HTTP+SSE. The era is probed (`era: auto`) or configured.

import { request } from 'undici';
import { LRUCache } from 'lru-cache';
import { CallQueue, driveCall, HeldCalls, resumeCall, type CallEvent, type DriveTarget, type Respond } from '../core/calls.js';
import type { CoreLog } from '../core/exchange.js';
import { SwitchyardError } from '../core/errors.js';
import { encodeHeaderValue } from '../core/headers.js';
import type { Limits } from '../core/limits.js';
import { serialize, type JsonObject, type RequestId } from '../core/message.js';
import type { Implementation, RequestContext, SubscriptionFilter } from '../core/request.js';
import { paramHeadersOf, type ParamHeader } from '../core/router.js';
import { honouredFilter, NotificationHub, ResourceInterest, type ServerDescription, type Subscription, type Upstream } from '../core/upstream.js';
import { MODERN_REVISION, STREAMABLE_REVISIONS } from '../core/versions.js';
import { drain, headerOf, postMessage, sseAnswer, type PostAnswer } from './http-client.js';
import { openLegacyStream, probeUrl } from './probe.js';

/** The eras an HTTP upstream can be pinned to, or `auto` to probe. */
export type HttpEra = 'auto' | '2024-11-05' | '2025-03-26' | '2025-06-18' | '2025-11-25' | '2026-07-28';

/** Settings of one HTTP upstream. */
export interface HttpUpstreamOptions {
  /** Name in logs and config. */
  name: string;
  /** The server's MCP URL (for HTTP+SSE: its SSE URL). */
  url: string;
  /** Headers sent on every request (e.g. Authorization for this upstream). */
  headers?: Record<string, string>;
  /** `auto` (default) probes; anything else skips the probe. */
  era?: HttpEra;
  /** Stateful upstreams: one upstream session per client session (default) or one for all. */
  isolation?: 'per-session' | 'shared';
  log: CoreLog;
  limits: Limits;
  /** The gateway's Implementation, sent when a client has none. */
  clientInfo: Implementation;
  /** Holds calls waiting for a 2026 client's input (shared across upstreams). */
  held: HeldCalls;
  /** Time for a response's headers, ms (default 30,000). */
  timeoutMs?: number;
  /** Forward the client's `Authorization` header (default false: never). */
  forwardAuthorization?: boolean;
}

/** Capabilities the gateway declares on shared upstream sessions, so servers offer input tools (not `roots`: see stdio.ts). */
const GATEWAY_CAPS = { elicitation: {}, sampling: {} };

/** A connector for one era. */
interface Connector {
  describe(): ServerDescription;
  call(ctx: RequestContext): Promise<JsonObject>;
  subscribe(filter: SubscriptionFilter, sink: Parameters<Upstream['subscribe']>[1]): Subscription;
  release(sessionKey: string): void;
  close(): Promise<void>;
}

/** Resumes a broken SSE answer from an event id (a GET with Last-Event-ID); undefined when it cannot. */
type Resume = (lastEventId: string) => Promise<PostAnswer | undefined>;

/** Resumptions of one answer before the call fails. */
const MAX_RESUMES = 10;

/**
 * Events of one answer (JSON or SSE) pushed into a call queue; server messages unrelated to the
 * call go to `other`. An SSE answer that ends before the response is resumed with `resume`
 * when it carried event ids (2025-11-25 basic/transports#resumability-and-redelivery: a server
 * may close the connection after an id-bearing event; the client reconnects with Last-Event-ID
 * after `retry` ms).
 */
async function pump(answer: PostAnswer, id: RequestId, queue: CallQueue, other: (m: JsonObject) => void, resume?: Resume): Promise<void> {
  for (let n = 0; n < MAX_RESUMES && answer.kind === 'sse' && resume; n++) {
    const done = await pumpOnce(answer, id, queue, other, true);
    if (done) return;
    const last = answer.lastEventId;
    if (last === undefined) break;
    await new Promise((r) => setTimeout(r, Math.min(answer.retryMs ?? 0, 5_000)));
    const next = await resume(last).catch(() => undefined);
    if (!next) break;
    next.lastEventId ??= last;
    answer = next;
  }
  await pumpOnce(answer, id, queue, other, false);
}

/** One answer's events; returns true when the response came (false: the stream ended first, and `quiet` left the queue open). */
async function pumpOnce(answer: PostAnswer, id: RequestId, queue: CallQueue, other: (m: JsonObject) => void, quiet: boolean): Promise<boolean> {
  const take = (m: JsonObject) => {
    if (m.id === id && !('method' in m)) {
      if (m.error) queue.push({ kind: 'error', error: m.error as never });
      else queue.push({ kind: 'result', result: (m.result ?? {}) as JsonObject });
      return true;
    }
    const ev = toEvent(m);
    if (ev) queue.push(ev);
    else other(m);
    return false;
  };
  if (answer.kind === 'json') {
    const list = Array.isArray(answer.json) ? (answer.json as JsonObject[]) : [answer.json as JsonObject];
    for (const m of list) if (m && typeof m === 'object' && take(m)) return true;
    queue.fail(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'JSON answer without the response' }));
    return true;
  }
  if (answer.kind === 'sse' && answer.messages) {
    try {
      for await (const m of answer.messages) if (take(m)) return true;
    } catch (err) {
      if (quiet) return false;
      queue.fail(err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'stream broke', cause: err }));
      return true;
    }
    if (quiet) return false;
    queue.fail(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'stream ended before the response' }));
    return true;
  }
  queue.fail(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `HTTP ${answer.status} ${answer.text ?? ''}`.trim() }));
  return true;
}

/** A message that belongs to a call (progress, log, server request) as a CallEvent. */
function toEvent(m: JsonObject): CallEvent | undefined {
  if (typeof m.method !== 'string') return undefined;
  const params = (m.params ?? {}) as JsonObject;
  if ('id' in m && m.id !== null && m.id !== undefined) return { kind: 'request', id: m.id as RequestId, method: m.method, params };
  if (m.method === 'notifications/progress') return { kind: 'progress', params };
  if (m.method === 'notifications/message') return { kind: 'log', params };
  return undefined;
}

/** The client's Authorization header, when this upstream may receive it (config `forwardAuthorization`). */
function authOf(o: HttpUpstreamOptions, ctx: RequestContext | undefined): Record<string, string> {
  return o.forwardAuthorization && ctx?.authorization ? { authorization: ctx.authorization } : {};
}

/** Maps an upstream progress notification to the client's (token replaced by the dialect). */
const progressOf = (p: JsonObject): JsonObject => {
  const out: JsonObject = { progress: p.progress };
  if (p.total !== undefined) out.total = p.total;
  if (p.message !== undefined) out.message = p.message;
  return out;
};

const LIST_NOTIFICATIONS = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

function stripMeta(p: JsonObject): JsonObject {
  const out = { ...p };
  delete out._meta;
  return out;
}

/** Params for a legacy upstream: protocol `_meta` keys removed, our progress token set. */
function legacyParams(ctx: RequestContext, token: RequestId | undefined): JsonObject {
  const params: JsonObject = { ...ctx.params };
  delete params.inputResponses;
  delete params.requestState;
  const meta: JsonObject = { ...(params._meta as JsonObject | undefined) };
  delete meta.progressToken;
  if (token !== undefined) meta.progressToken = token;
  if (Object.keys(meta).length > 0) params._meta = meta;
  else delete params._meta;
  return params;
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28
// ---------------------------------------------------------------------------------------------

/** A 2026-07-28 upstream: stateless POSTs with `_meta` and mirrored headers. */
async function modernConnector(o: HttpUpstreamOptions, base: Record<string, string>): Promise<Connector> {
  const hub = new NotificationHub();
  let nextId = 0;
  const meta = (ctx: RequestContext | undefined): JsonObject => ({
    'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
    'io.modelcontextprotocol/clientCapabilities': ctx?.clientCapabilities ?? {},
    'io.modelcontextprotocol/clientInfo': ctx?.clientInfo ?? o.clientInfo,
    ...(ctx?.logLevel !== undefined ? { 'io.modelcontextprotocol/logLevel': ctx.logLevel } : {}),
  });
  const headersFor = (method: string, params: JsonObject, ann: readonly ParamHeader[]): Record<string, string> => {
    const h: Record<string, string> = { ...base, 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': method };
    const name = method === 'resources/read' ? params.uri : method === 'tools/call' || method === 'prompts/get' ? params.name : undefined;
    if (typeof name === 'string') h['mcp-name'] = encodeHeaderValue(name);
    const args = params.arguments as JsonObject | undefined;
    for (const a of ann) {
      const v = args?.[a.property];
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') h[`mcp-param-${a.header.toLowerCase()}`] = encodeHeaderValue(v);
    }
    return h;
  };
  const simple = async (method: string, params: JsonObject): Promise<JsonObject> => {
    const id = ++nextId;
    const a = await postMessage(
      o.url,
      { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(undefined) } },
      headersFor(method, params, []),
      o.limits,
      AbortSignal.timeout(o.timeoutMs ?? 30_000),
    );
    const q = new CallQueue();
    await pump(a, id, q, () => {});
    const ev = await q.next(AbortSignal.timeout(o.timeoutMs ?? 30_000));
    if (ev.kind === 'result') return ev.result;
    throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${method} failed: ${JSON.stringify(ev)}` });
  };
  const discovered = await simple('server/discover', {});
  const desc: ServerDescription = {
    serverInfo: ((discovered._meta as JsonObject | undefined)?.['io.modelcontextprotocol/serverInfo'] as Implementation) ?? {
      name: o.name,
      version: 'unknown',
    },
    capabilities: (discovered.capabilities ?? {}) as JsonObject,
    upstreamRevision: MODERN_REVISION,
    ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
  };
  // x-mcp-header annotations, cached for the list's ttlMs (at least 1 s, at most 10 min).
  let tools: { at: number; ttl: number; map: Map<string, ParamHeader[]> } | undefined;
  const annotations = async (name: string, refresh: boolean): Promise<ParamHeader[]> => {
    if (refresh || !tools || Date.now() - tools.at > tools.ttl) {
      const r = await simple('tools/list', {});
      const map = new Map<string, ParamHeader[]>();
      for (const t of (r.tools as Array<{ name: string; inputSchema?: unknown }>) ?? []) map.set(t.name, paramHeadersOf(t.inputSchema) ?? []);
      tools = { at: Date.now(), ttl: Math.min(600_000, Math.max(1_000, Number(r.ttlMs) || 0)), map };
    }
    return tools.map.get(name) ?? [];
  };

  // One listen on the upstream, re-opened when the set of wanted notifications changes.
  let listen: AbortController | undefined;
  const reopen = () => {
    listen?.abort();
    listen = undefined;
    if (hub.size === 0) return;
    const uris = [...hub.resourceUris()];
    const filter = honouredFilter(
      { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true, ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}) },
      desc.capabilities,
    );
    const ac = (listen = new AbortController());
    const id = ++nextId;
    void (async () => {
      for (let delay = 500; !ac.signal.aborted; delay = Math.min(delay * 2, 30_000)) {
        try {
          const a = await postMessage(
            o.url,
            { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: filter, _meta: meta(undefined) } },
            headersFor('subscriptions/listen', {}, []),
            o.limits,
            ac.signal,
          );
          if (a.messages)
            for await (const m of a.messages)
              if (typeof m.method === 'string' && LIST_NOTIFICATIONS.has(m.method))
                hub.emit({ method: m.method, params: stripMeta((m.params ?? {}) as JsonObject) });
        } catch {
          // reconnect below
        }
        if (!ac.signal.aborted) await new Promise((r) => setTimeout(r, delay).unref());
      }
    })();
  };

  return {
    describe: () => desc,
    async call(ctx) {
      let retried = false;
      for (;;) {
        const ann = ctx.method === 'tools/call' ? await annotations(String(ctx.params.name), retried) : [];
        const id = ++nextId;
        const params: JsonObject = {
          ...ctx.params,
          _meta: { ...(ctx.params._meta as JsonObject | undefined), ...meta(ctx), ...(ctx.progressToken !== undefined ? { progressToken: id } : {}) },
        };
        const ac = new AbortController();
        const onAbort = () => ac.abort(ctx.signal.reason);
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        try {
          const a = await postMessage(
            o.url,
            { jsonrpc: '2.0', id, method: ctx.method, params },
            { ...headersFor(ctx.method, ctx.params, ann), ...authOf(o, ctx) },
            o.limits,
            ac.signal,
            o.timeoutMs,
          );
          const q = new CallQueue();
          void pump(a, id, q, () => {});
          // Closing the stream is the cancellation in this revision (basic/patterns/cancellation).
          const target: DriveTarget = { queue: q, respond: () => {}, cancel: () => ac.abort() };
          try {
            return await driveCall(target, ctx, o.held, progressOf);
          } catch (err) {
            // -32020 for Mcp-Param headers: fetch the tools list again and retry once (server/tools#x-mcp-header).
            if (!retried && ctx.method === 'tools/call' && (err as { rpc?: { code?: number } }).rpc?.code === -32020) {
              retried = true;
              continue;
            }
            throw err;
          }
        } finally {
          ctx.signal.removeEventListener('abort', onAbort);
        }
      }
    },
    subscribe(filter, sink) {
      const sub = hub.add(filter, sink);
      reopen();
      return {
        close() {
          sub.close();
          reopen();
        },
      };
    },
    release() {},
    async close() {
      listen?.abort();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 2025 era: Streamable HTTP with sessions
// ---------------------------------------------------------------------------------------------

interface UpSession {
  id: string | undefined;
  version: string;
  nextId: number;
  key: string;
  /** Client calls in flight on this session, by upstream id (for messages on the GET stream). */
  calls: Map<number, { queue: CallQueue; ctx: RequestContext }>;
  /** The session's GET stream, once opened. */
  get?: AbortController;
  /** Settles once the GET stream's first attempt answered (or failed). */
  getReady?: Promise<void>;
}

/** A 2025-era upstream: initialize, Mcp-Session-Id, MCP-Protocol-Version. */
async function streamableConnector(o: HttpUpstreamOptions, base: Record<string, string>): Promise<Connector> {
  const hub = new NotificationHub();
  const headers = (s: UpSession): Record<string, string> => ({ ...base, ...(s.id ? { 'mcp-session-id': s.id } : {}), 'mcp-protocol-version': s.version });

  const open = async (key: string, caps: JsonObject, info: Implementation): Promise<UpSession & { init: JsonObject }> => {
    const a = await postMessage(
      o.url,
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: STREAMABLE_REVISIONS[0], capabilities: caps, clientInfo: info } },
      base,
      o.limits,
      AbortSignal.timeout(o.timeoutMs ?? 30_000),
    );
    const q = new CallQueue();
    await pump(a, 0, q, () => {});
    const ev = await q.next(AbortSignal.timeout(o.timeoutMs ?? 30_000));
    if (ev.kind !== 'result') throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `initialize failed: ${JSON.stringify(ev)}` });
    const s: UpSession = {
      id: headerOf(a.headers, 'mcp-session-id'),
      version: String(ev.result.protocolVersion ?? STREAMABLE_REVISIONS[0]),
      nextId: 0,
      key,
      calls: new Map(),
    };
    await postMessage(o.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers(s), o.limits, AbortSignal.timeout(o.timeoutMs ?? 30_000)).then(
      drain,
      () => {},
    );
    return { ...s, init: ev.result };
  };
  const end = (s: UpSession) => {
    s.get?.abort();
    // SM7: end the upstream session when its client session ends.
    if (s.id)
      void request(o.url, { method: 'DELETE', headers: headers(s) }).then(
        (r) => r.body.dump(),
        () => {},
      );
  };

  // The control session: describe, subscriptions and the GET stream of notifications.
  const control = await open('control', GATEWAY_CAPS, o.clientInfo);
  const desc: ServerDescription = {
    serverInfo: (control.init.serverInfo as Implementation) ?? { name: o.name, version: 'unknown' },
    capabilities: (control.init.capabilities ?? {}) as JsonObject,
    upstreamRevision: control.version,
    ...(typeof control.init.instructions === 'string' ? { instructions: control.init.instructions } : {}),
  };
  /**
   * Keeps a session's GET stream open (reconnecting with backoff) and routes what it carries:
   * list changes to the hub; server requests, progress and log messages that name no request
   * to the session's one call that can own them (2025-11-25 basic/transports#listening-for-messages-from-the-server).
   */
  const openGet = (s: UpSession): Promise<void> => {
    const ac = (s.get = new AbortController());
    let ready!: () => void;
    s.getReady = new Promise<void>((r) => (ready = r));
    const route = (m: JsonObject) => {
      if (typeof m.method !== 'string') return;
      const params = (m.params ?? {}) as JsonObject;
      if (LIST_NOTIFICATIONS.has(m.method)) return hub.emit({ method: m.method, params: stripMeta(params) });
      if (m.method === 'notifications/progress') return s.calls.get(Number(params.progressToken))?.queue.push({ kind: 'progress', params });
      const sole = (pred: (ctx: RequestContext) => boolean) => {
        const found = [...s.calls.values()].filter((c) => pred(c.ctx));
        return found.length === 1 ? found[0] : undefined;
      };
      if (m.method === 'notifications/message') return sole((ctx) => ctx.logLevel !== undefined)?.queue.push({ kind: 'log', params });
      if ('id' in m && m.id !== null && m.id !== undefined) {
        const owner = sole((ctx) => ['tools/call', 'prompts/get', 'resources/read'].includes(ctx.method));
        if (owner) owner.queue.push({ kind: 'request', id: m.id as RequestId, method: m.method, params });
        else
          void postMessage(
            o.url,
            { jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'Switchyard cannot route this request to a client' } },
            headers(s),
            o.limits,
            AbortSignal.timeout(5_000),
          ).then(drain, () => {});
      }
    };
    void (async () => {
      // A server may close the GET stream at any time and expects the client back after its
      // `retry` delay with Last-Event-ID, to replay what it sent meanwhile (2025-11-25 S7, R3).
      let lastEventId: string | undefined;
      let backoff = 500;
      while (!ac.signal.aborted) {
        let wait = backoff;
        try {
          const r = await request(o.url, {
            method: 'GET',
            headers: { ...headers(s), accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
            signal: ac.signal,
            bodyTimeout: 0,
          });
          ready();
          if (r.statusCode === 405) return void (await r.body.dump()); // no GET stream offered (L2)
          if (r.statusCode !== 200) {
            await r.body.dump();
            backoff = Math.min(backoff * 2, 30_000);
          } else {
            const answer = sseAnswer(r, o.limits);
            for await (const m of answer.messages!) {
              route(m);
              lastEventId = answer.lastEventId ?? lastEventId;
            }
            lastEventId = answer.lastEventId ?? lastEventId;
            backoff = 500;
            wait = answer.retryMs ?? backoff;
          }
        } catch {
          backoff = Math.min(backoff * 2, 30_000);
        }
        ready();
        if (!ac.signal.aborted) await new Promise((r) => setTimeout(r, Math.min(wait, 30_000)).unref());
      }
    })();
    return s.getReady;
  };
  const controlCall = (method: string, params: JsonObject) =>
    postMessage(
      o.url,
      { jsonrpc: '2.0', id: `c${++control.nextId}`, method, params },
      headers(control),
      o.limits,
      AbortSignal.timeout(o.timeoutMs ?? 30_000),
    ).then(drain, () => {});

  const interest = new ResourceInterest(
    (uri) => void controlCall('resources/subscribe', { uri }),
    (uri) => void controlCall('resources/unsubscribe', { uri }),
  );
  const sessions = new LRUCache<string, Promise<UpSession>>({
    max: o.limits.maxSessions,
    dispose: (p) => void p.then(end, () => {}),
  });
  const sessionFor = (ctx: RequestContext): { key: string; s: Promise<UpSession> } => {
    const key = o.isolation === 'shared' ? 'shared' : ctx.sessionKey !== undefined ? `s:${ctx.sessionKey}` : `caps:${JSON.stringify(ctx.clientCapabilities)}`;
    let s = sessions.get(key);
    if (!s) {
      const caps = o.isolation === 'shared' ? GATEWAY_CAPS : ctx.clientCapabilities;
      s = open(key, caps, ctx.clientInfo ?? o.clientInfo);
      s.catch(() => sessions.delete(key));
      sessions.set(key, s);
    }
    return { key, s };
  };

  return {
    describe: () => desc,
    async call(ctx) {
      for (let attempt = 0; ; attempt++) {
        const { key, s: sp } = sessionFor(ctx);
        const s = await sp;
        // Open the session's GET stream before its first call: a server that sends a request
        // unrelated to any POST stream drops it when no GET stream is open yet.
        if (!s.get) await openGet(s);
        else await s.getReady;
        const id = ++s.nextId;
        const ac = new AbortController();
        const onAbort = () => ac.abort(ctx.signal.reason);
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        // Registered before the POST: the server may send the call's requests on the GET stream
        // before the POST's response headers arrive.
        const q = new CallQueue();
        s.calls.set(id, { queue: q, ctx });
        try {
          let a: PostAnswer;
          try {
            a = await postMessage(
              o.url,
              { jsonrpc: '2.0', id, method: ctx.method, params: legacyParams(ctx, ctx.progressToken !== undefined ? id : undefined) },
              { ...headers(s), ...authOf(o, ctx) },
              o.limits,
              ac.signal,
              o.timeoutMs,
            );
          } catch (err) {
            s.calls.delete(id);
            throw err;
          }
          // An upstream 404 on a session: re-initialize and retry once (SM6), unseen by the client.
          if (a.status === 404 && s.id && attempt === 0) {
            s.calls.delete(id);
            await drain(a).catch(() => {});
            sessions.delete(key);
            continue;
          }
          // Resumption by GET with Last-Event-ID when the server closes the stream early (2025-11-25 S7, R3).
          const resume = async (last: string) => {
            const r = await request(o.url, {
              method: 'GET',
              headers: { ...headers(s), accept: 'text/event-stream', 'last-event-id': last },
              signal: ac.signal,
              bodyTimeout: 0,
            });
            if (r.statusCode !== 200 || !String(r.headers['content-type'] ?? '').startsWith('text/event-stream')) {
              await r.body.dump();
              return undefined;
            }
            return sseAnswer(r, o.limits);
          };
          void pump(a, id, q, () => {}, resume);
          const respond: Respond = (rid, answer) =>
            void postMessage(o.url, { jsonrpc: '2.0', id: rid, ...answer }, headers(s), o.limits, AbortSignal.timeout(o.timeoutMs ?? 30_000)).then(
              drain,
              () => {},
            );
          const target: DriveTarget = {
            queue: q,
            respond,
            finish: () => s.calls.delete(id),
            cancel: (reason) => {
              s.calls.delete(id);
              // basic/utilities/cancellation: tell the server, then stop reading.
              void postMessage(
                o.url,
                { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } },
                headers(s),
                o.limits,
                AbortSignal.timeout(5_000),
              ).then(drain, () => {});
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
    subscribe(filter, sink) {
      const sub = hub.add(filter, sink);
      if (!control.get) openGet(control);
      const drop = interest.add(filter.resourceSubscriptions ?? []);
      return {
        close() {
          sub.close();
          drop();
        },
      };
    },
    release(sessionKey) {
      if (o.isolation !== 'shared') sessions.delete(`s:${sessionKey}`);
    },
    async close() {
      sessions.clear();
      end(control);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 2024-11-05 HTTP+SSE
// ---------------------------------------------------------------------------------------------

interface SseSession {
  key: string;
  endpoint: string;
  close(): void;
  closed: boolean;
  nextId: number;
  calls: Map<string, { queue: CallQueue; ctx: RequestContext | undefined }>;
  post(msg: JsonObject, extra?: Record<string, string>): Promise<void>;
}

/** A 2024-11-05 upstream: a GET stream per session, POSTs to the endpoint it names. */
async function legacySseConnector(o: HttpUpstreamOptions, base: Record<string, string>): Promise<Connector> {
  const hub = new NotificationHub();
  const timeoutMs = o.timeoutMs ?? 30_000;

  const open = async (key: string, caps: JsonObject, info: Implementation): Promise<SseSession & { init: JsonObject }> => {
    const stream = await openLegacyStream(o.url, base, Math.min(timeoutMs, 10_000));
    if (!stream.endpoint) {
      stream.close();
      throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: stream.note });
    }
    const s: SseSession = {
      key,
      endpoint: stream.endpoint,
      closed: false,
      nextId: 0,
      calls: new Map(),
      close: () => {
        s.closed = true;
        stream.close();
      },
      async post(msg, extra?: Record<string, string>) {
        const r = await request(s.endpoint, { method: 'POST', body: serialize(msg), headers: { ...base, ...extra, 'content-type': 'application/json' } });
        const text = await r.body.text();
        if (r.statusCode >= 300) throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `POST answered HTTP ${r.statusCode}` });
        // A legacy server that wrongly answers in the POST body: route that message too.
        if (r.statusCode === 200 && text.trim().startsWith('{')) {
          try {
            route(s, JSON.parse(text) as JsonObject);
          } catch {
            // not JSON: ignore, replies come on the stream
          }
        }
      },
    };
    const init = await stream.call(
      { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: caps, clientInfo: info } },
      timeoutMs,
    );
    if (!init.reply?.result) {
      s.close();
      throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `initialize failed: ${JSON.stringify(init.reply?.error ?? 'no reply')}` });
    }
    await s.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // From now on every stream message is routed by the session (replaces the probe's waiter).
    stream.onMessage = (m) => route(s, m);
    stream.onEnd = () => {
      s.closed = true;
      // A lost stream means a new session (and a new initialize) next time.
      sessions.delete(key);
      for (const c of s.calls.values()) c.queue.fail(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'upstream SSE stream lost' }));
    };
    return { ...s, init: init.reply.result as JsonObject };
  };

  const route = (s: SseSession, m: JsonObject) => {
    if (typeof m.method !== 'string') {
      const c = s.calls.get(String(m.id));
      if (!c) return;
      if (m.error) c.queue.push({ kind: 'error', error: m.error as never });
      else c.queue.push({ kind: 'result', result: (m.result ?? {}) as JsonObject });
      return;
    }
    const params = (m.params ?? {}) as JsonObject;
    if (LIST_NOTIFICATIONS.has(m.method)) return hub.emit({ method: m.method, params: stripMeta(params) });
    if (m.method === 'notifications/progress') return s.calls.get(String(params.progressToken))?.queue.push({ kind: 'progress', params });
    // Log messages and server requests name no request: route them only when one call could own them.
    const sole = (pred: (c: { ctx: RequestContext | undefined }) => boolean) => {
      const found = [...s.calls.values()].filter((c) => c.ctx && pred(c));
      return found.length === 1 ? found[0] : undefined;
    };
    if (m.method === 'notifications/message') return sole((c) => c.ctx!.logLevel !== undefined)?.queue.push({ kind: 'log', params });
    if ('id' in m && m.id !== null) {
      if (m.method === 'ping') return void s.post({ jsonrpc: '2.0', id: m.id, result: {} }).catch(() => {});
      const owner = sole((c) => ['tools/call', 'prompts/get', 'resources/read'].includes(c.ctx!.method));
      if (owner) owner.queue.push({ kind: 'request', id: m.id as RequestId, method: m.method, params });
      else void s.post({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'Switchyard cannot route this request to a client' } }).catch(() => {});
    }
  };

  const sessions = new LRUCache<string, Promise<SseSession>>({
    max: o.limits.maxSessions,
    dispose: (p) =>
      void p.then(
        (s) => s.close(),
        () => {},
      ),
  });
  const control = await open('control', GATEWAY_CAPS, o.clientInfo);
  sessions.set('control', Promise.resolve(control));
  const desc: ServerDescription = {
    serverInfo: (control.init.serverInfo as Implementation) ?? { name: o.name, version: 'unknown' },
    capabilities: (control.init.capabilities ?? {}) as JsonObject,
    upstreamRevision: String(control.init.protocolVersion ?? '2024-11-05'),
    ...(typeof control.init.instructions === 'string' ? { instructions: control.init.instructions } : {}),
  };
  const sessionFor = (ctx: RequestContext): Promise<SseSession> => {
    const key = o.isolation === 'shared' ? 'control' : ctx.sessionKey !== undefined ? `s:${ctx.sessionKey}` : `caps:${JSON.stringify(ctx.clientCapabilities)}`;
    let s = sessions.get(key);
    if (!s) {
      s = open(key, o.isolation === 'shared' ? GATEWAY_CAPS : ctx.clientCapabilities, ctx.clientInfo ?? o.clientInfo);
      s.catch(() => sessions.delete(key));
      sessions.set(key, s);
    }
    return s;
  };
  const controlPost = (method: string, params: JsonObject) =>
    void control.post({ jsonrpc: '2.0', id: `sub-${++control.nextId}`, method, params }).catch(() => {});
  const interest = new ResourceInterest(
    (uri) => controlPost('resources/subscribe', { uri }),
    (uri) => controlPost('resources/unsubscribe', { uri }),
  );

  return {
    describe: () => desc,
    async call(ctx) {
      const s = await sessionFor(ctx);
      const id = ++s.nextId;
      const q = new CallQueue();
      s.calls.set(String(id), { queue: q, ctx });
      try {
        await s.post({ jsonrpc: '2.0', id, method: ctx.method, params: legacyParams(ctx, ctx.progressToken !== undefined ? id : undefined) }, authOf(o, ctx));
        const target: DriveTarget = {
          queue: q,
          respond: (rid, answer) => void s.post({ jsonrpc: '2.0', id: rid, ...answer }).catch(() => {}),
          finish: () => s.calls.delete(String(id)),
          cancel: (reason) => {
            s.calls.delete(String(id));
            void s.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch(() => {});
          },
        };
        const result = await driveCall(target, ctx, o.held, progressOf);
        if (result.resultType !== 'input_required') s.calls.delete(String(id));
        return result;
      } catch (err) {
        s.calls.delete(String(id));
        throw err;
      }
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
    release(sessionKey) {
      if (o.isolation !== 'shared') sessions.delete(`s:${sessionKey}`);
    },
    async close() {
      sessions.clear();
    },
  };
}

// ---------------------------------------------------------------------------------------------

/** An HTTP upstream; `era` is known after `start()`. */
export interface HttpUpstream extends Upstream {
  readonly era: string | undefined;
}

/**
 * Creates an HTTP upstream. `start()` probes the URL (era `auto`) or trusts the configured
 * era, then opens what that era needs (2025: a control session and its GET stream; 2024-11-05:
 * a control stream). Requests that carry our `requestState` resume a held call.
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE from start() when no era is found
 */
export function createHttpUpstream(o: HttpUpstreamOptions): HttpUpstream {
  let conn: Connector | undefined;
  let era: string | undefined;
  const base = { ...(o.headers ?? {}) };
  return {
    name: o.name,
    get era() {
      return era;
    },
    async start() {
      let want = o.era ?? 'auto';
      if (want === 'auto') {
        const v = await probeUrl(o.url, { headers: base, clientInfo: { name: o.clientInfo.name, version: o.clientInfo.version } });
        if (!v.ok || !v.era) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${o.url}: ${v.reason}` });
        o.log.info({ upstream: o.name, era: v.era, transport: v.transport }, 'upstream probed');
        want = v.transport === 'http+sse' ? '2024-11-05' : v.transport === 'stateless-http' ? MODERN_REVISION : (v.era as HttpEra);
      }
      era = want;
      try {
        conn =
          want === MODERN_REVISION
            ? await modernConnector(o, base)
            : want === '2024-11-05'
              ? await legacySseConnector(o, base)
              : await streamableConnector(o, base);
      } catch (err) {
        if (err instanceof SwitchyardError) throw err;
        throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${o.url}: ${(err as Error).message}`, cause: err });
      }
    },
    describe() {
      if (!conn) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      return conn.describe();
    },
    async request(ctx) {
      if (!conn) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      const state = ctx.params.requestState;
      if (HeldCalls.isOurs(state)) {
        const call = o.held.take(state, ctx.method, ctx.params);
        if (!call) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'requestState is unknown, expired, or bound to another request' });
        return resumeCall(call, ctx, o.held, progressOf);
      }
      return conn.call(ctx);
    },
    subscribe(filter, sink) {
      if (!conn) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      return conn.subscribe(filter, sink);
    },
    release(sessionKey: string) {
      conn?.release(sessionKey);
    },
    async close() {
      await conn?.close();
    },
  };
}
