// Transitional: the x-mcp-header reader for the HTTP upstream connector until the 2026-07-28 era
// client (dialects/2026-07-28/client.ts) replaces it; the client-facing copy is dialects/2026-07-28/codec.ts.

export { INPUT_METHODS } from './gate.js';

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
