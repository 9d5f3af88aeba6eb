// Properties of the shared line splitter (src/io/lines.ts): lines survive any chunking byte for
// byte, so UTF-8 decoded per line never sees half a character; every line is bounded in bytes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineSplitter, type LineEvent } from '../../src/io/lines.js';

/** Feeds `whole` cut at `cuts`, then ends the stream. */
function feed(max: number, whole: Buffer, cuts: number[]): LineEvent[] {
  const s = new LineSplitter(max);
  const out: LineEvent[] = [];
  let at = 0;
  for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
    out.push(...s.push(whole.subarray(at, c)));
    at = c;
  }
  out.push(...s.push(whole.subarray(at)));
  out.push(...s.end());
  return out;
}

test('lines of any Unicode text decode to the same strings whatever the chunking (bounds in bytes)', () => {
  const line = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/\n/g, ' '));
  fc.assert(
    fc.property(fc.array(line, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(400)), fc.integer({ min: 1, max: 40 }), (lines, cuts, max) => {
      const whole = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
      const got = feed(
        max,
        whole,
        cuts.map((c) => c % (whole.length + 1)),
      ).map((e) => (e.kind === 'line' ? e.bytes.toString('utf8') : null));
      const want = lines.map((l) => (Buffer.byteLength(l, 'utf8') > max ? null : l));
      assert.deepEqual(got, want);
    }),
  );
});

test('a line of exactly maxLineBytes bytes of multi-byte text passes; one byte more is refused', () => {
  const text = 'Grüße Ωμέγα 日本語 🚀';
  const bytes = Buffer.byteLength(text, 'utf8');
  assert.deepEqual(
    feed(bytes, Buffer.from(`${text}\n`), []).map((e) => (e.kind === 'line' ? e.bytes.toString('utf8') : e.kind)),
    [text],
  );
  assert.deepEqual(
    feed(bytes - 1, Buffer.from(`${text}\n`), []).map((e) => e.kind),
    ['too-long'],
  );
});

test('with partsFrom, a long line that arrived in several chunks comes as its parts, which join to the same bytes; every other event is unchanged', () => {
  const line = fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/\n/g, ' '));
  fc.assert(
    fc.property(
      fc.array(line, { minLength: 1, maxLength: 6 }),
      fc.array(fc.nat(400)),
      fc.integer({ min: 1, max: 200 }),
      fc.integer({ min: 0, max: 20 }),
      (lines, cuts, max, partsFrom) => {
        const whole = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
        const at = cuts.map((c) => c % (whole.length + 1));
        const plain = feed(max, whole, at);
        const s = new LineSplitter(max, { partsFrom });
        const got: LineEvent[] = [];
        let from = 0;
        for (const c of [...new Set(at)].sort((a, b) => a - b)) {
          got.push(...s.push(whole.subarray(from, c)));
          from = c;
        }
        got.push(...s.push(whole.subarray(from)), ...s.end());
        assert.equal(got.length, plain.length);
        got.forEach((ev, i) => {
          const want = plain[i];
          if (ev.kind === 'long-line') {
            assert.ok(ev.parts.length > 1 && ev.length >= partsFrom);
            assert.equal(ev.length, Buffer.concat(ev.parts).length);
            assert.deepEqual({ kind: 'line', bytes: Buffer.concat(ev.parts) }, want);
          } else assert.deepEqual(ev, want);
        });
      },
    ),
  );
});
