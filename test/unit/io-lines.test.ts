// Property tests (fast-check) for the line splitter in src/io/lines.ts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineSplitter, type LineEvent } from '../../src/io/lines.js';

/** Splits `whole` at `cuts` (offsets) and feeds the pieces, then ends the stream. */
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

/** What the splitter must yield: each line within the bound, `too-long` for each one over it. */
function expected(max: number, lines: Buffer[], trailingNewline: boolean): Array<string | null> {
  return lines
    .map((l, i) => ({ l, last: i === lines.length - 1 }))
    .filter(({ l, last }) => !(last && !trailingNewline && l.length === 0))
    .map(({ l }) => (l.length > max ? null : l.toString('latin1')));
}

const lineBytes = fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a.map((b) => (b === 10 ? 32 : b))));

test('LineSplitter yields the same events whatever the chunking, and bounds every line', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 30 }),
      fc.array(lineBytes, { minLength: 1, maxLength: 12 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 20 }),
      (max, lines, trailingNewline, rawCuts) => {
        const whole = Buffer.concat(lines.flatMap((l, i) => (i < lines.length - 1 || trailingNewline ? [l, Buffer.from('\n')] : [l])));
        const cuts = rawCuts.map((c) => (whole.length === 0 ? 0 : c % (whole.length + 1)));
        const got = feed(max, whole, cuts).map((e) => (e.kind === 'line' ? e.bytes.toString('latin1') : null));
        assert.deepEqual(got, expected(max, lines, trailingNewline));
      },
    ),
    { numRuns: 1000 },
  );
});

test('LineSplitter: a line of exactly maxLineBytes passes, one more byte is refused once, before its end arrives', () => {
  const s = new LineSplitter(4);
  assert.deepEqual(s.push(Buffer.from('abcd\n')), [{ kind: 'line', bytes: Buffer.from('abcd') }]);
  assert.deepEqual(s.push(Buffer.from('abcde')), [{ kind: 'too-long' }]);
  assert.deepEqual(s.push(Buffer.from('fghij')), []);
  assert.deepEqual(s.push(Buffer.from('k\nxy\n')), [{ kind: 'line', bytes: Buffer.from('xy') }]);
  assert.deepEqual(s.end(), []);
});

test('LineSplitter keeps a \\r before \\n as part of the line, and yields a last line without \\n at end()', () => {
  const s = new LineSplitter(10);
  assert.deepEqual(s.push(Buffer.from('a\r\nb')), [{ kind: 'line', bytes: Buffer.from('a\r') }]);
  assert.deepEqual(s.end(), [{ kind: 'line', bytes: Buffer.from('b') }]);
  assert.deepEqual(s.end(), []);
});
