// Routes a neutral request to the upstream, after checking the method exists and is enabled.

import { SwitchyardError } from './errors.js';
import type { JsonObject } from './message.js';
import type { RequestContext, SubscriptionFilter, CoreNotification } from './request.js';
import type { ServerDescription, Subscription, Upstream } from './upstream.js';

/**
 * Methods the core routes, with the server capability each needs (null: always available).
 * @see MCP 2026-07-28 schema (ClientRequest); a method gated on a capability the server did not
 * advertise answers -32601 (stateless-2026-07-28 §4).
 */
export const ROUTED_METHODS: Readonly<Record<string, string | null>> = Object.freeze({
  'server/discover': null,
  'tools/list': 'tools',
  'tools/call': 'tools',
  'resources/list': 'resources',
  'resources/read': 'resources',
  'resources/templates/list': 'resources',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'completion/complete': 'completions',
});

/** Methods whose result may be `input_required` (2026-07-28 basic/patterns/mrtr). */
export const INPUT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * Builds the `server/discover` result body (2026-07-28 server/discover), without the caching
 * fields the dialect adds.
 */
export function discoverResult(desc: ServerDescription, supportedVersions: readonly string[]): JsonObject {
  const out: JsonObject = {
    supportedVersions: [...supportedVersions],
    capabilities: desc.capabilities,
    _meta: { 'io.modelcontextprotocol/serverInfo': desc.serverInfo },
  };
  if (desc.instructions !== undefined) out.instructions = desc.instructions;
  return out;
}

/** Routes requests and subscriptions to one upstream. */
export class Router {
  readonly upstream: Upstream;
  private readonly supportedVersions: readonly string[];

  /** @param supportedVersions revisions the gateway serves (for `server/discover`). */
  constructor(upstream: Upstream, supportedVersions: readonly string[]) {
    this.upstream = upstream;
    this.supportedVersions = supportedVersions;
  }

  /** True when the core routes `method` at all (before capability checks). */
  knows(method: string): boolean {
    return Object.hasOwn(ROUTED_METHODS, method);
  }

  /**
   * Dispatches one request.
   * @throws SwitchyardError SWY_ERR_REQ_METHOD_NOT_FOUND; whatever the upstream rejects with
   */
  async dispatch(ctx: RequestContext): Promise<JsonObject> {
    const desc = this.upstream.describe();
    if (!this.knows(ctx.method)) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: ctx.method });
    const cap = ROUTED_METHODS[ctx.method];
    if (ctx.method === 'server/discover') return discoverResult(desc, this.supportedVersions);
    // completion/complete predates its capability flag (2024-11-05 has none), so do not gate it there.
    if (cap && desc.capabilities[cap] === undefined && !(cap === 'completions' && desc.upstreamRevision === '2024-11-05')) {
      throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: `${ctx.method} (server has no ${cap} capability)` });
    }
    return this.upstream.request(ctx);
  }

  private toolHeaders: { at: number; map: Map<string, ParamHeader[] | null> } | undefined;

  /**
   * The `x-mcp-header` annotations of tool `name`, from a tools/list cached for
   * `toolsCacheMs` (refetched when `refresh` is set, e.g. after -32020).
   * @param base a context to issue tools/list with (the caller's version, caps and signal).
   * @returns [] for an unknown tool or one without annotations; null when its annotations are invalid.
   */
  async toolParamHeaders(name: string, base: RequestContext, refresh = false, toolsCacheMs = 60_000): Promise<ParamHeader[] | null> {
    const now = Date.now();
    if (refresh || !this.toolHeaders || now - this.toolHeaders.at > toolsCacheMs) {
      const map = new Map<string, ParamHeader[] | null>();
      let cursor: string | undefined;
      // Bounded pagination: at most 50 pages.
      for (let page = 0; page < 50; page++) {
        const params: JsonObject = cursor ? { cursor } : {};
        const res = await this.upstream.request({ ...base, method: 'tools/list', params, progressToken: undefined });
        for (const t of (res.tools as Array<{ name: string; inputSchema?: unknown }>) ?? []) map.set(t.name, paramHeadersOf(t.inputSchema));
        cursor = typeof res.nextCursor === 'string' ? res.nextCursor : undefined;
        if (!cursor) break;
      }
      this.toolHeaders = { at: now, map };
    }
    return this.toolHeaders.map.get(name) ?? [];
  }

  /** Forgets cached tool annotations (on notifications/tools/list_changed). */
  invalidateTools(): void {
    this.toolHeaders = undefined;
  }

  /** Opens a subscription on the upstream. */
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription {
    return this.upstream.subscribe(filter, sink);
  }
}

/** One `x-mcp-header` annotation of a tool: header suffix, property name and JSON type. */
export interface ParamHeader {
  /** Header suffix as annotated (`Mcp-Param-{header}`), compared case-insensitively. */
  header: string;
  /** The top-level argument property it mirrors. */
  property: string;
  /** `string`, `integer` or `boolean`. */
  type: string;
}

/**
 * Reads the valid `x-mcp-header` annotations of one tool's `inputSchema`: top-level
 * `properties` only, primitive types only, RFC 9110 token names, unique case-insensitively.
 * @see 2026-07-28 server/tools#x-mcp-header
 * @returns the annotations, or null when any annotation is invalid (the tool must be dropped).
 */
export function paramHeadersOf(inputSchema: unknown): ParamHeader[] | null {
  const props = (inputSchema as { properties?: Record<string, { type?: unknown; 'x-mcp-header'?: unknown }> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return [];
  const out: ParamHeader[] = [];
  const seen = new Set<string>();
  for (const [property, schema] of Object.entries(props)) {
    if (!schema || typeof schema !== 'object' || !('x-mcp-header' in schema)) continue;
    const header = schema['x-mcp-header'];
    if (typeof header !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(header)) return null;
    const type = schema.type;
    if (type !== 'string' && type !== 'integer' && type !== 'boolean') return null;
    const key = header.toLowerCase();
    if (seen.has(key)) return null;
    seen.add(key);
    out.push({ header, property, type });
  }
  return out;
}
