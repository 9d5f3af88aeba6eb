// The 2026-07-28 message server: one stateless request at a time, on any transport (HTTP gives it
// mirrored headers, stdio none): validation, execution, `server/discover`, `subscriptions/listen`,
// results and errors in this era's shape.

import type { CancelSignal } from '../../src/core/cancel.js';
import { channels } from '../../src/core/diagnostics.js';
import type { CoreLog, HeaderBag, Sink } from '../../src/core/exchange.js';
import { logFailure, PeerRpcError, SwitchyardError } from '../../src/core/errors.js';
import { traceContextOfHeaders } from '../../src/core/trace.js';
import type { Executor, RequestInit } from '../../src/core/executor.js';
import { policyViewKey, type Identity } from '../../src/core/identity.js';
import type { Limits } from '../../src/core/limits.js';
import type { StreamCredential } from '../../src/core/open-streams.js';
import type { SubscriberContext } from '../../src/core/interceptor.js';
import { errorResponse, resultResponse, type JsonObject, type RequestId, type RpcRequest } from '../../src/core/message.js';
import { levelAdmits, type SubscriptionFilter } from '../../src/core/request.js';
import { checkedSink, strictRejection, type MessageValidator } from '../../src/core/strict.js';
import { honouredFilter } from '../../src/core/upstream.js';
import {
  checkParamHeaders,
  decodeRequest,
  discoverResult,
  encodeError,
  encodeResult,
  META,
  METHODS,
  paramHeadersOf,
  REVISIONS,
  statusFor,
  type CacheDefaults,
  type DecodedRequest,
  type ParamHeader,
} from './codec.js';

/** What the 2026-07-28 server is built with. */
export interface StatelessServerDeps {
  /** The mount's executor. */
  executor: Executor;
  /** Bounds. */
  limits: Limits;
  log: CoreLog;
  /** Revisions served statelessly (for -32022 `data.supported` and `server/discover`). */
  supported?: readonly string[];
  /** Strict mode: validates messages both ways; undefined when off. */
  strict?: MessageValidator;
  /** Caching fields for results that carry none. */
  cache: CacheDefaults;
  /** The client's dialect id put on every request context (default `2026-07-28`). */
  dialect?: string;
}

/** One request as a transport hands it in. */
export interface StatelessInbound {
  /** Request headers on HTTP (mirrored headers are checked); undefined on stdio. */
  headers: HeaderBag | undefined;
  /** The verified caller, or null. */
  identity: Identity | null;
  /**
   * The client a listen stream is counted against under `maxSubscriptionsPerClient` (`clientKey`:
   * the principal, else the remote address); undefined on stdio (its one client is not counted).
   */
  client?: string;
  /** The client's `Authorization`, for upstreams allowed to receive it. */
  authorization?: string;
  /** What an HTTP front door admitted the request with (`HttpExchange.credential`), read by a listen only; undefined on stdio. */
  readonly credential?: StreamCredential;
  /** Aborted when the client cancels or goes away: nothing more is sent for the request. */
  signal: AbortSignal;
  /** The same cancellation without an AbortController (`Cancellation`), preferred by the executor call when present. */
  cancel?: CancelSignal;
}

/** The 2026-07-28 server of one mount (or one stdio connection). */
export interface StatelessServer {
  /**
   * Serves one request (already classified as a request) and answers it through `sink` exactly
   * once, or never when cancelled. Never throws.
   */
  handle(msg: RpcRequest, inbound: StatelessInbound, sink: Sink): Promise<void>;
  /** Open `subscriptions/listen` streams. */
  readonly listens: number;
  /** Ends every listen with its final result (shutdown, end of a stdio connection). */
  close(): void;
}

/** Pages of `tools/list` read for `x-mcp-header` annotations. */
const MAX_ANNOTATION_PAGES = 50;
/** How long tool annotations stay cached without a list change, ms. */
const ANNOTATIONS_TTL_MS = 60_000;
/** Caller views whose annotation maps are kept at once (see `viewOf`); the oldest goes first. */
const MAX_ANNOTATION_VIEWS = 1_000;
/** How long after a failed tools/list the calls go without annotations before it is asked again, ms. */
const FAILED_LIST_RETRY_MS = 5_000;

/**
 * Creates the 2026-07-28 server.
 * @see 2026-07-28 basic/transports/streamable-http; basic/patterns/subscriptions; basic/patterns/mrtr;
 *   server/discover; server/tools#x-mcp-header
 */
export function createStatelessServer(deps: StatelessServerDeps): StatelessServer {
  const { executor, log } = deps;
  const supported = deps.supported ?? REVISIONS;
  const dialect = deps.dialect ?? '2026-07-28';
  const listens = new Set<() => void>();

  const fail = (id: RequestId, err: unknown, sink: Sink) => {
    if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_CANCELLED') return sink.finish(null);
    if (err instanceof SwitchyardError) {
      if (err.entry.fault !== 'client') logFailure(log, err, { rpcId: id, ...executor.failureFields(err) });
    } else if (!(err instanceof PeerRpcError)) log.error({ err, rpcId: id, ...executor.failureFields(err) }, 'internal error');
    sink.finish(errorResponse(id, encodeError(err)), statusFor(err), err instanceof SwitchyardError ? err.headers : undefined);
  };

  // The x-mcp-header annotations of the mount's tools, from a tools/list run through the
  // executor (admission, deadline, interceptors), dropped on tools/list_changed. That list is
  // filtered for the caller it runs for (policy hides tools per principal), so a map is kept per
  // caller view (`viewOf`): a map learnt from a caller who cannot see a tool would leave that
  // tool's headers unchecked for every caller who can, and one learnt from a caller who can see
  // it would answer a header mismatch, not the denial, to one who cannot.
  const annotations = new Map<string, { at: number; map: Map<string, ParamHeader[] | null> }>();
  let watching: { close(): void } | undefined;
  /**
   * What the gateway's filtering of the on-behalf tools/list depends on for this caller: what
   * policy reads of the identity (policyViewKey; cached per identity object, which the
   * authenticators reuse for a credential). The rest of a rule's input (method, mount, era) is
   * the same for every such list. Not the client's capabilities or Authorization: serializing or
   * hashing those on every tools/call cost about 9% of a JWT-authenticated call's throughput
   * (bench/ab.mjs --layers jwt), and they change only what an upstream itself lists.
   */
  const viewOf = (init: RequestInit): string => policyViewKey(init.identity);
  /** `view`'s annotation map while it is fresh (within ANNOTATIONS_TTL_MS and no list change), else undefined. */
  const freshAnnotations = (view: string): Map<string, ParamHeader[] | null> | undefined => {
    const a = annotations.get(view);
    return a && Date.now() - a.at <= ANNOTATIONS_TTL_MS ? a.map : undefined;
  };
  /** Keeps `view`'s map, newest last; past MAX_ANNOTATION_VIEWS the oldest goes. */
  const keep = (view: string, at: number, map: Map<string, ParamHeader[] | null>): void => {
    annotations.delete(view);
    annotations.set(view, { at, map });
    if (annotations.size > MAX_ANNOTATION_VIEWS) annotations.delete(annotations.keys().next().value as string);
  };
  const annotationsOf = async (name: string, view: string, init: RequestInit, signal: AbortSignal): Promise<ParamHeader[] | null> => {
    let map = freshAnnotations(view);
    if (!map) {
      if (!watching) {
        try {
          watching = executor.subscribe({ toolsListChanged: true }, () => annotations.clear(), {
            subscriber: { identity: null, mount: executor.mount, dialect },
            counted: false,
          });
        } catch {
          // shutting down: the cache simply expires
        }
      }
      map = new Map<string, ParamHeader[] | null>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_ANNOTATION_PAGES; page++) {
        // On the tools/call's behalf, not a client request of its own: not published as one.
        let res: JsonObject;
        try {
          res = await executor.run(
            {
              ...init,
              method: 'tools/list',
              params: cursor ? { cursor } : {},
              progressToken: undefined,
              rpcId: undefined,
              onProgress: () => {},
              onLog: () => {},
              // The call's own token was taken for the call; its list takes none.
              onBehalf: true,
              // A drain admits the list of a held call's retry as it admits the retry.
              onBehalfOfState: init.params.requestState,
            },
            signal,
            false,
          );
        } catch (err) {
          // The upstream answered the list with an error, or with one that is not a list: no
          // tool's annotations are known, so the call goes on without the header check rather
          // than failing for its list; the list is asked again after FAILED_LIST_RETRY_MS. An
          // upstream that is down (or a cancelled call) fails the call as before.
          if (!(err instanceof PeerRpcError || (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_PROTOCOL'))) throw err;
          log.warn({ err, mount: executor.mount }, 'tools/list failed: x-mcp-header annotations unknown, tools/call headers not checked');
          keep(view, Date.now() - ANNOTATIONS_TTL_MS + FAILED_LIST_RETRY_MS, new Map());
          return [];
        }
        for (const t of (res.tools as Array<{ name: string; inputSchema?: unknown }> | undefined) ?? []) map.set(t.name, paramHeadersOf(t.inputSchema));
        cursor = typeof res.nextCursor === 'string' ? res.nextCursor : undefined;
        if (!cursor) break;
      }
      keep(view, Date.now(), map);
    }
    return map.get(name) ?? [];
  };

  const listen = async (msg: RpcRequest, decoded: DecodedRequest, inbound: StatelessInbound, sink: Sink) => {
    const { identity, signal } = inbound;
    const want = decoded.params.notifications as SubscriptionFilter | undefined;
    if (!want || typeof want !== 'object' || Array.isArray(want)) {
      return sink.finish(errorResponse(msg.id, new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'notifications filter is required' }).toRpcError()));
    }
    const tag = { [META.subscriptionId]: msg.id };
    const subscriber: SubscriberContext = { identity, mount: executor.mount, dialect };
    let honoured: SubscriptionFilter;
    let sub;
    try {
      honoured = honouredFilter(want, executor.describe().capabilities);
      const uris = honoured.resourceSubscriptions;
      if (uris && uris.length > 0) {
        // Each URI decided by the interceptor chain, as resources/subscribe is in the other eras;
        // a refused one is not honoured, so the acknowledgement leaves it out.
        const subscriber = {
          protocolVersion: decoded.protocolVersion,
          clientInfo: decoded.clientInfo,
          clientCapabilities: decoded.clientCapabilities,
          logLevel: decoded.logLevel,
          identity,
          dialect,
          sessionKey: undefined,
          authorization: inbound.authorization,
          traceContext: traceContextOfHeaders(inbound.headers),
          rpcId: msg.id,
        };
        honoured = { ...honoured, resourceSubscriptions: await executor.admitSubscriptions(subscriber, uris, inbound.cancel ?? signal) };
      }
      sub = executor.subscribe(
        honoured,
        (n) => sink.send({ jsonrpc: '2.0', method: n.method, params: { ...n.params, _meta: { ...(n.params._meta as JsonObject | undefined), ...tag } } }),
        {
          // Its own object: the filters read its identity at each notification, which `follow` changes.
          subscriber,
          client: inbound.client,
          // Where this client's requests go: an upstream that keeps state per session (a 2025
          // upstream under `per-session`, whose server sends updates only to the session that
          // subscribed) is asked on the same upstream session as the client's own calls.
          session: {
            sessionKey: undefined,
            clientCapabilities: decoded.clientCapabilities,
            clientInfo: decoded.clientInfo,
            protocolVersion: decoded.protocolVersion,
            identity,
            authorization: inbound.authorization,
          },
        },
      );
    } catch (err) {
      return fail(msg.id, err, sink);
    }
    // The acknowledgement is the first message on the stream (basic/patterns/subscriptions).
    sink.send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: tag, notifications: honoured } });
    let open = true;
    let release = () => {};
    const end = (last: 'complete' | 'cancelled' | SwitchyardError) => {
      if (!open) return;
      open = false;
      listens.delete(close);
      release();
      signal.removeEventListener('abort', cancel);
      sub.close();
      if (channels.streamClose.hasSubscribers) channels.streamClose.publish({ mount: executor.mount, dialect, kind: 'listen' });
      // A graceful end sends the listen's result; a cancelled one sends nothing more
      // (basic/patterns/subscriptions; basic/patterns/cancellation); one whose credential the
      // front door now refuses is answered with that refusal, as a new request would be.
      sink.finish(
        last === 'complete'
          ? resultResponse(msg.id, { resultType: 'complete', _meta: tag })
          : last === 'cancelled'
            ? null
            : errorResponse(msg.id, encodeError(last)),
      );
    };
    const close = () => end('complete');
    const cancel = () => end('cancelled');
    listens.add(close);
    // Held with its credential: a reload that changes `auth` ends it when the new front door
    // refuses that credential (docs/security.md).
    // A credential that now proves other scopes or claims keeps it: its notifications are filtered
    // for them from then on; what was decided once, at the listen (the resource subscriptions it
    // honoured), stays, and each update is judged for the new identity as it passes.
    release = executor.streams.hold({
      dialect,
      kind: 'listen',
      identity,
      credential: inbound.credential,
      end: (why) => end(why ?? 'complete'),
      follow: (id) => (subscriber.identity = id),
    });
    // switchyard_streams{kind="listen"} follows `listens` (what /status.json counts), opened here
    // and closed in `end` (docs/operations.md, Metrics).
    if (channels.streamOpen.hasSubscribers) channels.streamOpen.publish({ mount: executor.mount, dialect, kind: 'listen' });
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
  };

  return {
    get listens() {
      return listens.size;
    },
    async handle(msg, inbound, sink) {
      let decoded;
      try {
        decoded = decodeRequest(msg, supported, inbound.headers);
        // An unknown method (initialize, ping, … included): -32601, HTTP 404.
        if (!METHODS.has(msg.method)) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: msg.method });
      } catch (err) {
        const e = err as SwitchyardError;
        log.info({ code: e.code, rpcId: msg.id }, 'request refused');
        executor.refused(e, dialect);
        // Every validation refusal ends the exchange with its catalogue status (400, or 404 for -32601).
        return sink.finish(errorResponse(msg.id, e.toRpcError()), e.status);
      }
      const strict = deps.strict;
      if (strict) {
        const bad = strict.check('in', '2026-07-28', msg);
        if (bad.length > 0 && strict.mode === 'reject') {
          const e = strictRejection(bad[0]);
          executor.refused(e, dialect);
          return sink.finish(errorResponse(msg.id, e.toRpcError()), 400);
        }
        sink = checkedSink(sink, strict, '2026-07-28', msg.method, true);
      }
      if (msg.method === 'subscriptions/listen') return listen(msg, decoded, inbound, sink);
      if (msg.method === 'server/discover') {
        const local = {
          method: msg.method,
          params: decoded.params,
          protocolVersion: decoded.protocolVersion,
          dialect,
          identity: inbound.identity,
          clientInfo: decoded.clientInfo,
          clientCapabilities: decoded.clientCapabilities,
          logLevel: decoded.logLevel,
          sessionKey: undefined,
          traceContext: traceContextOfHeaders(inbound.headers),
          rpcId: msg.id,
        };
        try {
          // Answered here, observed as a request all the same (telemetry digest §8).
          const desc = executor.answerLocally(local, () => executor.describe());
          return sink.finish(resultResponse(msg.id, encodeResult(msg.method, discoverResult(desc, supported), desc.serverInfo, deps.cache)));
        } catch (err) {
          return fail(msg.id, err, sink);
        }
      }
      const token = (msg.params?._meta as JsonObject | undefined)?.progressToken as RequestId | undefined;
      const init: RequestInit = {
        method: msg.method,
        params: decoded.params,
        protocolVersion: decoded.protocolVersion,
        clientInfo: decoded.clientInfo,
        clientCapabilities: decoded.clientCapabilities,
        logLevel: decoded.logLevel,
        identity: inbound.identity,
        dialect,
        authorization: inbound.authorization,
        // Where `_meta` carries none (the executor looks there first), the HTTP headers' context.
        traceContext: traceContextOfHeaders(inbound.headers),
        progressToken: token,
        rpcId: msg.id,
        onProgress: (p) => {
          if (token !== undefined) sink.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: token } });
        },
        onLog: (m) => {
          if (levelAdmits(decoded.logLevel, m.level)) sink.send({ jsonrpc: '2.0', method: 'notifications/message', params: { ...m } });
        },
        // 2026-07-28 servers send no requests: input needs travel as input_required results.
        ask: undefined,
      };
      const cancel = inbound.cancel ?? inbound.signal;
      try {
        if (msg.method === 'tools/call' && inbound.headers) {
          // Mcp-Param-* against the tool's x-mcp-header annotations.
          const name = String(decoded.params.name);
          // Fresh annotations are read without a turn of the event loop (every tools/call asks).
          const view = viewOf(init);
          const fresh = freshAnnotations(view);
          let ann: ParamHeader[] | null;
          try {
            ann = fresh ? (fresh.get(name) ?? []) : await annotationsOf(name, view, init, inbound.signal);
          } catch (err) {
            // The tools/call failed before it ran (its upstream is down, say): observed as itself,
            // with that error, and answered with it.
            executor.answerLocally(init, () => {
              throw err;
            });
            throw err;
          }
          if (ann && ann.length > 0) {
            try {
              checkParamHeaders(inbound.headers, decoded.params.arguments as JsonObject | undefined, ann);
            } catch (err) {
              // A header check like the others before the executor: a refusal.
              if (err instanceof SwitchyardError) executor.refused(err, dialect);
              throw err;
            }
          }
        }
        const result = await executor.run(init, cancel, true, encodeError);
        sink.finish(resultResponse(msg.id, encodeResult(msg.method, result, executor.describe().serverInfo, deps.cache)));
      } catch (err) {
        if (cancel.aborted) return sink.finish(null);
        fail(msg.id, err, sink);
      }
    },
    close() {
      for (const end of [...listens]) end();
      watching?.close();
      watching = undefined;
    },
  };
}
