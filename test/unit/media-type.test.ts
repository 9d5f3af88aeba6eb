// Strict Content-Type parsing and Accept matching: known answers and fast-check properties.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { accepts, isJsonContentType, MAX_REMEMBERED_ACCEPTS, parseMediaType } from '../../src/transports/media-type.js';

const require = createRequire(import.meta.url);
/** negotiator (jshttp), as the reference for Accept on inputs where both should agree. */
const Negotiator = require('negotiator') as new (req: { headers: Record<string, string> }) => { mediaTypes(available: string[]): string[] };

const mt = (type: string, subtype: string, params: Record<string, string> = {}) => ({
  type,
  subtype,
  essence: `${type}/${subtype}`,
  parameters: new Map(Object.entries(params)),
});

test('parseMediaType: known answers', () => {
  const cases: Array<[string | undefined, ReturnType<typeof mt> | null]> = [
    ['application/json', mt('application', 'json')],
    ['Application/JSON', mt('application', 'json')],
    [' application/json\t', mt('application', 'json')],
    ['application/json;charset=utf-8', mt('application', 'json', { charset: 'utf-8' })],
    ['application/json ; Charset="UTF-8"', mt('application', 'json', { charset: 'UTF-8' })],
    ['application/json;\tcharset=utf-8 ;  foo=bar', mt('application', 'json', { charset: 'utf-8', foo: 'bar' })],
    ['text/plain; x="a \\"q\\" \\\\ b"', mt('text', 'plain', { x: 'a "q" \\ b' })],
    ['text/plain; x=""', mt('text', 'plain', { x: '' })],
    ['text/plain; x="a,b;c=d"', mt('text', 'plain', { x: 'a,b;c=d' })],
    // RFC 9110 §5.6.6 allows empty parameters.
    ['application/json;', mt('application', 'json')],
    ['application/json; ;charset=utf-8;', mt('application', 'json', { charset: 'utf-8' })],
    ["a!#$%&'*+-.^_`|~0/b9", mt("a!#$%&'*+-.^_`|~0", 'b9')],
    // Malformed.
    [undefined, null],
    ['', null],
    [' ', null],
    [';', null],
    ['/', null],
    ['a b', null],
    ['application', null],
    ['application/', null],
    ['/json', null],
    ['application/json/x', null],
    ['application /json', null],
    ['application/ json', null],
    [',application/json', null],
    ['application/json,', null],
    ['application/json, text/plain', null],
    ['application/json;charset', null],
    ['application/json;charset=', null],
    ['application/json;charset =utf-8', null],
    ['application/json;charset= utf-8', null],
    ['application/json;=utf-8', null],
    ['application/json;charset=utf 8', null],
    ['application/json;charset="utf-8', null],
    ['application/json;charset="utf-8"x', null],
    ['application/json;charset=utf-8;charset=latin1', null],
    ['application/json;CHARSET=utf-8;charset=utf-8', null],
    ['application/json;x="\u0001"', null],
    ['application/json;x="\u0100"', null],
    ['appl\u00e9cation/json', null],
    ['application/json\u0000', null],
    ['application/json' + ' '.repeat(2000), null],
  ];
  for (const [input, want] of cases) assert.deepEqual(parseMediaType(input), want, JSON.stringify(input));
});

test('isJsonContentType: application/json with no charset or utf-8, any case, quoted or not', () => {
  for (const ok of [
    'application/json',
    'APPLICATION/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/json; foo=bar',
    'application/json;',
  ])
    assert.equal(isJsonContentType(ok), true, ok);
  for (const bad of [
    undefined,
    '',
    ';',
    'a b',
    '/',
    ',application/json',
    'text/json',
    'application/json-seq',
    'application/vnd.api+json',
    'application/json; charset=latin1',
    'application/json; charset=utf8',
    'application/json; charset=utf-8; charset=utf-8',
    'application/json, text/plain',
  ])
    assert.equal(isJsonContentType(bad), false, String(bad));
});

test('accepts: absent, empty, wildcards, q=0, specificity, malformed members', () => {
  const J = 'application/json';
  const S = 'text/event-stream';
  const cases: Array<[string | undefined, string, boolean]> = [
    [undefined, J, true],
    ['', J, false],
    ['application/json, text/event-stream', J, true],
    ['application/json, text/event-stream', S, true],
    ['application/json', S, false],
    ['*/*', S, true],
    ['text/*', S, true],
    ['text/*', J, false],
    ['APPLICATION/JSON', J, true],
    ['application/json;q=0', J, false],
    ['application/json;q=0.000', J, false],
    ['application/json;q=0.001', J, true],
    ['application/json; q=1.000', J, true],
    ['application/json;Q=0', J, false],
    ['*/*;q=0', J, false],
    ['*/*;q=0, application/json', J, true],
    ['application/json;q=0, */*', J, false],
    ['application/*;q=0, */*', J, false],
    ['application/*;q=0, application/json;q=0.5', J, true],
    ['text/*;q=0, */*', J, true],
    ['application/json;q=0, application/json;q=0.1', J, true],
    ['application/json;charset=utf-8', J, true],
    ['application/json;q=0.5;ext=1', J, true],
    // Malformed members are skipped; the others still count.
    ['application/json;q=2', J, false],
    ['application/json;q=abc, text/event-stream', J, false],
    ['application/json;q=0.0001', J, false],
    ['*/json', J, false],
    ['garbage', J, false],
    ['garbage, application/json', J, true],
    [', ,application/json,', J, true],
    ['application/json x, text/event-stream', J, false],
    ['text/plain;x="a,application/json", text/event-stream', J, false],
    ['text/plain;x="a,b, application/json', J, false],
    [`${'a/b, '.repeat(64)}application/json`, J, false],
    [`${'a/b, '.repeat(63)}application/json`, J, true],
  ];
  // Twice, and the second time after the remembered matches were emptied: a remembered answer is the computed one.
  for (let round = 0; round < 2; round++) {
    for (const [accept, type, want] of cases) assert.equal(accepts(accept, type), want, `${accept} ${type}`);
    for (let i = 0; i <= MAX_REMEMBERED_ACCEPTS; i++) assert.equal(accepts(`text/x-${i}`, J), false);
  }
});

const tchar = fc.constantFrom(...("!#$%&'*+-.^_`|~" + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789').split(''));
const token = fc.array(tchar, { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
const ows = fc.constantFrom('', ' ', '\t', '  ', ' \t');
const qdChar = fc.constantFrom(...'abc ,;=/\t!#[]~\u00e9'.split(''), '\\"', '\\\\', '\\a');

/** A valid media type, and the parameters it holds. */
const validMediaType = fc
  .tuple(
    token,
    token,
    fc.uniqueArray(
      fc.tuple(
        token,
        fc.oneof(
          token.map((v) => ({ text: v, value: v })),
          fc.array(qdChar, { maxLength: 6 }).map((a) => ({ text: `"${a.join('')}"`, value: a.map((c) => (c.startsWith('\\') ? c.slice(1) : c)).join('') })),
        ),
      ),
      { selector: ([name]) => name.toLowerCase(), maxLength: 4 },
    ),
    ows,
    ows,
    fc.boolean(),
  )
  .map(([type, subtype, params, o1, o2, emptyParam]) => {
    let text = `${o1}${type}/${subtype}`;
    for (const [name, v] of params) text += `${o2};${o1}${name}=${v.text}`;
    if (emptyParam) text += `${o1};${o2}`;
    return { text: text + o2, type: type.toLowerCase(), subtype: subtype.toLowerCase(), params: new Map(params.map(([n, v]) => [n.toLowerCase(), v.value])) };
  });

test('property: generated valid media types parse to their parts', () => {
  fc.assert(
    fc.property(validMediaType, ({ text, type, subtype, params }) => {
      assert.deepEqual(parseMediaType(text), { type, subtype, essence: `${type}/${subtype}`, parameters: params });
    }),
    { numRuns: 3_000 },
  );
});

test('property: a valid media type with one defect is refused', () => {
  const defect = fc.constantFrom(
    (s: string) => s.replace('/', ''),
    (s: string) => s.replace('/', '//'),
    (s: string) => s.replace('/', ' /'),
    (s: string) => s.replace('/', '/ '),
    (s: string) => `,${s}`,
    (s: string) => `${s},`,
    (s: string) => `${s};=x`,
    (s: string) => `${s};x`,
    (s: string) => `${s};x=`,
    (s: string) => `${s};x="`,
    (s: string) => `${s} x`,
    (s: string) => `@${s}`,
    (s: string) => `${s}\u0000`,
  );
  fc.assert(
    fc.property(validMediaType, defect, ({ text }, broken) => {
      assert.equal(parseMediaType(broken(text)), null, JSON.stringify(broken(text)));
    }),
    { numRuns: 3_000 },
  );
});

test('property: accepts agrees with negotiator on Accept values without media-range parameters', () => {
  const range = fc.constantFrom('*/*', 'application/*', 'text/*', 'application/json', 'text/event-stream', 'text/plain', 'image/png', 'Application/JSON');
  const q = fc.constantFrom(undefined, '0', '1', '0.5', '0.001', '0.000', '1.0', '1.000');
  const member = fc.tuple(range, q, ows).map(([r, w, o]) => (w === undefined ? r : `${r}${o};${o}q=${w}`));
  const accept = fc.array(member, { maxLength: 6 }).map((ms) => ms.join(', '));
  fc.assert(
    fc.property(accept, fc.constantFrom('application/json', 'text/event-stream', 'image/png'), (header, type) => {
      const ref = new Negotiator({ headers: { accept: header } }).mediaTypes([type]).length > 0;
      assert.equal(accepts(header, type), ref, `${header} ${type}`);
    }),
    { numRuns: 5_000 },
  );
});
