// The 2026-07-28 method vocabulary (MCP 2026-07-28 schema, §9 of the digest). The transport-neutral
// parts live in src/core/modern-meta.ts (the stdio front door uses them too); this file names
// them for the HTTP dialect and adds what only HTTP needs (the Mcp-Name mirror).

import { MODERN_CACHEABLE, MODERN_META, MODERN_METHODS } from '../../src/core/modern-meta.js';

/** Client requests a 2026-07-28 server answers. */
export const MODERN_REQUESTS: ReadonlySet<string> = MODERN_METHODS;

/** Methods whose requests must carry `Mcp-Name`, and the param it mirrors (2026-07-28 basic/transports/streamable-http §Request headers). */
export const NAME_PARAM: Readonly<Record<string, 'name' | 'uri'>> = Object.freeze({
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
});

/** Complete results that must carry `ttlMs` and `cacheScope` (2026-07-28 server/utilities/caching). */
export const CACHEABLE: ReadonlySet<string> = MODERN_CACHEABLE;

/** `_meta` keys of the protocol (2026-07-28 basic#meta). */
export const META = MODERN_META;
