// `K:V` header arguments of the command line (--header, --upstream-header).

import { validateHeaderName, validateHeaderValue } from 'node:http';

/** True when `check` (one of Node's header validators) accepts. */
function passes(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

/**
 * A header argument as an error names it: up to its first space or `=`, then `…`. The rest is
 * most often the value (`Authorization Bearer TOKEN`, `X-Api-Key=KEY`, a colon forgotten), and
 * the error lands on stderr, which a container's log collects.
 * @see RFC 6750 §5.3 (tokens in logs)
 */
function headerArgForDisplay(p: string): string {
  const cut = p.search(/[\s=]/);
  if (cut < 0) return p;
  return p[cut] === '=' ? `${p.slice(0, cut + 1)}…` : `${p.slice(0, cut)} …`;
}

/**
 * Parses `K:V` header arguments (whitespace around K and V is dropped; K is lower-cased).
 * @param flag the flag they came from, named in errors (`--header`, `--upstream-header`)
 * @throws Error on a pair without a colon, a name that is not a token, or a value with a control character
 * @see RFC 9110 §5.1 (field names), §5.5 (field values)
 */
export function parseHeaderArgs(pairs: readonly string[], flag = '--header'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf(':');
    if (i <= 0) throw new Error(`${flag} expects K:V, got ${headerArgForDisplay(p)}`);
    const name = p.slice(0, i).trim();
    const value = p.slice(i + 1).trim();
    // Node's own checks, the ones its HTTP client applies when the header is sent.
    if (!passes(() => validateHeaderName(name)))
      throw new Error(`invalid header name ${JSON.stringify(headerArgForDisplay(name))}: a name is a token (letters, digits, !#$%&'*+-.^_\`|~), no spaces`);
    if (!passes(() => validateHeaderValue(name, value)))
      throw new Error(`invalid value for header ${name}: control characters (CR, LF, NUL, …) are not allowed`);
    out[name.toLowerCase()] = value;
  }
  return out;
}
