// The 2026-07-28 dialect: stateless Streamable HTTP, one POST per request, JSON or a
// request-scoped SSE stream, subscriptions/listen streams.

import { honouredFilter } from '../../src/core/upstream.js';
import type { Dialect, DialectDeps, HttpExchange, SseStream } from '../../src/core/dialect.js';
import { ReplyChannel, strictRejection } from '../../src/core/dialect.js';
import { PeerRpcError, SwitchyardError, type ErrorCode } from '../../src/core/errors.js';
import { modernRpcError } from '../../src/core/sessions.js';
import { classify, errorResponse, idOf, resultResponse, serialize, type JsonObject, type RequestId, type RpcRequest } from '../../src/core/message.js';
import { levelAdmits, type SubscriptionFilter } from '../../src/core/request.js';
import { validateModernRequest, validateParamHeaders } from './decode.js';
import { encodeModernResult, type CacheDefaults } from './encode.js';
import { META, MODERN_REQUESTS } from './methods.js';

export { decodeHeaderValue, encodeHeaderValue, validateModernRequest, validateParamHeaders } from './decode.js';
export { encodeModernResult } from './encode.js';

/** Revisions this dialect serves. */
export const REVISIONS = ['2026-07-28'] as const;

/** Errors that end the exchange with their own HTTP status even after validation passed. */
const STATUS_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'SWY_ERR_REQ_METHOD_NOT_FOUND',
  'SWY_ERR_MODERN_CAPABILITY',
  'SWY_ERR_MODERN_HEADER_MISMATCH',
  'SWY_ERR_ADMISSION_BUSY',
  'SWY_ERR_ADMISSION_SHUTTING_DOWN',
  'SWY_ERR_SUBSCRIPTION_LIMIT',
]);

/** Options of the 2026-07-28 dialect. */
export interface ModernOptions {
  /** Caching fields for results that carry none. */
  cache: CacheDefaults;
}

/**
 * Creates the 2026-07-28 dialect.
 * @see 2026-07-28 basic/transports/streamable-http; basic/patterns/subscriptions; basic/patterns/mrtr
 */
export function createModernDialect(deps: DialectDeps, opts: ModernOptions): Dialect {
  const { executor, limits, log } = deps;
  const listens = new Set<{ stream: SseStream; id: RequestId; close: () => void }>();

  const fail = (ex: HttpExchange, id: RequestId | null, err: unknown, channel?: ReplyChannel) => {
    if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_CANCELLED') return;
    const body = errorResponse(id, modernRpcError(err));
    if (channel?.streaming) return channel.finish(body);
    let status = 200;
    if (err instanceof SwitchyardError) {
      if (STATUS_CODES.has(err.code)) status = err.status;
      if (err.entry.fault !== 'client') log.error({ err, rpcId: id }, 'request failed');
    } else if (err instanceof PeerRpcError) {
      // An upstream's -32021 is still a missing client capability: HTTP 400 (stateless-2026-07-28 §4.2 step 11).
      if (err.rpc.code === -32021) status = 400;
    } else {
      log.error({ err, rpcId: id }, 'internal error');
    }
    if (channel) channel.finish(body, status);
    else ex.json(status, serialize(body));
  };

  const listen = (ex: HttpExchange, msg: RpcRequest, version: string, params: JsonObject) => {
    const want = params.notifications as SubscriptionFilter | undefined;
    if (!want || typeof want !== 'object' || Array.isArray(want)) {
      return ex.json(
        200,
        serialize(errorResponse(msg.id, new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'notifications filter is required' }).toRpcError())),
      );
    }
    const honoured = honouredFilter(want, executor.router.upstream.describe().capabilities);
    const out: { stream?: SseStream } = {};
    const tag = { [META.subscriptionId]: msg.id };
    let sub;
    try {
      sub = executor.subscribe(honoured, (n) => {
        out.stream?.send({
          event: 'message',
          data: serialize({ jsonrpc: '2.0', method: n.method, params: { ...n.params, _meta: { ...(n.params._meta as JsonObject | undefined), ...tag } } }),
        });
      });
    } catch (err) {
      return fail(ex, msg.id, err);
    }
    const stream = (out.stream = ex.sse());
    // The acknowledgement is the first message on the stream (basic/patterns/subscriptions).
    stream.send({
      event: 'message',
      data: serialize({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: tag, notifications: honoured } }),
    });
    const entry = {
      stream,
      id: msg.id,
      close: () => {
        // A graceful end sends the listen's result, then closes (basic/patterns/subscriptions).
        stream.send({ event: 'message', data: serialize(resultResponse(msg.id, { resultType: 'complete', _meta: tag })) });
        stream.close();
      },
    };
    listens.add(entry);
    stream.onClose(() => {
      sub.close();
      listens.delete(entry);
    });
    void version;
  };

  return {
    id: '2026-07-28',
    revisions: REVISIONS,
    sessionCount: 0,
    hasSession: () => false,
    async handle(ex: HttpExchange): Promise<void> {
      const body = ex.body;
      if (Array.isArray(body)) return ex.json(400, serialize(errorResponse(null, new SwitchyardError('SWY_ERR_REQ_BATCH_NOT_ALLOWED').toRpcError())));
      let kind;
      try {
        kind = classify(body, limits);
      } catch (err) {
        const e = err as SwitchyardError;
        const id = e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(body, limits);
        return ex.json(400, serialize(errorResponse(id, e.toRpcError())));
      }
      // Notification POST accepted: 202, no body. Clients send no responses in this revision.
      if (kind === 'notification') return ex.empty(202);
      if (kind === 'response')
        return ex.json(
          400,
          serialize(
            errorResponse(idOf(body, limits), new SwitchyardError('SWY_ERR_REQ_INVALID', { detail: 'clients send no responses in 2026-07-28' }).toRpcError()),
          ),
        );
      const msg = body as RpcRequest;
      let info;
      try {
        info = validateModernRequest(ex.headers, msg, deps.modernRevisions);
      } catch (err) {
        return ex.json(400, serialize(errorResponse(msg.id, (err as SwitchyardError).toRpcError())));
      }
      // 10. Unknown method: 404 with -32601 (the JSON-RPC body tells it from a legacy 404).
      if (!MODERN_REQUESTS.has(msg.method)) {
        return ex.json(404, serialize(errorResponse(msg.id, new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: msg.method }).toRpcError())));
      }
      if (deps.strict) {
        const bad = deps.strict.check('in', '2026-07-28', msg);
        if (bad.length > 0 && deps.strict.mode === 'reject') return ex.json(400, serialize(errorResponse(msg.id, strictRejection(bad[0]).toRpcError())));
      }
      if (msg.method === 'subscriptions/listen') return listen(ex, msg, info.protocolVersion, info.params);
      const token = (msg.params?._meta as JsonObject | undefined)?.progressToken as RequestId | undefined;
      const channel = new ReplyChannel(ex);
      if (deps.strict) channel.tap = (m) => void deps.strict!.check('out', '2026-07-28', m, msg.method);
      const init = {
        method: msg.method,
        params: info.params,
        protocolVersion: info.protocolVersion,
        clientInfo: info.clientInfo,
        clientCapabilities: info.clientCapabilities,
        logLevel: info.logLevel,
        identity: null,
        authorization: typeof ex.headers.authorization === 'string' ? ex.headers.authorization : undefined,
        progressToken: token,
        onProgress: (p: { progress: number; total?: number; message?: string }) => {
          if (token !== undefined) channel.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: token } });
        },
        onLog: (m: { level: string; logger?: string; data: unknown }) => {
          if (levelAdmits(info.logLevel, m.level)) channel.send({ jsonrpc: '2.0', method: 'notifications/message', params: { ...m } });
        },
        ask: undefined,
      };
      try {
        if (msg.method === 'tools/call') {
          // 9. Mcp-Param-* against the tool's x-mcp-header annotations.
          const name = String(info.params.name);
          const ann = await executor.router.toolParamHeaders(name, { ...init, signal: ex.signal });
          if (ann && ann.length > 0) validateParamHeaders(ex.headers, info.params.arguments as JsonObject | undefined, ann);
        }
        const result = await executor.run(init, ex.signal);
        const serverInfo = executor.router.upstream.describe().serverInfo;
        channel.finish(resultResponse(msg.id, encodeModernResult(msg.method, result, serverInfo, opts.cache)));
      } catch (err) {
        fail(ex, msg.id, err, channel);
      }
    },
    async close(): Promise<void> {
      for (const l of [...listens]) l.close();
    },
  };
}
