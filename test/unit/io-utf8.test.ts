// The streaming UTF-8 decoder: every split of 2-, 3- and 4-byte characters comes back intact.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { createUtf8Stream } from '../../src/io/utf8.js';

const TEXT = 'Grüße Ωμέγα 日本語 🚀';

function decodeIn(bytes: Buffer, cuts: number[], fatal = false): string {
  const s = createUtf8Stream({ fatal });
  let out = '';
  let at = 0;
  for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
    out += s.write(bytes.subarray(at, c));
    at = c;
  }
  return out + s.write(bytes.subarray(at)) + s.end();
}

test('the sample splits at every byte offset, and at every pair of offsets, into the same text', () => {
  const bytes = Buffer.from(TEXT);
  assert.equal(bytes.length, 33); // 2-byte ü ß, 2-byte Greek, 3-byte kanji, a 4-byte emoji
  for (let i = 0; i <= bytes.length; i++) {
    assert.equal(decodeIn(bytes, [i]), TEXT, `cut at ${i}`);
    assert.equal(decodeIn(bytes, [i], true), TEXT, `cut at ${i}, fatal`);
    for (let j = i; j <= bytes.length; j++) assert.equal(decodeIn(bytes, [i, j]), TEXT, `cuts at ${i}, ${j}`);
  }
  // One byte at a time.
  assert.equal(decodeIn(bytes, [...bytes.keys()]), TEXT);
});

test('property: messages of 1- to 4-byte characters survive any chunking', () => {
  const char = fc.constantFrom('a', '{', '"', 'ü', 'ß', 'Ω', 'μ', 'έ', '日', '本', '語', '🚀', '😀', '\u0800', '\uffff', '\u{10ffff}');
  fc.assert(
    fc.property(fc.array(char, { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 20 }), (chars, rawCuts) => {
      const text = JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { s: chars.join('') } });
      const bytes = Buffer.from(text);
      const cuts = rawCuts.map((c) => c % (bytes.length + 1));
      assert.equal(decodeIn(bytes, cuts), text);
      assert.equal(decodeIn(bytes, cuts, true), text);
    }),
    { numRuns: 2_000 },
  );
});

test('a leading BOM is dropped once; a later U+FEFF is kept', () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  const bytes = Buffer.concat([bom, Buffer.from('a'), bom, Buffer.from('b')]);
  for (let i = 0; i <= bytes.length; i++) assert.equal(decodeIn(bytes, [i]), 'a\ufeffb', `cut at ${i}`);
});

test('invalid UTF-8: replaced by U+FFFD by default, SWY_ERR_REQ_PARSE when fatal; a cut-off character at the end likewise', () => {
  const bad = Buffer.from([0x61, 0xff, 0x62, 0xc3]);
  assert.equal(decodeIn(bad, [2]), 'a\ufffdb\ufffd');
  const s = createUtf8Stream({ fatal: true });
  assert.equal(s.write(Buffer.from([0x61])), 'a');
  assert.throws(
    () => s.write(Buffer.from([0xff])),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_PARSE' && err.message === 'Parse error: invalid JSON: invalid UTF-8',
  );
  // After a throw the stream starts clean.
  assert.equal(s.write(Buffer.from('ü')), 'ü');
  assert.equal(s.write(Buffer.from([0xe6, 0x97])), '');
  assert.throws(
    () => s.end(),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_REQ_PARSE',
  );
  assert.equal(s.write(Buffer.from('ok')), 'ok');
  assert.equal(s.end(), '');
});
