// JSON Pointers (RFC 6901) for the paths config errors name: one escaping for the config loader and the auth fragments' validators.

/**
 * A JSON Pointer to `segments` (object keys and array indexes, outermost first): `/` before each,
 * `~` written `~0` and `/` written `~1` in each (in that order, so that `~1` in a key stays two
 * characters). `[]` gives `''`, the whole document. `['auth', 'bearer', 'a/b~c']` gives
 * `/auth/bearer/a~1b~0c`.
 * @see RFC 6901 §3 (syntax, escaping), §4 (evaluation)
 */
export function jsonPointer(segments: readonly (string | number)[]): string {
  let out = '';
  // RFC 6901 §3: '~' → '~0' first, then '/' → '~1'.
  for (const s of segments) out += '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1');
  return out;
}
