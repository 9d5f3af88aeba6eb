// The strict W3C traceparent parser and its formatter: examples from the spec and fast-check properties.
// @see W3C Trace Context §3.2 (traceparent)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatTraceparent, parseTraceparent, TRACEPARENT_LENGTH } from '../../src/telemetry/trace-context.js';
import { SwitchyardError } from '../../src/core/errors.js';

const SPEC_EXAMPLE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('the W3C example parses into its three fields and formats back unchanged', () => {
  assert.deepEqual(parseTraceparent(SPEC_EXAMPLE), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 });
  assert.equal(formatTraceparent({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 }), SPEC_EXAMPLE);
  assert.equal(TRACEPARENT_LENGTH, SPEC_EXAMPLE.length);
});

test('anything but a lower-case value with non-zero ids, exactly 55 characters at version 00, is refused', () => {
  const refused = [
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // the invalid version
    'FE-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // upper-case version
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x', // a later version: after the flags, the end or a dash
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7', // a later version, shorter than 55
    `01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${'a'.repeat(512)}`, // over MAX_TRACEPARENT_LENGTH
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what ever', // unknown fields: visible ASCII only
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // upper case
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // zero trace-id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // zero parent-id
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01', // short trace-id
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-', // trailing data
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-00',
    ' 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902g7-01', // not hex
    '',
  ];
  for (const v of refused) assert.equal(parseTraceparent(v), undefined, v);
  for (const v of [undefined, null, 42, {}, ['00']]) assert.equal(parseTraceparent(v), undefined);
});

test('a later version is read at version 00\'s places, whatever follows its flags (W3C "Versioning of traceparent")', () => {
  const fields = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
  for (const v of [
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-will-be-like',
    'fe-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-',
  ])
    assert.deepEqual(parseTraceparent(v), fields, v);
  assert.deepEqual(parseTraceparent('02-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x'), { ...fields, traceFlags: 0 });
});

test('formatting malformed fields throws SWY_ERR_INTERNAL_FAULT', () => {
  const bad = [
    { traceId: '0'.repeat(32), spanId: '00f067aa0ba902b7', traceFlags: 1 },
    { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '0'.repeat(16), traceFlags: 1 },
    { traceId: '4BF92F3577B34DA6A3CE929D0E0E4736', spanId: '00f067aa0ba902b7', traceFlags: 1 },
    { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 256 },
    { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1.5 },
  ];
  for (const tp of bad)
    assert.throws(
      () => formatTraceparent(tp),
      (e: unknown) => e instanceof SwitchyardError && e.code === 'SWY_ERR_INTERNAL_FAULT',
    );
});

const hex = (bytes: number) =>
  fc
    .uint8Array({ minLength: bytes, maxLength: bytes })
    .filter((a) => a.some((b) => b !== 0))
    .map((a) => Buffer.from(a).toString('hex'));
const fields = fc.record({ traceId: hex(16), spanId: hex(8), traceFlags: fc.integer({ min: 0, max: 255 }) });

test('property: every valid triple formats to 55 characters and parses back to itself', () => {
  fc.assert(
    fc.property(fields, (tp) => {
      const s = formatTraceparent(tp);
      assert.equal(s.length, TRACEPARENT_LENGTH);
      assert.deepEqual(parseTraceparent(s), { traceId: tp.traceId, spanId: tp.spanId, traceFlags: tp.traceFlags });
    }),
    { numRuns: 2000 },
  );
});

test('property: whatever string is parsed, an accepted one is already in canonical form', () => {
  const nearTraceparent = fields.chain((tp) =>
    fc.tuple(fc.nat({ max: TRACEPARENT_LENGTH - 1 }), fc.constantFrom('0', 'f', 'F', 'g', '-', '', 'aa')).map(([i, c]) => {
      const s = formatTraceparent(tp);
      return s.slice(0, i) + c + s.slice(i + 1);
    }),
  );
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 70 }), nearTraceparent), (s) => {
      const tp = parseTraceparent(s);
      // Version 00 is canonical; a later version keeps its own version and its tail.
      if (tp !== undefined && s.startsWith('00')) assert.equal(formatTraceparent(tp), s);
      else if (tp !== undefined) assert.equal(`${s.slice(0, 3)}${formatTraceparent(tp).slice(3)}`, s.slice(0, TRACEPARENT_LENGTH));
    }),
    { numRuns: 5000 },
  );
});

test('property: upper-casing a value with a hex letter in its ids makes it invalid', () => {
  fc.assert(
    fc.property(
      fields.filter((tp) => /[a-f]/.test(tp.traceId + tp.spanId)),
      (tp) => {
        assert.equal(parseTraceparent(formatTraceparent(tp).toUpperCase()), undefined);
      },
    ),
    { numRuns: 1000 },
  );
});
