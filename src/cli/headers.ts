// `K:V` header arguments of the command line (--header, --upstream-header).

/** RFC 9110 §5.1: a field name is a token. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 9110 §5.5: a field value holds no control character but HTAB (CR, LF and NUL included). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Parses `K:V` header arguments (whitespace around K and V is dropped; K is lower-cased).
 * @throws Error on a pair without a colon, a name that is not a token, or a value with a control character
 * @see RFC 9110 §5.1 (field names), §5.5 (field values)
 */
export function parseHeaderArgs(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf(':');
    if (i <= 0) throw new Error(`--header expects K:V, got ${p}`);
    const name = p.slice(0, i).trim();
    const value = p.slice(i + 1).trim();
    if (!FIELD_NAME.test(name))
      throw new Error(`invalid header name ${JSON.stringify(name)}: a name is a token (letters, digits, !#$%&'*+-.^_\`|~), no spaces`);
    if (!FIELD_VALUE.test(value)) throw new Error(`invalid value for header ${name}: control characters (CR, LF, NUL, …) are not allowed`);
    out[name.toLowerCase()] = value;
  }
  return out;
}
