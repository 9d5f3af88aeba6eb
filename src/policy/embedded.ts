// Resources that travel inside results (embedded `resource` blocks, `resource_link` blocks, a read's other contents), withheld from a caller who may not read them.

import type { JsonObject } from '../core/message.js';
import type { RequestContext } from '../core/request.js';

/**
 * The text of the block that takes a withheld block's place. It names neither the URI nor the
 * reason, and is the same for a hidden and a denied resource, so that a caller learns no more
 * than that the upstream's result held a resource it may not read.
 */
export const WITHHELD_RESOURCE_TEXT = '[resource withheld by the gateway: not available to this caller]';

/**
 * Methods whose results carry resources: `tools/call` (`content` blocks), `prompts/get` (each
 * message's `content` block) and `resources/read` (`contents`, which may name other resources
 * than the one read).
 * @see 2025-11-25 schema (CallToolResult, PromptMessage, ReadResourceResult; ContentBlock holds
 *   EmbeddedResource and ResourceLink)
 */
export const RESOURCE_CARRIERS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** What {@link withheldResources} reads of a request: its method, and for a read the URI asked for. */
export type CarrierRequest = Pick<RequestContext, 'method' | 'params'>;

/**
 * Whether the caller may read a resource: `uri` as the upstream wrote it in its result, `ctx`
 * the request it answered (passed through, so that a decider is made once, not per request).
 */
export type ResourceReadable<C extends CarrierRequest> = (uri: string, ctx: C) => boolean;

/**
 * The block to deliver for one content block: the block itself, or, for a `resource` or
 * `resource_link` block whose URI `readable` refuses (or that names no string URI: nothing to
 * decide on, so it fails closed), a new `text` block of {@link WITHHELD_RESOURCE_TEXT}.
 */
function blockFor<C extends CarrierRequest>(block: unknown, readable: ResourceReadable<C>, ctx: C): unknown {
  if (block === null || typeof block !== 'object') return block;
  const b = block as JsonObject;
  let uri: unknown;
  if (b.type === 'resource_link') uri = b.uri;
  else if (b.type === 'resource') {
    const r = b.resource;
    uri = r !== null && typeof r === 'object' ? (r as JsonObject).uri : undefined;
  } else return block;
  return typeof uri === 'string' && readable(uri, ctx) ? block : { type: 'text', text: WITHHELD_RESOURCE_TEXT };
}

/**
 * `result` (of `ctx.method`) with every resource it carries that the caller may not read
 * withheld, decided by `readable` on the URI as the upstream wrote it:
 * - `tools/call`: each `resource` or `resource_link` block of `content` becomes a `text` block
 *   of {@link WITHHELD_RESOURCE_TEXT} in the same place;
 * - `prompts/get`: the same for each message's `content` (a message keeps its role and place);
 * - `resources/read`: each item of `contents` whose `uri` is not the one read (`ctx.params.uri`)
 *   is decided, and a refused one is dropped (a read's contents are `ResourceContents`, which
 *   have no note form); an item without a string `uri` is dropped too.
 * `structuredContent` and `_meta` are not looked into. Returns `result` itself, having allocated
 * nothing, when it carries no refused resource (results of other methods included); never
 * mutates it. Each shape stays valid against every revision's schema.
 * @see 2025-11-25 server/tools#embedded-resources, #resource-links; server/prompts#embedded-resources;
 *   server/resources#reading-resources
 */
export function withheldResources<C extends CarrierRequest>(ctx: C, result: JsonObject, readable: ResourceReadable<C>): JsonObject {
  switch (ctx.method) {
    case 'tools/call': {
      const blocks = result.content;
      if (!Array.isArray(blocks)) return result;
      let out: unknown[] | undefined;
      for (let i = 0; i < blocks.length; i++) {
        const b = blockFor(blocks[i], readable, ctx);
        if (b !== blocks[i] && out === undefined) out = blocks.slice(0, i);
        out?.push(b);
      }
      return out === undefined ? result : { ...result, content: out };
    }
    case 'prompts/get': {
      const messages = result.messages;
      if (!Array.isArray(messages)) return result;
      let out: unknown[] | undefined;
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i] as unknown;
        let next = m;
        if (m !== null && typeof m === 'object') {
          const c = blockFor((m as JsonObject).content, readable, ctx);
          if (c !== (m as JsonObject).content) next = { ...(m as JsonObject), content: c };
        }
        if (next !== m && out === undefined) out = messages.slice(0, i);
        out?.push(next);
      }
      return out === undefined ? result : { ...result, messages: out };
    }
    case 'resources/read': {
      const contents = result.contents;
      if (!Array.isArray(contents)) return result;
      const asked = ctx.params.uri;
      let out: unknown[] | undefined;
      for (let i = 0; i < contents.length; i++) {
        const c = contents[i] as unknown;
        const uri = c !== null && typeof c === 'object' ? (c as JsonObject).uri : undefined;
        const kept = typeof uri === 'string' && (uri === asked || readable(uri, ctx));
        if (!kept && out === undefined) out = contents.slice(0, i);
        else if (kept) out?.push(c);
      }
      return out === undefined ? result : { ...result, contents: out };
    }
    default:
      return result;
  }
}
