// Makes an upstream's answer for a name it does not have the same as the gateway's answer for a hidden name.

import { PeerRpcError } from '../core/errors.js';
import { deriveContext, LIST_SHAPES, type Component, type Interceptor } from '../core/interceptor.js';
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
  // Not an async function: a call the upstream has (the common case) settles in the one reaction
  // below, and a method it does not concern gets the next stage's promise itself. An async frame
  // cost every tools/call, prompts/get and resources/read on a curated or hideDenied upstream its
  // own promise and an await. What is thrown before the next stage runs becomes a rejection, as
  // from an async function.
  return (next) => (ctx) => {
    try {
      const method = ctx.method;
      if (method !== 'tools/call' && method !== 'prompts/get' && method !== 'resources/read') return next(ctx);
      const component: Component | undefined = invokedComponent(ctx);
      if (!component) return next(ctx);
      if (method === 'resources/read')
        return next(ctx).then(undefined, (err: unknown) => {
          if (err instanceof PeerRpcError && RESOURCE_MISSING_CODES.has(err.rpc.code)) throw unknownComponentError(component);
          throw err;
        });
      const list = method === 'tools/call' ? 'tools/list' : 'prompts/list';
      return next(ctx).then(
        (res) =>
          method === 'tools/call' && res.isError === true && !ctx.signal.aborted
            ? listed(next, ctx, list, component.name).then((has) => {
                if (has === false) throw unknownComponentError(component);
                return res;
              })
            : res,
        async (err: unknown) => {
          if (err instanceof PeerRpcError && !ctx.signal.aborted && (await listed(next, ctx, list, component.name)) === false)
            throw unknownComponentError(component);
          throw err;
        },
      );
    } catch (err) {
      return Promise.reject(err);
    }
  };
}
