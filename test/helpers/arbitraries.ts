// fast-check arbitraries shared by the property tests of JSON handling.

import fc from 'fast-check';

/** Characters JSON escapes or keeps specially: quotes, backslashes, controls, a BOM, line separators, pairs and lone surrogates. */
const TRICKY_UNITS = ['"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\ufeff', 'é', '\u2028', '😀', '\ud800', '\udbff', '\udc00', '\udfff', ':'];

/** Text made of the tricky characters and any others, up to `maxLength` units. */
export function trickyText(maxLength: number): fc.Arbitrary<string> {
  return fc.string({ unit: fc.oneof(fc.constantFrom(...TRICKY_UNITS), fc.string({ minLength: 1, maxLength: 1 })), maxLength });
}

/** Any JSON value (small), its strings and member names tricky; fractions too when `doubles`. */
export function jsonValue(text: fc.Arbitrary<string>, { doubles = false } = {}): fc.Arbitrary<unknown> {
  return fc.letrec<{ v: unknown }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      ...(doubles ? [fc.double({ noNaN: true, noDefaultInfinity: true })] : []),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(text, tie('v'), { maxKeys: 4 }),
    ),
  })).v;
}

/**
 * `x` (a string or bytes) cut at `cuts` into consecutive parts: each cut taken modulo
 * `x.length + 1`, in any order, repeats and both ends allowed (so parts may be empty, and a string
 * may be cut between the two halves of a surrogate pair). The parts joined are `x`.
 */
export function cutAt<T extends string | Uint8Array>(x: T, cuts: number[]): T[] {
  const at = [...new Set(cuts.map((c) => c % (x.length + 1)))].sort((a, b) => a - b);
  const part = (from: number, to?: number): T => (typeof x === 'string' ? x.slice(from, to) : x.subarray(from, to)) as T;
  const out: T[] = [];
  let from = 0;
  for (const c of at) {
    out.push(part(from, c));
    from = c;
  }
  out.push(part(from));
  return out;
}
