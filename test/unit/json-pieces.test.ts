// serializeBody (src/core/json-pieces.ts): a message holding a long string is written in pieces
// whose concatenation is exactly serialize(msg); every other message is one string, as before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bodyText, LARGE_STRING_UNITS, PIECE_UNITS, serializeBody } from '../../src/core/json-pieces.js';
import { parseJsonBytes } from '../../src/core/json-bytes.js';
import { rememberPieces } from '../../src/core/long-strings.js';
import { serialize } from '../../src/core/message.js';
import { cutAt, jsonValue, trickyText } from '../helpers/arbitraries.js';

const json = { v: jsonValue(trickyText(60), { doubles: true }) };

test('pieces concatenate to exactly serialize(msg), for any JSON value and slice length', () => {
  fc.assert(
    fc.property(json.v, fc.integer({ min: 2, max: 9 }), (v, pieceUnits) => {
      const msg = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: v }], v } };
      const body = serializeBody(msg, { largeUnits: 8, pieceUnits });
      assert.equal(bodyText(body), serialize(msg));
      if (typeof body !== 'string') {
        // units: the least the pieces hold, never more than the whole text.
        assert.ok(body.units >= 8 && body.units <= serialize(msg).length, `units ${body.units}`);
      }
      if (typeof body !== 'string')
        for (const piece of body) assert.ok(piece.length <= 6 * pieceUnits + 64 || !piece.startsWith('"'), `piece of ${piece.length}`);
    }),
    { numRuns: 400 },
  );
});

test("units is the sum of the long strings' lengths: what a queue counts the message as before it is written", () => {
  const a = 'a'.repeat(LARGE_STRING_UNITS);
  const b = 'é'.repeat(LARGE_STRING_UNITS + 5);
  const body = serializeBody({
    jsonrpc: '2.0',
    id: 1,
    result: {
      content: [
        { type: 'text', text: a },
        { type: 'text', text: b },
        { type: 'text', text: 'short' },
      ],
    },
  });
  assert.notEqual(typeof body, 'string');
  assert.equal(typeof body !== 'string' && body.units, 2 * LARGE_STRING_UNITS + 5);
});

test('a message without a long string is one string; one with a long string is pieces, the long string never written whole', () => {
  const small = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: hi' }] } };
  assert.equal(serializeBody(small), serialize(small));
  const text = 'switchyard-'.repeat(Math.ceil((LARGE_STRING_UNITS + 5) / 11));
  const big = { jsonrpc: '2.0', id: 'a', result: { content: [{ type: 'text', text }], isError: false } };
  const body = serializeBody(big);
  assert.notEqual(typeof body, 'string');
  const pieces = [...(body as Iterable<string>)];
  assert.equal(pieces.join(''), serialize(big));
  assert.ok(pieces.length > text.length / PIECE_UNITS, String(pieces.length));
  assert.ok(Math.max(...pieces.map((p) => p.length)) <= PIECE_UNITS, 'no piece is longer than a slice');
  // Iterable again: each iteration starts over.
  assert.equal(bodyText(body), serialize(big));
});

test('values JSON.stringify drops or nulls, toJSON, bigint ids and a surrogate pair at a slice boundary', () => {
  const long = 'x'.repeat(9);
  const msg = {
    jsonrpc: '2.0',
    id: 2n ** 64n,
    result: { a: undefined, f: () => 1, s: Symbol('s'), arr: [undefined, () => 1, long], d: new Date(0), long, both: 'ab😀cd' },
  };
  const expect = serialize(msg);
  assert.match(expect, /"id":18446744073709551616,/);
  for (const pieceUnits of [2, 3, 4]) assert.equal(bodyText(serializeBody(msg, { largeUnits: 5, pieceUnits })), expect);
  // The pair straddles the boundary after 'ab' + high surrogate: it stays whole, not escaped.
  const pair = { s: 'ab😀cd😀' };
  const body = serializeBody(pair, { largeUnits: 5, pieceUnits: 3 });
  assert.ok(![...(body as Iterable<string>)].some((p) => p.includes('\\ud')), 'no surrogate escaped');
  assert.equal(bodyText(body), JSON.stringify(pair));
  // An object with toJSON is serialized whole, by JSON.stringify's rules.
  const custom = { toJSON: () => ({ replaced: 'y'.repeat(10) }) };
  assert.equal(serializeBody(custom, { largeUnits: 5 }), JSON.stringify(custom));
});

test('the search for a long string stops after MAX_VISITED objects: a long string deep in a wide message is serialized whole', () => {
  const wide = { items: Array.from({ length: 100 }, (_, i) => ({ i })), last: 'z'.repeat(20) };
  assert.equal(typeof serializeBody(wide, { largeUnits: 10 }), 'string');
  assert.equal(serializeBody(wide, { largeUnits: 10 }), serialize(wide));
  const near = { last: 'z'.repeat(20), items: Array.from({ length: 100 }, (_, i) => ({ i })) };
  assert.notEqual(typeof serializeBody(near, { largeUnits: 10 }), 'string');
  assert.equal(bodyText(serializeBody(near, { largeUnits: 10 })), serialize(near));
});

test('a string that looks like the old bigint marker stays a string, whole or in pieces, beside a bigint id (a new user’s trial)', () => {
  // serialize once wrote bigints as "\u0000swy-big:N" and turned every such string into N: a
  // result text equal to that became the number 7 beside an id past 2^53, but not in pieces.
  const msg = {
    jsonrpc: '2.0',
    id: 1152921504606846976n,
    result: {
      content: [
        { type: 'text', text: '\u0000swy-big:7' },
        { type: 'text', text: 'x'.repeat(12) },
      ],
    },
  };
  const whole = serialize(msg);
  assert.equal(
    whole,
    '{"jsonrpc":"2.0","id":1152921504606846976,"result":{"content":[{"type":"text","text":"\\u0000swy-big:7"},{"type":"text","text":"xxxxxxxxxxxx"}]}}',
  );
  assert.deepEqual((JSON.parse(whole) as { result: { content: Array<{ text: unknown }> } }).result.content[0].text, '\u0000swy-big:7');
  assert.equal(bodyText(serializeBody(msg, { largeUnits: 10, pieceUnits: 4 })), whole);
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), fc.string(), (id, text) => {
      const m = { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], long: 'y'.repeat(12) } };
      const out = serialize(m);
      // The id is the only bigint, and the first field after jsonrpc.
      assert.equal(out, JSON.stringify({ ...m, id: 0 }).replace('{"jsonrpc":"2.0","id":0,', `{"jsonrpc":"2.0","id":${id},`));
      assert.equal(bodyText(serializeBody(m, { largeUnits: 10, pieceUnits: 3 })), out);
    }),
    { numRuns: 200 },
  );
});

test('a long string written from remembered pieces is byte for byte JSON.stringify’s, wherever the pieces are cut (pairs split, lone surrogates, escapes, controls)', () => {
  fc.assert(
    fc.property(trickyText(80), fc.array(fc.nat(100), { maxLength: 8 }), fc.integer({ min: 2, max: 9 }), fc.boolean(), (text, cuts, pieceUnits, inArray) => {
      const item: Record<string, unknown> = { type: 'text', text };
      const list: unknown[] = [text, 'x'];
      if (inArray) rememberPieces(list, 0, text, cutAt(text, cuts));
      else rememberPieces(item, 'text', text, cutAt(text, cuts));
      const msg = { jsonrpc: '2.0', id: 1, result: { content: [item], list } };
      const body = serializeBody(msg, { largeUnits: 1, pieceUnits });
      assert.equal(bodyText(body), JSON.stringify(msg));
    }),
    { numRuns: 1000 },
  );
});

test('pieces are used only while the member still holds their string: a replaced value is written from itself', () => {
  const text = 'ab😀'.repeat(10);
  const item = { type: 'text', text };
  rememberPieces(item, 'text', text, ['wrong', 'pieces']);
  // The pieces do not make `text`, but the member holds it: they are what goes out (remembered
  // pieces are trusted), which is why only parseJsonBytes remembers them.
  assert.equal(bodyText(serializeBody({ item }, { largeUnits: 5 })), '{"item":{"type":"text","text":"wrongpieces"}}');
  item.text = `${text}!`;
  assert.equal(bodyText(serializeBody({ item }, { largeUnits: 5 })), JSON.stringify({ item }));
  // Another key of the same object, and a later remember for the same key, replace nothing else.
  const two: Record<string, string> = { a: 'a'.repeat(8), b: 'b'.repeat(8) };
  rememberPieces(two, 'a', two.a, ['aaaa', 'aaaa']);
  rememberPieces(two, 'b', two.b, ['bb', 'bbbbbb']);
  rememberPieces(two, 'a', two.a, ['a', 'aaaaaaa']);
  assert.equal(bodyText(serializeBody(two, { largeUnits: 5, pieceUnits: 3 })), JSON.stringify(two));
});

test('parsed from bytes in pieces, then written out again: exactly serialize(value), and the long string goes out by its pieces', () => {
  fc.assert(
    fc.property(trickyText(60), fc.integer({ min: 4, max: 12 }), (text, pieceBytes) => {
      const msg = { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text }] } };
      const parsed = parseJsonBytes(
        Buffer.from(JSON.stringify(msg)),
        { maxIntegerDigits: 64, maxIdBytes: 256, maxJsonDepth: 16 },
        { longBytes: 8, pieceBytes },
      ).value;
      assert.equal(bodyText(serializeBody(parsed, { largeUnits: 8, pieceUnits: 64 })), JSON.stringify(msg));
    }),
    { numRuns: 500 },
  );
  // A 5 MiB text: written as the pieces it was decoded in (32 KiB each), never sliced from one whole string.
  const text = 'switchyard-payload-0123456789-'.repeat(Math.ceil((5 * 1024 * 1024) / 30));
  const line = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } }));
  const value = parseJsonBytes([line.subarray(0, 70_000), line.subarray(70_000)], { maxIntegerDigits: 64, maxIdBytes: 256, maxJsonDepth: 16 }).value;
  const pieces = [...(serializeBody(value) as Iterable<string>)];
  assert.equal(pieces.join(''), JSON.stringify(value));
  assert.ok(Math.max(...pieces.map((p) => p.length)) <= 32 * 1024, 'no piece longer than a decoded piece');
});
