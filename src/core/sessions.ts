// Initialize-era client sessions (2024-11-05 … 2025-11-25): the state older dialects keep so
// that the core can stay self-describing per request, and the legacy shim that turns
// `input_required` results into real server-to-client requests.

import { randomUUID } from 'node:crypto';
import { strictRejection, type CoreLog, type MessageValidator } from './dialect.js';
import { PeerRpcError, SwitchyardError, toRpcError } from './errors.js';
import type { Executor } from './executor.js';
import { errorResponse, idKey, resultResponse, type JsonObject, type RequestId, type RpcMessage, type RpcRequest, type RpcResponse } from './message.js';
import { INPUT_METHODS } from './router.js';
import { LOG_LEVELS, levelAdmits, type Implementation, type SubscriptionFilter } from './request.js';
import type { Subscription } from './upstream.js';

/**
 * Where a session's messages for one client request go: `send` carries messages before the
 * response (progress, log messages, server requests); `finish` the response itself (or
 * nothing, for a cancelled request).
 */
export interface Outbound {
  /** @returns false when nothing can carry the message any more. */
  send(msg: RpcMessage): boolean;
  finish(msg: RpcResponse | null): void;
}

/** Session bounds (from limits.ts). */
export interface SessionLimits {
  maxInputRounds: number;
  clientRequestTimeoutMs: number;
  /** Server-to-client requests awaiting answers per session. */
  maxPendingClientRequests: number;
  /** Client requests in flight per session. */
  maxInFlightPerSession: number;
}

/** Fixed per-session bounds (docs/config.md, "Fixed bounds"). */
const MAX_PENDING_CLIENT_REQUESTS = 64;
const MAX_INFLIGHT_PER_SESSION = 256;

/**
 * The session bounds for the configured limits: input rounds and client answer time from
 * `limits`, pending server requests and in-flight requests fixed (64, 256).
 */
export function sessionLimits(limits: { maxInputRounds: number; clientRequestTimeoutMs: number }): SessionLimits {
  return {
    maxInputRounds: limits.maxInputRounds,
    clientRequestTimeoutMs: limits.clientRequestTimeoutMs,
    maxPendingClientRequests: MAX_PENDING_CLIENT_REQUESTS,
    maxInFlightPerSession: MAX_INFLIGHT_PER_SESSION,
  };
}

/** Errors toward eras before 2026-07-28 keep their older codes (resource not found: -32002). */
export function legacyRpcError(err: unknown): ReturnType<typeof toRpcError> {
  if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_RESOURCE_NOT_FOUND') {
    // 2025-11-25 server/resources#error-handling: resource not found is -32002.
    return { ...err.toRpcError(), code: -32002 };
  }
  if (err instanceof SwitchyardError && err.code === 'SWY_ERR_MODERN_CAPABILITY') {
    // -32021 exists only in 2026-07-28; older clients learn the same in their own terms.
    const need = Object.keys((err.data?.requiredCapabilities as Record<string, unknown> | undefined) ?? {}).join(', ');
    return new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: `client did not declare ${need}` }).toRpcError();
  }
  const rpc = toRpcError(err);
  // A modern upstream's resource-not-found (-32602 with data.uri) keeps its older code here.
  if (err instanceof PeerRpcError && rpc.code === -32602 && typeof (rpc.data as { uri?: unknown } | undefined)?.uri === 'string')
    return { ...rpc, code: -32002 };
  return rpc;
}

/**
 * Errors toward 2026-07-28 clients: an older upstream's -32002 (resource not found) becomes
 * -32602, which that revision uses instead (2026-07-28 basic#error-codes: -32002 reserved, MUST NOT emit).
 */
export function modernRpcError(err: unknown): ReturnType<typeof toRpcError> {
  const rpc = toRpcError(err);
  return rpc.code === -32002 ? { ...rpc, code: -32602 } : rpc;
}

/**
 * One initialize-era session: negotiated revision, client identity and capabilities, log
 * level, in-flight requests (for `notifications/cancelled`), pending server-to-client requests,
 * and resource subscriptions.
 * @see 2025-11-25 basic/lifecycle; basic/utilities/cancellation; server/utilities/logging
 */
export class ClientSession {
  /** The session id (Mcp-Session-Id or the HTTP+SSE `sessionId`): a random UUID (SM2). */
  readonly id = randomUUID();
  /** Negotiated revision. */
  version: string;
  clientInfo: Implementation | undefined;
  clientCapabilities: JsonObject = {};
  logLevel: string | undefined;
  initialized = false;
  /** True once `initialize` was answered. */
  negotiated = false;
  /** Strict mode: validates this session's messages against its era's schema. */
  validator: MessageValidator | undefined;
  readonly resourceUris = new Set<string>();
  private readonly inflight = new Map<string, AbortController>();
  private readonly pending = new Map<string, { resolve: (r: JsonObject) => void; reject: (e: unknown) => void; timer: NodeJS.Timeout }>();
  private nextServerId = 0;
  private closed = false;
  private readonly executor: Executor;
  private readonly limits: SessionLimits;
  private readonly log: CoreLog;
  private notifySub: Subscription | undefined;
  private notifySink: ((msg: RpcMessage) => void) | undefined;

  constructor(executor: Executor, limits: SessionLimits, log: CoreLog, version: string) {
    this.executor = executor;
    this.limits = limits;
    this.log = log;
    this.version = version;
  }

  /** True once closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Answers `initialize`: echoes the requested revision when it is in `revisions`, else
   * counter-offers the newest (2025-11-25 basic/lifecycle#version-negotiation).
   */
  initialize(params: JsonObject, revisions: readonly string[]): JsonObject {
    const requested = params.protocolVersion;
    this.version = typeof requested === 'string' && revisions.includes(requested) ? requested : revisions[0];
    this.negotiated = true;
    this.clientInfo = params.clientInfo as Implementation | undefined;
    this.clientCapabilities = (params.capabilities as JsonObject | undefined) ?? {};
    const desc = this.executor.router.upstream.describe();
    const out: JsonObject = { protocolVersion: this.version, capabilities: desc.capabilities, serverInfo: desc.serverInfo };
    if (desc.instructions !== undefined) out.instructions = desc.instructions;
    return out;
  }

  /**
   * Delivers the session's unsolicited notifications (list changes, resource updates) to
   * `sink` until `detachNotifications`. Bounded by the session count, not `maxSubscriptions`
   * (one notification stream per session).
   */
  attachNotifications(sink: (msg: RpcMessage) => void): void {
    this.detachNotifications();
    this.notifySink = sink;
    this.resubscribe();
  }

  /** Stops unsolicited notification delivery. */
  detachNotifications(): void {
    this.notifySub?.close();
    this.notifySub = undefined;
    this.notifySink = undefined;
  }

  private resubscribe(): void {
    const sink = this.notifySink;
    if (!sink) return;
    this.notifySub?.close();
    const filter: SubscriptionFilter = {
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: [...this.resourceUris],
    };
    this.notifySub = this.executor.router.subscribe(filter, (n) => sink({ jsonrpc: '2.0', method: n.method, params: n.params }));
  }

  /**
   * Handles one client message of this session. Requests are answered through `out`;
   * responses resolve pending server-to-client requests; notifications are applied.
   * Never throws: every failure becomes a JSON-RPC error on `out`.
   * @param authorization the HTTP request's `Authorization`, for upstreams allowed to receive it.
   */
  async handle(msg: RpcMessage, kind: 'request' | 'notification' | 'response', out: Outbound, authorization?: string): Promise<void> {
    const v = this.validator;
    if (v) {
      const bad = kind === 'response' ? [] : v.check('in', this.version, msg);
      if (bad.length > 0 && v.mode === 'reject') {
        if (kind === 'request') out.finish(errorResponse((msg as RpcRequest).id, strictRejection(bad[0]).toRpcError()));
        return;
      }
      const method = kind === 'request' ? (msg as RpcRequest).method : undefined;
      const inner = out;
      out = {
        send: (m) => {
          v.check('out', this.version, m);
          return inner.send(m);
        },
        finish: (m) => {
          if (m) v.check('out', this.version, m, method);
          inner.finish(m);
        },
      };
    }
    if (kind === 'response') return this.onResponse(msg as RpcResponse);
    if (kind === 'notification') return this.onNotification(msg as { method: string; params?: JsonObject });
    const req = msg as RpcRequest;
    try {
      const result = await this.request(req, out, authorization);
      if (result !== null) out.finish(resultResponse(req.id, result));
    } catch (err) {
      if (err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_CANCELLED') return out.finish(null);
      if (err instanceof SwitchyardError && err.entry.fault !== 'client') this.log.error({ err, rpcId: req.id, sessionId: this.id }, 'request failed');
      else if (!(err instanceof SwitchyardError) && !(err instanceof PeerRpcError)) this.log.error({ err, rpcId: req.id }, 'internal error');
      out.finish(errorResponse(req.id, legacyRpcError(err)));
    }
  }

  private async request(req: RpcRequest, out: Outbound, authorization: string | undefined): Promise<JsonObject | null> {
    const params = req.params ?? {};
    // 2024-11-05 basic/lifecycle: initialization first; only ping may come before it.
    if (!this.negotiated && req.method !== 'ping' && req.method !== 'initialize') throw new SwitchyardError('SWY_ERR_SESSION_NOT_INITIALIZED');
    switch (req.method) {
      case 'initialize':
        throw new SwitchyardError('SWY_ERR_SESSION_ALREADY_INITIALIZED');
      case 'ping':
        // 2024-11-05 basic/utilities/ping: answer promptly with an empty result.
        return {};
      case 'logging/setLevel': {
        const level = params.level;
        if (!(LOG_LEVELS as readonly unknown[]).includes(level)) throw new SwitchyardError('SWY_ERR_REQ_LOG_LEVEL');
        this.logLevel = level as string;
        return {};
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const caps = this.executor.router.upstream.describe().capabilities as { resources?: { subscribe?: boolean } };
        if (!caps.resources?.subscribe) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: req.method });
        if (typeof params.uri !== 'string') throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'uri must be a string' });
        if (req.method === 'resources/subscribe') {
          if (this.resourceUris.size >= 1024 && !this.resourceUris.has(params.uri)) throw new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT');
          this.resourceUris.add(params.uri);
        } else this.resourceUris.delete(params.uri);
        this.resubscribe();
        return {};
      }
      default:
        return this.route(req, out, authorization);
    }
  }

  private async route(req: RpcRequest, out: Outbound, authorization: string | undefined): Promise<JsonObject> {
    const key = idKey(req.id);
    // basic/messages: an id MUST NOT be reused within the session while its request runs.
    if (this.inflight.has(key)) throw new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID');
    if (this.inflight.size >= this.limits.maxInFlightPerSession) throw new SwitchyardError('SWY_ERR_ADMISSION_BUSY');
    const ac = new AbortController();
    this.inflight.set(key, ac);
    const meta = req.params?._meta as JsonObject | undefined;
    const token = meta?.progressToken as RequestId | undefined;
    let params: JsonObject = { ...(req.params ?? {}) };
    try {
      for (let round = 0; ; round++) {
        const result = await this.executor.run(
          {
            method: req.method,
            params,
            protocolVersion: this.version,
            clientInfo: this.clientInfo,
            clientCapabilities: this.clientCapabilities,
            logLevel: this.logLevel,
            identity: null,
            sessionKey: this.id,
            authorization,
            progressToken: token,
            onProgress: (p) => {
              if (token !== undefined) out.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: token } });
            },
            onLog: (m) => {
              if (levelAdmits(this.logLevel, m.level)) out.send({ jsonrpc: '2.0', method: 'notifications/message', params: { ...m } });
            },
            ask: (method, p, signal) => this.ask(out, method, p, signal),
          },
          ac.signal,
        );
        if (result.resultType !== 'input_required' || !INPUT_METHODS.has(req.method)) return result;
        if (round + 1 >= this.limits.maxInputRounds) throw new SwitchyardError('SWY_ERR_REQ_INPUT_ROUNDS');
        // Legacy shim: issue each input request as a real server-to-client request, then
        // retry with inputResponses and requestState (2026-07-28 basic/patterns/mrtr).
        const asks = (result.inputRequests ?? {}) as Record<string, { method: string; params?: JsonObject }>;
        const answers: JsonObject = {};
        await Promise.all(
          Object.entries(asks).map(async ([k, r]) => {
            answers[k] = await this.ask(out, r.method, r.params ?? {}, ac.signal);
          }),
        );
        params = { ...(req.params ?? {}), inputResponses: answers };
        if (typeof result.requestState === 'string') params.requestState = result.requestState;
      }
    } finally {
      this.inflight.delete(key);
    }
  }

  /**
   * Sends a server-to-client request on `out` and waits for the client's response.
   * @throws SwitchyardError SWY_ERR_REQ_INPUT_UNSUPPORTED (capability not declared, or no
   *   channel), SWY_ERR_REQ_DEADLINE (no answer within `clientRequestTimeoutMs`); PeerRpcError
   */
  ask(out: Outbound, method: string, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    const need: Record<string, string> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };
    const cap = need[method];
    if (cap && this.clientCapabilities[cap] === undefined) {
      return Promise.reject(new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: `client did not declare ${cap}` }));
    }
    if (this.pending.size >= this.limits.maxPendingClientRequests) return Promise.reject(new SwitchyardError('SWY_ERR_ADMISSION_BUSY'));
    const id = `swy-${++this.nextServerId}`;
    if (method === 'elicitation/create' && params.mode === 'form' && this.version < '2025-11-25') {
      // `mode` arrives with 2025-11-25 (URL elicitation); older clients know form mode only.
      params = { ...params };
      delete params.mode;
    }
    return new Promise<JsonObject>((resolve, reject) => {
      const key = idKey(id);
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pending.delete(key);
      };
      const onAbort = () => {
        cleanup();
        // Tell the client to stop (basic/utilities/cancellation).
        out.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'request cancelled' } });
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `client did not answer ${method}` }));
      }, this.limits.clientRequestTimeoutMs);
      timer.unref();
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(key, {
        resolve: (r) => {
          cleanup();
          resolve(r);
        },
        reject: (e) => {
          cleanup();
          reject(e);
        },
        timer,
      });
      if (!out.send({ jsonrpc: '2.0', id, method, params })) {
        cleanup();
        reject(new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: 'no stream to carry the request' }));
      }
    });
  }

  private onResponse(res: RpcResponse): void {
    if (res.id === null) return;
    const p = this.pending.get(idKey(res.id));
    if (!p) return;
    if ('error' in res) p.reject(new PeerRpcError(res.error));
    else p.resolve(res.result ?? {});
  }

  private onNotification(n: { method: string; params?: JsonObject }): void {
    if (n.method === 'notifications/initialized') this.initialized = true;
    else if (n.method === 'notifications/cancelled') {
      // basic/utilities/cancellation: stop the work; send no response for it.
      const rid = n.params?.requestId;
      if (typeof rid === 'string' || typeof rid === 'number' || typeof rid === 'bigint') this.inflight.get(idKey(rid))?.abort();
    }
  }

  /** Ends the session: in-flight work is cancelled, pending server requests fail, notifications stop. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.detachNotifications();
    this.executor.router.upstream.release?.(this.id);
    for (const ac of this.inflight.values()) ac.abort();
    this.inflight.clear();
    for (const p of [...this.pending.values()]) p.reject(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
    this.pending.clear();
  }
}
