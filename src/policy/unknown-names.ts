// Makes an upstream's answer for a name it does not have the same as the gateway's answer for a hidden name.

import { PeerRpcError } from '../core/errors.js';
import { deriveContext, LIST_SHAPES, type Interceptor } from '../core/interceptor.js';
import type { JsonObject } from '../core/message.js';
import type { RequestContext } from '../core/request.js';
import { invokedComponent, unknownComponentError } from './components.js';

/** Pages of an upstream's list read to find one name (each page comes from the list cache when it holds it). */
const MAX_PAGES = 50;
/**
 * JSON-RPC codes an upstream answers a `resources/read` of a URI it does not have with: -32002
 * (initialize era) and -32602 (2026-07-28, and what SDK servers send in every era).
 * @see 2025-11-25 server/resources#error-handling; 2026-07-28 basic#error-codes
 */
const RESOURCE_MISSING_CODES: ReadonlySet<number> = new Set([-32002, -32602]);

/** Whether the upstream's own list of `method` (`tools/list`, `prompts/list`) names `name`; undefined when it could not be read. */
async function listed(
  next: (ctx: RequestContext) => Promise<JsonObject>,
  ctx: RequestContext,
  method: 'tools/list' | 'prompts/list',
  name: string,
): Promise<boolean | undefined> {
  const shape = LIST_SHAPES[method];
  let cursor: unknown;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await next(
        deriveContext(ctx, {
          method,
          params: cursor === undefined ? {} : { cursor: cursor as string },
          component: undefined,
          progressToken: undefined,
          onBehalf: true,
        }),
      );
      const items = res[shape.key];
      if (Array.isArray(items) && items.some((i) => i !== null && typeof i === 'object' && (i as JsonObject)[shape.nameKey] === name)) return true;
      cursor = res.nextCursor;
      if (typeof cursor !== 'string') return false;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Creates the interceptor that gives a name the upstream does not have exactly the error a
 * hidden (or, with `hideDenied`, denied) name gets ({@link unknownComponentError}), so that a
 * caller cannot tell them apart on an upstream that words its own unknown-name errors otherwise
 * (the SDK servers: `MCP error -32602: Tool X not found` as an `isError` result, `… Prompt X not
 * found` and `… Resource X not found` as -32602 errors). Put it innermost of the policy
 * interceptors, so that it sees the upstream's own names (curation then names the client's).
 * - `tools/call` answered with an error or an `isError` result, `prompts/get` answered with an
 *   error: when the upstream's own list (read through the list cache) does not name it, the
 *   answer is replaced by the unknown-name error. A successful answer costs nothing.
 * - `resources/read` answered -32002 or -32602: resource not found (`SWY_ERR_REQ_RESOURCE_NOT_FOUND`,
 *   `data.uri`), as for a hidden URI.
 * @throws SwitchyardError SWY_ERR_REQ_PARAMS, SWY_ERR_REQ_RESOURCE_NOT_FOUND; what the upstream answered otherwise
 * @see docs/policy.md (Denials: the error an unknown name gets)
 */
export function createUnknownNameInterceptor(): Interceptor {
  return (next) => async (ctx) => {
    if (ctx.method !== 'tools/call' && ctx.method !== 'prompts/get' && ctx.method !== 'resources/read') return next(ctx);
    const c = invokedComponent(ctx);
    if (!c) return next(ctx);
    if (ctx.method === 'resources/read') {
      try {
        return await next(ctx);
      } catch (err) {
        if (err instanceof PeerRpcError && RESOURCE_MISSING_CODES.has(err.rpc.code)) throw unknownComponentError(c);
        throw err;
      }
    }
    const list = ctx.method === 'tools/call' ? 'tools/list' : 'prompts/list';
    let res: JsonObject;
    try {
      res = await next(ctx);
    } catch (err) {
      if (err instanceof PeerRpcError && !ctx.signal.aborted && (await listed(next, ctx, list, c.name)) === false) throw unknownComponentError(c);
      throw err;
    }
    if (ctx.method === 'tools/call' && res.isError === true && !ctx.signal.aborted && (await listed(next, ctx, list, c.name)) === false)
      throw unknownComponentError(c);
    return res;
  };
}
