// The 2026-07-28 HTTP binding: one POST per message, JSON or a request-scoped SSE stream, the
// statuses of the Streamable HTTP transport; the message handling itself is server.ts.

import { SwitchyardError } from '../../src/core/errors.js';
import type { HttpExchange } from '../../src/core/exchange.js';
import { classify, errorResponse, idOf, serialize, type RpcRequest } from '../../src/core/message.js';
import type { Dialect } from '../../src/core/dialect.js';
import { createStatelessServer, type StatelessInbound, type StatelessServerDeps } from './server.js';

/**
 * Creates the 2026-07-28 HTTP dialect of one mount.
 * @see 2026-07-28 basic/transports/streamable-http (POST answers: 202 for notifications, JSON or
 *   SSE for requests; no batches; clients send no responses)
 */
export function createStatelessHttp(deps: StatelessServerDeps): Dialect {
  const server = createStatelessServer(deps);
  const { limits } = deps;
  const refuse = (ex: HttpExchange, status: number, id: RpcRequest['id'] | null, err: SwitchyardError) =>
    ex.json(status, serialize(errorResponse(id, err.toRpcError())));
  return {
    id: '2026-07-28',
    revisions: ['2026-07-28'],
    sessionCount: 0,
    streamCount: () => server.listens,
    hasSession: () => false,
    async handle(ex) {
      const body = ex.body;
      if (Array.isArray(body)) return refuse(ex, 400, null, new SwitchyardError('SWY_ERR_REQ_BATCH_NOT_ALLOWED'));
      let kind;
      try {
        kind = classify(body, limits);
      } catch (err) {
        const e = err as SwitchyardError;
        return refuse(ex, 400, e.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(body, limits), e);
      }
      // Notification POST accepted: 202, no body.
      if (kind === 'notification') return ex.empty(202);
      if (kind === 'response')
        return refuse(ex, 400, idOf(body, limits), new SwitchyardError('SWY_ERR_REQ_INVALID', { detail: 'clients send no responses in 2026-07-28' }));
      const auth = ex.headers.get('authorization');
      await server.handle(body as RpcRequest, new HttpInbound(ex, auth), ex.reply());
    },
    async close() {
      server.close();
    },
  };
}

/**
 * The inbound side of one HTTP request. Its `signal` is the exchange's, read only by the paths
 * that need a real AbortSignal (subscriptions/listen, a header lookup). A class, not an object
 * literal with a getter: V8 makes a literal's accessor anew on every request (about 0.8 µs).
 */
class HttpInbound implements StatelessInbound {
  readonly headers: HttpExchange['headers'];
  readonly identity: HttpExchange['identity'];
  readonly cancel: HttpExchange['cancel'];

  constructor(
    private readonly ex: HttpExchange,
    readonly authorization: string | undefined,
  ) {
    this.headers = ex.headers;
    this.identity = ex.identity;
    this.cancel = ex.cancel;
  }

  get signal(): AbortSignal {
    return this.ex.signal;
  }

  /** Read by a listen only (`HttpExchange.credential`). */
  get credential(): HttpExchange['credential'] {
    return this.ex.credential;
  }

  /** Read by a listen only: the key is computed then (`HttpExchange.client`). */
  get client(): string | undefined {
    return this.ex.client;
  }
}
