// `K:V` header arguments of the command line (--header, --upstream-header).

/** Parses `K:V` header arguments. @throws Error on a malformed pair */
export function parseHeaderArgs(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf(':');
    if (i <= 0) throw new Error(`--header expects K:V, got ${p}`);
    out[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim();
  }
  return out;
}
