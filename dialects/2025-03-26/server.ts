// The initialize era's message server, shared by every front door of the era (Streamable HTTP,
// HTTP+SSE, stdio): opening a session with `initialize`, and JSON-RPC batches.

import type { Sink } from '../../src/core/exchange.js';
import { SwitchyardError, toRpcError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { classify, errorResponse, resultResponse, type ParseLimits, type RpcMessage, type RpcRequest, type RpcResponse } from '../../src/core/message.js';
import { strictRejection, type MessageValidator } from '../../src/core/strict.js';
import type { TraceContext } from '../../src/core/trace.js';
import { FLAGS, negotiate } from './codec.js';
import { ClientSession, type SessionDeps } from './session.js';

/**
 * Opens a session for an `initialize` request: negotiates the revision among `revisions`
 * (newest first) and returns the session with its InitializeResult response. The session is
 * bound to `identity` (its principal) for its whole life.
 * @param sealed the session id (its sealed state, see `initialState`) and creation time; absent: a random UUID, now.
 * @param traceContext the transport's trace context (HTTP headers), for the span of `initialize` where `_meta` has none.
 * @see 2025-11-25 basic/lifecycle#initialization
 * @throws SwitchyardError SWY_ERR_ADMISSION_SHUTTING_DOWN; SWY_ERR_UPSTREAM_UNAVAILABLE when the upstream is not described yet
 */
export function openSession(
  deps: SessionDeps,
  req: RpcRequest,
  revisions: readonly string[],
  identity: Identity | null,
  sealed?: { id: string; createdAtMs: number },
  traceContext?: TraceContext,
): { session: ClientSession; response: RpcResponse } {
  if (deps.executor.closing) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
  checkInitialize(deps.strict, req, revisions);
  const session = new ClientSession(deps, revisions[0], identity, sealed?.id, sealed?.createdAtMs);
  const result = session.initialize(req.params ?? {}, revisions, traceContext, req.id);
  const response = resultResponse(req.id, result);
  deps.strict?.check('out', session.version, response, 'initialize');
  return { session, response };
}

/**
 * Strict mode's check of a client's `initialize`, against the schema of the revision it would
 * negotiate among `revisions`: violations are logged, and with `--strict=reject` the first one
 * refuses it, as every other invalid client message is refused (docs/strict.md).
 * @throws SwitchyardError SWY_ERR_REQ_SCHEMA (-32602 for a fault in `params`, else -32600)
 * @see schema/<rev>/schema.json InitializeRequest
 */
export function checkInitialize(strict: MessageValidator | undefined, req: RpcRequest, revisions: readonly string[]): void {
  if (!strict) return;
  const bad = strict.check('in', negotiate(req.params?.protocolVersion, revisions), req);
  if (bad.length > 0 && strict.mode === 'reject') throw strictRejection(bad[0]);
}

/** A batch's outcome: the responses to send (none when it held only notifications and responses). */
export type BatchReplies = RpcResponse[];

/**
 * The refusal of a batch that arrives with no session to run in: SWY_ERR_REQ_BATCH_INITIALIZE when
 * it holds an `initialize` request (what the client did wrong is batch it, whatever revision it
 * offers), else SWY_ERR_REQ_BATCH_NOT_ALLOWED.
 * @see 2025-03-26 basic/lifecycle#initialization (the initialize request MUST NOT be part of a JSON-RPC batch)
 */
export function sessionlessBatchError(items: readonly unknown[]): SwitchyardError {
  const initialize = items.some((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
  return new SwitchyardError(initialize ? 'SWY_ERR_REQ_BATCH_INITIALIZE' : 'SWY_ERR_REQ_BATCH_NOT_ALLOWED');
}

/**
 * Runs one JSON-RPC batch of a session (2025-03-26 only): each element on its own (a bad one
 * gets its own error response), `initialize` refused inside, messages before a batched response
 * dropped (they have no stream to travel on). Resolves with the responses, in completion order.
 * @see 2025-03-26 basic/transports#sending-messages-to-the-server; basic/lifecycle (initialize MUST NOT be batched)
 * @throws SwitchyardError SWY_ERR_REQ_BATCH_NOT_ALLOWED (other revisions), SWY_ERR_REQ_INVALID (empty),
 *   SWY_ERR_REQ_BATCH_TOO_LARGE (over `maxBatchMessages`)
 */
export async function runBatch(
  session: ClientSession,
  items: readonly unknown[],
  limits: ParseLimits & { maxBatchMessages: number },
  authorization: string | undefined,
  identity: Identity | null,
): Promise<BatchReplies> {
  if (!FLAGS.batches(session.version)) throw new SwitchyardError('SWY_ERR_REQ_BATCH_NOT_ALLOWED');
  if (items.length === 0) throw new SwitchyardError('SWY_ERR_REQ_INVALID', { detail: 'empty batch' });
  if (items.length > limits.maxBatchMessages) throw new SwitchyardError('SWY_ERR_REQ_BATCH_TOO_LARGE');
  const replies: RpcResponse[] = [];
  const collect: Sink = {
    send: () => false,
    finish: (m) => {
      if (m) for (const one of Array.isArray(m) ? m : [m]) replies.push(one as RpcResponse);
    },
    streaming: false,
  };
  const work: Promise<void>[] = [];
  for (const item of items) {
    let kind;
    try {
      kind = classify(item, limits);
    } catch (err) {
      replies.push(errorResponse(null, toRpcError(err)));
      continue;
    }
    // An `initialize` inside the batch goes to the session too, which refuses it
    // (SWY_ERR_SESSION_ALREADY_INITIALIZED) and counts it as a request.
    work.push(session.handle(item as RpcMessage, kind, kind === 'request' ? collect : { ...collect, finish: () => {} }, authorization, identity));
  }
  await Promise.all(work);
  return replies;
}
