// The 2026-07-28 connector: stateless POSTs carrying the era client's envelope and mirrored
// headers, one `subscriptions/listen` for what subscribers want, cancellation by closing.

import { setTimeout as sleep } from 'node:timers/promises';
import { CallQueue, driveCall, type DriveTarget } from '../../core/calls.js';
import type { OutboundContext, StatelessEraClient } from '../../core/era.js';
import { SwitchyardError } from '../../core/errors.js';
import type { JsonObject, RequestId } from '../../core/message.js';
import type { ParamHeader } from '../../core/era.js';
import { honouredFilter, NotificationHub } from '../../core/upstream.js';
import { progressOf, SUBSCRIBER_NOTIFICATIONS } from '../routing.js';
import { pump } from './pump.js';
import { authOf, outboundHeaders, postWithCredentials, type Connector, type ConnectorOptions } from './connector.js';
import { postMessage, traceHeaders } from './transport.js';
import { urlForDisplay } from '../../core/url-text.js';

/** Pages of `tools/list` read for `x-mcp-header` annotations (the core's bound for the same list). */
const MAX_TOOL_PAGES = 50;
/** How long `x-mcp-header` annotations are reused at least and at most, whatever the list's `ttlMs` says, ms. */
const ANNOTATIONS_MIN_MS = 1_000;
const ANNOTATIONS_MAX_MS = 600_000;

/**
 * A 2026-07-28 upstream. `start` is its `server/discover`; each call is one POST whose closing
 * cancels it; subscribers share one `subscriptions/listen`, re-opened when what they want changes.
 * @see 2026-07-28 basic/transports/streamable-http; basic/patterns/{subscriptions,cancellation}; server/tools#x-mcp-header
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE, SWY_ERR_UPSTREAM_PROTOCOL when discovery fails
 */
export async function createStatelessConnector(o: ConnectorOptions, era: StatelessEraClient): Promise<Connector> {
  const { limits, url } = o;
  const hub = new NotificationHub();
  let nextId = 0;
  const own = (method: string, params: JsonObject): OutboundContext => ({
    method,
    params,
    clientInfo: o.clientInfo,
    clientCapabilities: {},
    logLevel: undefined,
    progressToken: undefined,
  });

  /** A request of the gateway's own, answered within `upstreamRequestTimeoutMs`. */
  const simple = async (method: string, params: JsonObject): Promise<JsonObject> => {
    const id = ++nextId;
    const signal = AbortSignal.timeout(limits.upstreamRequestTimeoutMs);
    const a = await postWithCredentials(o, undefined, (h) =>
      postMessage(
        url,
        { jsonrpc: '2.0', id, method, params },
        { ...h, ...era.headers(method, params, []) },
        limits,
        signal,
        limits.upstreamRequestTimeoutMs,
        o.dispatcher,
      ),
    );
    const q = new CallQueue();
    await pump(a, id, q, { other: () => {}, limits });
    const ev = await q.next(signal);
    if (ev.kind === 'result') return ev.result;
    throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${urlForDisplay(url)}: ${method} failed: ${JSON.stringify(ev)}` });
  };
  const discovered = await simple('server/discover', era.discover(o.clientInfo).params);
  if (!era.recognises({ result: discovered }))
    throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${urlForDisplay(url)}: server/discover does not list ${era.revisions.join(', ')}` });
  const desc = era.describe(discovered, o.name);

  // x-mcp-header annotations, reused for the list's ttlMs (clamped).
  let tools: { at: number; ttl: number; map: Map<string, ParamHeader[]> } | undefined;
  const annotations = async (name: string, refresh: boolean): Promise<ParamHeader[]> => {
    if (refresh || !tools || Date.now() - tools.at > tools.ttl) {
      const map = new Map<string, ParamHeader[]>();
      let cursor: string | undefined;
      let ttl = ANNOTATIONS_MAX_MS;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const r = await simple('tools/list', era.requestParams(own('tools/list', cursor ? { cursor } : {}), o.clientInfo));
        for (const t of (r.tools as Array<{ name: string; inputSchema?: unknown }>) ?? []) map.set(t.name, era.paramHeaders(t.inputSchema) ?? []);
        ttl = Math.min(ttl, Number(r.ttlMs) || 0);
        cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
        if (!cursor) break;
      }
      tools = { at: Date.now(), ttl: Math.min(ANNOTATIONS_MAX_MS, Math.max(ANNOTATIONS_MIN_MS, ttl)), map };
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
    if (Object.keys(filter).length === 0) return;
    const ac = (listen = new AbortController());
    const m = era.listen(filter, o.clientInfo);
    void (async () => {
      for (let delay = limits.upstreamBackoffMinMs; !ac.signal.aborted; delay = Math.min(delay * 2, limits.upstreamBackoffMaxMs)) {
        try {
          const a = await postMessage(
            url,
            { jsonrpc: '2.0', id: ++nextId, ...m },
            { ...(await outboundHeaders(o, undefined)), ...era.headers(m.method, m.params, []) },
            limits,
            ac.signal,
            limits.upstreamRequestTimeoutMs,
            o.dispatcher,
          );
          // A refused credential is fetched again on the next attempt.
          if (a.status === 401) o.credentials?.invalidate(undefined);
          if (a.messages)
            for await (const n of a.messages) {
              if (typeof n.method === 'string' && SUBSCRIBER_NOTIFICATIONS.has(n.method))
                hub.emit({ method: n.method, params: era.notificationParams((n.params ?? {}) as JsonObject) });
              delay = limits.upstreamBackoffMinMs;
            }
        } catch {
          // reconnect below
        }
        if (!ac.signal.aborted) await sleep(delay, undefined, { signal: ac.signal, ref: false }).catch(() => {});
      }
    })();
  };

  return {
    revision: era.revisions[0],
    describe: () => desc,
    async call(ctx) {
      let retried = false;
      for (;;) {
        const ann = ctx.method === 'tools/call' ? await annotations(String(ctx.params.name), retried) : [];
        const id: RequestId = ++nextId;
        const ac = new AbortController();
        const onAbort = () => ac.abort(ctx.signal.reason);
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        try {
          const body = {
            jsonrpc: '2.0',
            id,
            method: ctx.method,
            params: era.requestParams(ctx, o.clientInfo, ctx.progressToken !== undefined ? id : undefined),
          };
          const a = await postWithCredentials(o, ctx, (h) =>
            postMessage(
              url,
              body,
              { ...h, ...era.headers(ctx.method, ctx.params, ann), ...authOf(o, ctx), ...traceHeaders(ctx) },
              limits,
              ac.signal,
              limits.requestTimeoutMs,
              o.dispatcher,
            ),
          );
          const q = new CallQueue();
          void pump(a, id, q, { other: () => {}, limits });
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
