// parseJsonBytes (src/core/json-bytes.ts): parsing from bytes, with long strings decoded on their
// own, gives exactly what parseBody(decodeUtf8(bytes)) gives: the same value, or the same error;
// from one buffer or from the chunks the bytes arrived in, cut anywhere.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LONG_STRING_BYTES, parseJsonBytes } from '../../src/core/json-bytes.js';
import { rememberedPieces } from '../../src/core/long-strings.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { decodeUtf8, parseBody, type ParseLimits } from '../../src/core/message.js';
import { cutAt, jsonValue, trickyText } from '../helpers/arbitraries.js';

const LIMITS: ParseLimits = { maxIntegerDigits: 64, maxIdBytes: 256, maxJsonDepth: 16 };

/** What a parse gave: its value and batch flag, or its error's catalogue code. */
function outcome(run: () => { value: unknown; batch: boolean }): unknown {
  try {
    return run();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError, `not a catalogue error: ${String(err)}`);
    return { code: err.code };
  }
}

/** Both parses of `bytes`, with strings of `longBytes` bytes and more taken on their own. */
function both(bytes: Buffer, longBytes: number) {
  return {
    fast: outcome(() => parseJsonBytes(bytes, LIMITS, { longBytes })),
    plain: outcome(() => parseBody(decodeUtf8(bytes), LIMITS)),
  };
}

const json = { v: jsonValue(trickyText(24)) };

test('the same value as the plain parse, for any message and threshold', () => {
  fc.assert(
    fc.property(json.v, fc.integer({ min: 1, max: 12 }), fc.boolean(), (v, longBytes, spaced) => {
      const msg = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: v }], v } };
      const bytes = Buffer.from(spaced ? JSON.stringify(msg, null, 2) : JSON.stringify(msg));
      const { fast, plain } = both(bytes, longBytes);
      assert.deepEqual(fast, plain);
    }),
    { numRuns: 500 },
  );
});

test('the same answer as the plain parse for arbitrary bytes: invalid UTF-8, raw controls, bad escapes, unterminated text', () => {
  const piece = fc.oneof(
    fc.constantFrom('{"a":"', '"', '\\', '\\"', '\\u00', '\\x', '\u0001', '\n', '":', '","b":', '}', ']', '[', '1e999', '12345678901234567890'),
    fc.string({ maxLength: 6 }),
  );
  const raw = fc.oneof(
    fc.array(piece, { maxLength: 12 }).map((p) => Buffer.from(p.join(''))),
    fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.concat([Buffer.from('{"a":"'), Buffer.from(a), Buffer.from('"}')])),
  );
  fc.assert(
    fc.property(raw, fc.integer({ min: 1, max: 6 }), (bytes, longBytes) => {
      const { fast, plain } = both(bytes, longBytes);
      assert.deepEqual(fast, plain);
    }),
    { numRuns: 1000 },
  );
});

test('a 5 MB tool result: the long string comes back whole, with its escapes, a leading BOM and a big integer id', () => {
  const text = `\ufeff${'switchyard "gateway"\\ é 😀 '.repeat(Math.ceil((5 * 1024 * 1024) / 30))}`;
  const line = `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]},"jsonrpc":"2.0","id":12345678901234567890}`;
  const got = parseJsonBytes(Buffer.from(line), LIMITS);
  const msg = got.value as { id: unknown; result: { content: Array<{ text: string }> } };
  assert.equal(msg.id, 12345678901234567890n);
  assert.equal(msg.result.content[0].text, text);
  assert.equal(got.batch, false);
  // Without escapes the string is decoded from its bytes, and keeps its leading BOM.
  const plainText = `\ufeff${'x'.repeat(LONG_STRING_BYTES)}`;
  const plain = parseJsonBytes(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"t":"${plainText}"}}`), LIMITS);
  assert.equal((plain.value as { result: { t: string } }).result.t, plainText);
});

test('long strings in a batch, as array elements and as a member name', () => {
  const long = 'y'.repeat(64);
  const batch = JSON.stringify([
    { jsonrpc: '2.0', id: 1, result: { a: [long, long] } },
    { jsonrpc: '2.0', method: 'm', params: { [long]: long } },
  ]);
  const got = parseJsonBytes(Buffer.from(batch), LIMITS, { longBytes: 32 });
  assert.deepEqual(got, { value: JSON.parse(batch), batch: true });
});

test('bounds still hold on the skeleton: depth, integer length', () => {
  const long = 'z'.repeat(64);
  const deep = `${'['.repeat(20)}"${long}"${']'.repeat(20)}`;
  assert.throws(() => parseJsonBytes(Buffer.from(deep), LIMITS, { longBytes: 32 }), { code: 'SWY_ERR_REQ_TOO_DEEP' });
  const digits = `{"a":"${long}","id":${'9'.repeat(70)}}`;
  assert.throws(() => parseJsonBytes(Buffer.from(digits), LIMITS, { longBytes: 32 }), { code: 'SWY_ERR_REQ_INT_TOO_LONG' });
});

test('from chunks cut anywhere, in pieces of any size: the same value or error as the plain parse of the bytes joined', () => {
  fc.assert(
    fc.property(
      json.v,
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 4, max: 16 }),
      fc.array(fc.nat(2000), { maxLength: 8 }),
      fc.boolean(),
      (v, longBytes, pieceBytes, cuts, flat) => {
        const msg = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: v }], v } };
        const bytes = Buffer.from(JSON.stringify(msg));
        const fast = outcome(() => parseJsonBytes(cutAt(bytes, cuts), LIMITS, { longBytes, pieceBytes, flat }));
        assert.deepEqual(
          fast,
          outcome(() => parseBody(decodeUtf8(bytes), LIMITS)),
        );
      },
    ),
    { numRuns: 500 },
  );
});

test('arbitrary bytes in chunks: invalid UTF-8, raw controls, bad or cut escapes give the plain parse’s answer', () => {
  const piece = fc.oneof(
    fc.constantFrom('{"a":"', '"', '\\', '\\"', '\\u00', '\\ud83d', '\\ude00', '\\u12x4', '\\x', '\u0001', '\n', '":', '","b":', '}', ']', '[', '😀', 'é'),
    fc.string({ maxLength: 6 }),
  );
  const raw = fc.oneof(
    fc.array(piece, { maxLength: 16 }).map((p) => Buffer.from(`{"a":"${p.join('')}"}`)),
    fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.concat([Buffer.from('{"a":"'), Buffer.from(a), Buffer.from('"}')])),
  );
  fc.assert(
    fc.property(
      raw,
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 4, max: 9 }),
      fc.array(fc.nat(60), { maxLength: 6 }),
      (bytes, longBytes, pieceBytes, cuts) => {
        const fast = outcome(() => parseJsonBytes(cutAt(bytes, cuts), LIMITS, { longBytes, pieceBytes }));
        assert.deepEqual(
          fast,
          outcome(() => parseBody(decodeUtf8(bytes), LIMITS)),
        );
      },
    ),
    { numRuns: 1000 },
  );
});

test('a long string decoded in pieces is remembered with them, beside the object that holds it', () => {
  // Escapes, a pair written as two escapes, 2-, 3- and 4-byte characters, cut at every piece size.
  const text = 'a \\"q\\" \\\\ é € 😀 \\ud83d\\ude00 \\n \\u0041'.repeat(40);
  const value = JSON.parse(`"${text}"`) as string;
  const bytes = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${text}"}],"list":["${text}"]}}`);
  for (const pieceBytes of [4, 5, 7, 16, 100]) {
    const got = parseJsonBytes(cutAt(bytes, [3, 50, 51, 400, 999]), LIMITS, { longBytes: 64, pieceBytes }).value as {
      result: { content: Array<{ text: string }>; list: string[] };
    };
    const item = got.result.content[0];
    assert.equal(item.text, value);
    const pieces = rememberedPieces(item, 'text', item.text);
    assert.ok(pieces && pieces.length > 1, `pieces of ${pieceBytes} bytes`);
    assert.equal(pieces.join(''), value);
    // A piece holds its own bytes, at most 3 of a character the previous one ended inside, and at most 5 of an escape it cut.
    for (const p of pieces) assert.ok(Buffer.byteLength(p) <= pieceBytes + 8, `a piece of ${Buffer.byteLength(p)} bytes`);
    // An array element is remembered by its index.
    assert.equal(rememberedPieces(got.result.list, 0, got.result.list[0])?.join(''), value);
    // Another string at the same place is not taken for it.
    assert.equal(rememberedPieces(item, 'text', `${value.slice(1)}x`), undefined);
    // `flat`: the same string, one flat one, no pieces remembered.
    const flat = parseJsonBytes(cutAt(bytes, [3, 50, 51, 400, 999]), LIMITS, { longBytes: 64, pieceBytes, flat: true }).value as typeof got;
    assert.equal(flat.result.content[0].text, value);
    assert.equal(rememberedPieces(flat.result.content[0], 'text', value), undefined);
  }
});
