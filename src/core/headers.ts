// Mirrored MCP header values (`Mcp-Name`, `Mcp-Param-*`): the encoding both directions share.

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Raw characters a mirrored header value may not carry (they must be Base64-encoded). */
// eslint-disable-next-line no-control-regex
export const HEADER_VALUE_RAW_INVALID = /[\x00-\x1f\x7f-\uffff]/;

/**
 * Decodes one `Mcp-Name` / `Mcp-Param-*` value: optional whitespace stripped, then
 * `=?base64?…?=` decoded as UTF-8; a value missing either marker is literal.
 * @see 2026-07-28 basic/transports/streamable-http (value encoding)
 * @returns the decoded value, or null when the value is invalid: bad Base64 (padding,
 *   alphabet), or raw control or non-ASCII characters.
 */
export function decodeHeaderValue(raw: string): string | null {
  const v = raw.trim();
  // Control characters and non-ASCII must travel Base64-encoded; raw ones are invalid.
  if (HEADER_VALUE_RAW_INVALID.test(v)) return null;
  if (v.length >= 12 && v.startsWith('=?base64?') && v.endsWith('?=')) {
    const b = v.slice(9, -2);
    if (b.length % 4 !== 0 || !B64.test(b)) return null;
    return Buffer.from(b, 'base64').toString('utf8');
  }
  return v;
}

/**
 * Encodes a value for `Mcp-Name` / `Mcp-Param-*`: as-is when plain visible ASCII without
 * surrounding whitespace, else `=?base64?<Base64(UTF-8)>?=`.
 * @see 2026-07-28 basic/transports/streamable-http (value encoding)
 */
export function encodeHeaderValue(value: string | number | boolean): string {
  const s = String(value);
  if (/^[\x20-\x7e]*$/.test(s) && s.trim() === s && !(s.startsWith('=?base64?') && s.endsWith('?='))) return s;
  return `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}
