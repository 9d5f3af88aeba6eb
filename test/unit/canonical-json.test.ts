// canonicalJson (src/core/canonical-json.ts): two values equal by content give the same text,
// whatever order their keys were set in; it parses back to the value JSON.stringify gives. The
// reload compared configs as JSON.stringify text, so a reordered `limits` restarted an unchanged
// upstream (test/regressions/reload-limits-key-order.test.ts), and a reordered policy rule told
// subscribers their lists changed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson } from '../../src/core/canonical-json.js';
import { jsonValue, trickyText } from '../helpers/arbitraries.js';

/** `v` with every object's keys in reverse order (the same content, another insertion order). */
function reordered(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(reordered);
  return Object.fromEntries(
    Object.entries(v)
      .reverse()
      .map(([k, x]) => [k, reordered(x)]),
  );
}

test('canonicalJson: the same text for the same content in any key order, and the same value as JSON.stringify', () => {
  fc.assert(
    fc.property(jsonValue(trickyText(20), { doubles: true }), (v) => {
      const text = canonicalJson(v);
      assert.equal(canonicalJson(reordered(v)), text);
      assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(v)));
    }),
  );
});

test('canonicalJson: sorted keys, undefined members left out as JSON.stringify leaves them', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [3, { y: 1, x: 2 }], c: undefined } }), '{"a":{"d":[3,{"x":2,"y":1}]},"b":1}');
  assert.equal(canonicalJson({ a: undefined }), canonicalJson({}));
  assert.equal(canonicalJson([undefined]), '[null]');
  assert.equal(canonicalJson(undefined), 'null');
});
