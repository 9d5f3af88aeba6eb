// About how much a parsed JSON value takes, without serializing it: what bounded queues and
// caches count their entries as.

/**
 * About what `v` takes as JSON, bytes: string lengths (UTF-16 units) and member names, plus a
 * few bytes per value, without serializing it (the walk costs a step per value, not per byte).
 * Depth is bounded by the parse (`maxJsonDepth`).
 * @see RFC 8259 §2 (JSON text)
 */
export function approxJsonBytes(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (v === null || typeof v !== 'object') return 8;
  let n = 2;
  if (Array.isArray(v)) for (const x of v) n += approxJsonBytes(x) + 1;
  else for (const k in v) n += k.length + 4 + approxJsonBytes((v as Record<string, unknown>)[k]);
  return n;
}
