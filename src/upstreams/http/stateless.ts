// The 2026-07-28 connector: stateless POSTs carrying the era client's envelope and mirrored
// headers, one `subscriptions/listen` for what subscribers want, cancellation by closing.

import { setTimeout as sleep } from 'node:timers/promises';
import { CallQueue, driveCall, upstreamStrict, type DriveTarget } from '../../core/calls.js';
import { isBatched, upstreamResult } from '../../core/upstream-answers.js';
import type { OutboundContext, StatelessEraClient } from '../../core/era.js';
import { SwitchyardError } from '../../core/errors.js';
import type { JsonObject, RequestId } from '../../core/message.js';
import type { ParamHeader } from '../../core/era.js';
import { honouredFilter, NotificationHub } from '../../core/upstream.js';
import { CallTable, progressOf, routeUnlabelled, sentId, type BadMessage } from '../routing.js';
import { notResultWords, pump } from './pump.js';
import { authOf, outboundHeaders, postWithCredentials, type Connector, type ConnectorOptions } from './connector.js';
import { invalidEventOf, postMessage, traceHeaders, upstreamFailure } from './transport.js';
import { urlForDisplay } from '../../core/url-text.js';

/** Pages of `tools/list` read for `x-mcp-header` annotations (the core's bound for the same list). */
const MAX_TOOL_PAGES = 50;
/** How long `x-mcp-header` annotations are reused at least and at most, whatever the list's `ttlMs` says, ms. */
const ANNOTATIONS_MIN_MS = 1_000;
const ANNOTATIONS_MAX_MS = 600_000;
/** Names of dropped tools logged per upstream (each once). */
const MAX_DROPPED_LOGGED = 100;

/**
 * A 2026-07-28 upstream. `start` is its `server/discover`; each call is one POST whose closing
 * cancels it; subscribers share one `subscriptions/listen`, re-opened when what they want changes.
 * @see 2026-07-28 basic/transports/streamable-http; basic/patterns/{subscriptions,cancellation}; server/tools#x-mcp-header
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE, SWY_ERR_UPSTREAM_PROTOCOL when discovery fails
 */
export async function createStatelessConnector(o: ConnectorOptions, era: StatelessEraClient): Promise<Connector> {
  const { limits } = o;
  // Where server/discover was answered: the configured URL, or where its same-origin 307/308
  // redirects led (a pinned era has no probe to find that first).
  let url = o.url;
  const hub = new NotificationHub();
  let nextId = 0;
  /** The connector's calls outside every call table (a stateless upstream keeps none): what it carries is counted here. */
  const noCalls = new CallTable();
  /** Counts a message that cannot be read (not JSON, as a stdio child's line is; or over the bound). */
  const unparsable = (bad: BadMessage) => noCalls.faults.message(bad, o.log, o.name);
  /**
   * What an answer carries besides its request's events: a response for another id (each POST
   * carries one request, and its answer only that request's response) is counted and said as on
   * every transport (`UpstreamFaults.stray`: `unknown_id` unless the gateway sent that id, in
   * which case it is a late answer); anything else is dropped, as before. The call is unchanged.
   */
  const other = (m: JsonObject): void => {
    if (typeof m.method !== 'string') noCalls.faults.stray(m, sentId(m.id, nextId), o.log, o.name);
  };
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
        true,
      ),
    );
    if (a.url) url = a.url;
    const q = new CallQueue();
    await pump(a, id, q, { other, limits, method, unparsable });
    const ev = await q.next(signal);
    if (ev.kind === 'result') return upstreamResult(method, ev.result);
    throw new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', {
      detail: `${method} failed: ${notResultWords(ev)}`,
      operatorDetail: `${urlForDisplay(url)}: ${method} failed: ${JSON.stringify(ev)}`,
    });
  };
  const discovered = await simple('server/discover', era.discover(o.clientInfo).params);
  if (!era.recognises({ result: discovered }))
    throw upstreamFailure('SWY_ERR_UPSTREAM_PROTOCOL', url, `server/discover does not list ${era.revisions.join(', ')}`);
  const desc = era.describe(discovered, o.name);

  // x-mcp-header annotations, reused for the list's ttlMs (clamped); null: an invalid one.
  let tools: { at: number; ttl: number; map: Map<string, ParamHeader[] | null> } | undefined;
  const annotations = async (name: string, refresh: boolean): Promise<ParamHeader[] | null> => {
    if (refresh || !tools || Date.now() - tools.at > tools.ttl) {
      const map = new Map<string, ParamHeader[] | null>();
      let cursor: string | undefined;
      let ttl = ANNOTATIONS_MAX_MS;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const r = await simple('tools/list', era.requestParams(own('tools/list', cursor ? { cursor } : {}), o.clientInfo));
        for (const t of (r.tools as Array<{ name: string; inputSchema?: unknown }>) ?? []) map.set(t.name, era.paramHeaders(t.inputSchema));
        ttl = Math.min(ttl, Number(r.ttlMs) || 0);
        cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
        if (!cursor) break;
      }
      tools = { at: Date.now(), ttl: Math.min(ANNOTATIONS_MAX_MS, Math.max(ANNOTATIONS_MIN_MS, ttl)), map };
    }
    const found = tools.map.get(name);
    return found === undefined ? [] : found;
  };

  /**
   * A tool with an invalid `x-mcp-header` annotation is dropped from the upstream's `tools/list`
   * results, and logged once per name (at most {@link MAX_DROPPED_LOGGED} names).
   * @see 2026-07-28 server/tools#x-mcp-header (HTTP clients MUST drop it; SHOULD log name and reason)
   */
  const dropped = new Set<string>();
  const withoutInvalid = (result: JsonObject): JsonObject => {
    if (!Array.isArray(result.tools)) return result;
    const list = result.tools as Array<{ name?: unknown; inputSchema?: unknown }>;
    const keep: typeof list = [];
    for (const t of list) {
      if (era.paramHeaders(t?.inputSchema) !== null) {
        keep.push(t);
        continue;
      }
      const name = String(t?.name);
      if (dropped.has(name) || dropped.size >= MAX_DROPPED_LOGGED) continue;
      dropped.add(name);
      o.log.warn({ upstream: o.name, tool: name.slice(0, 128) }, 'tool dropped: invalid x-mcp-header annotation');
    }
    return keep.length === list.length ? result : { ...result, tools: keep };
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
              // Through the one table for messages outside a call (and strict mode's check there):
              // no call is ever in this table, so list changes and resource updates go to the
              // subscribers, and the rest nowhere (2026-07-28 basic/patterns/mrtr: no server request outside a request).
              // 2026-07-28 has no batches: a batched message is dropped (docs/upstreams.md, "Batches from an upstream").
              if (isBatched(n)) noCalls.faults.batched(n, era.revisions[0], o.log, o.name);
              else if (typeof n.method === 'string') {
                const r = routeUnlabelled(n, noCalls, (p) => era.notificationParams(p), false, upstreamStrict(o.strict, era.revisions[0]));
                if (r.to === 'subscribers') hub.emit(r.notification);
              }
              delay = limits.upstreamBackoffMinMs;
            }
        } catch (err) {
          // An event that is not JSON ends the listen (counted); reconnect below.
          const bad = invalidEventOf(err);
          if (bad !== undefined) unparsable(bad);
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
        // A tool its list does not offer (dropped above) is not called either.
        if (ann === null) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `unknown tool ${String(ctx.params.name).slice(0, 128)}` });
        // A call whose client gave up while its tool's annotations were fetched is not sent.
        if (ctx.signal.aborted) throw ctx.signal.reason;
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
          // Strict mode: the request as this revision has it (docs/strict.md, "Upstreams").
          o.strict?.check('to-upstream', era.revisions[0], body);
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
          void pump(a, id, q, {
            other,
            batched: (m) => noCalls.faults.batched(m, era.revisions[0], o.log, o.name),
            unparsable,
            limits,
            method: ctx.method,
          });
          // Closing the stream is the cancellation in this revision (basic/patterns/cancellation).
          const target: DriveTarget = {
            queue: q,
            strict: upstreamStrict(o.strict, era.revisions[0]),
            respond: () => {},
            cancel: () => ac.abort(),
          };
          try {
            const result = await driveCall(target, ctx, o.held, progressOf);
            return ctx.method === 'tools/list' ? withoutInvalid(result) : result;
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
