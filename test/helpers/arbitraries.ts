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
