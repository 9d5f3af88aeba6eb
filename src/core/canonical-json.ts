// JSON text that compares two values by content: every object's keys in sorted order.

/**
 * JSON text of `v` with every object's keys in sorted order (arrays keep theirs), so that two
 * values equal by content give the same text whatever order their keys were set in: a config
 * merged from a file and its defaults, a client's capabilities. As `JSON.stringify`, an object's
 * keys whose values are `undefined` (or functions) are left out, and `undefined` alone is `null`.
 * Recursion follows `v`'s depth: callers give parsed JSON (depth-bounded) or a validated config.
 * @see RFC 8785 (JSON Canonicalization Scheme): the same key order idea, without its number rules
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined || typeof x === 'function' ? 'null' : canonicalJson(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined && typeof o[k] !== 'function')
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}
