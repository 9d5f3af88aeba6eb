// The 2026-07-28 method vocabulary (MCP 2026-07-28 schema, §9 of the digest).

/** Client requests a 2026-07-28 server answers. */
export const MODERN_REQUESTS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
]);

/** Methods whose requests must carry `Mcp-Name`, and the param it mirrors (2026-07-28 basic/transports/streamable-http §Request headers). */
export const NAME_PARAM: Readonly<Record<string, 'name' | 'uri'>> = Object.freeze({
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
});

/** Complete results that must carry `ttlMs` and `cacheScope` (2026-07-28 server/utilities/caching). */
export const CACHEABLE: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** `_meta` keys of the protocol (2026-07-28 basic#meta). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;
