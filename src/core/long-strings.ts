// Long strings kept as the pieces they were decoded in: a string value parsed from bytes in
// pieces (`parseJsonBytes`) is a cons of those pieces, and the pieces are remembered beside the
// object that holds it, so that writing it out again (`serializeBody`) goes piece by piece and
// never makes V8 flatten it into one more whole copy. Why: V8 flattens a cons string on the first
// read of its characters (`slice`, `charCodeAt`, a regular expression, `Buffer.write`), and for a
// 5 MB tool result that copy is a fresh large-object page (docs/architecture.md, "Large messages").

/** One remembered long string: the key it is held at, the string, and its pieces in order. */
interface Held {
  readonly key: string | number;
  readonly value: string;
  readonly pieces: readonly string[];
}

/** By holding object (or array): its remembered long strings, usually one. */
const held = new WeakMap<object, Held | Held[]>();

/**
 * Remembers that `holder[key]` is `value`, made of `pieces` (concatenated, exactly `value`). The
 * entry lives as long as `holder` does; a later call for the same holder and key replaces it.
 * @param holder the object or array holding the string.
 * @param key its member name, or its index in an array.
 * @param pieces the string's pieces, in order; each should be a flat string.
 */
export function rememberPieces(holder: object, key: string | number, value: string, pieces: readonly string[]): void {
  const entry: Held = { key, value, pieces };
  const had = held.get(holder);
  if (had === undefined) held.set(holder, entry);
  else if (Array.isArray(had)) held.set(holder, [...had.filter((h) => h.key !== key), entry]);
  else held.set(holder, had.key === key ? entry : [had, entry]);
}

/**
 * The pieces of `holder[key]`, when that member still holds the string they were remembered for
 * (`value`, compared with `===`: the same string object answers at once, without reading its
 * characters); undefined otherwise.
 */
export function rememberedPieces(holder: object, key: string | number, value: string): readonly string[] | undefined {
  const had = held.get(holder);
  if (had === undefined) return undefined;
  const entry = Array.isArray(had) ? had.find((h) => h.key === key) : had.key === key ? had : undefined;
  return entry !== undefined && entry.value.length === value.length && entry.value === value ? entry.pieces : undefined;
}
