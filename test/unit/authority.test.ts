// The HTTP authority parser: known answers, and fast-check properties against WHATWG URL.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatAuthority, parseAuthority, type Authority } from '../../src/transports/authority.js';

test('known answers: reg-names, IPv4, IPv6, ports', () => {
  const cases: Array<[string, Authority | null]> = [
    ['localhost', { host: 'localhost', kind: 'reg-name' }],
    ['LOCALHOST', { host: 'localhost', kind: 'reg-name' }],
    ['localhost.', { host: 'localhost', kind: 'reg-name' }],
    ['LocalHost.:8080', { host: 'localhost', port: 8080, kind: 'reg-name' }],
    ['localhost..', { host: 'localhost.', kind: 'reg-name' }],
    ['a_b~c-d.example', { host: 'a_b~c-d.example', kind: 'reg-name' }],
    ["a!$&'()*+,;=b", { host: "a!$&'()*+,;=b", kind: 'reg-name' }],
    ['example.com:', { host: 'example.com', kind: 'reg-name' }],
    ['example.com:0', { host: 'example.com', port: 0, kind: 'reg-name' }],
    ['example.com:080', { host: 'example.com', port: 80, kind: 'reg-name' }],
    ['example.com:00080', { host: 'example.com', port: 80, kind: 'reg-name' }],
    ['example.com:65535', { host: 'example.com', port: 65535, kind: 'reg-name' }],
    ['127.0.0.1', { host: '127.0.0.1', kind: 'ipv4' }],
    ['127.0.0.1.', { host: '127.0.0.1', kind: 'ipv4' }],
    ['0.0.0.0:1', { host: '0.0.0.0', port: 1, kind: 'ipv4' }],
    ['255.255.255.255', { host: '255.255.255.255', kind: 'ipv4' }],
    ['[::1]', { host: '[::1]', kind: 'ipv6' }],
    ['[::1]:3000', { host: '[::1]', port: 3000, kind: 'ipv6' }],
    ['[::1]:', { host: '[::1]', kind: 'ipv6' }],
    ['[0:0:0:0:0:0:0:1]', { host: '[::1]', kind: 'ipv6' }],
    ['[0000::0001]', { host: '[::1]', kind: 'ipv6' }],
    ['[FE80::ABCD]', { host: '[fe80::abcd]', kind: 'ipv6' }],
    ['[::ffff:127.0.0.1]', { host: '[::ffff:7f00:1]', kind: 'ipv6' }],
    ['[1:2:3:4:5:6:7::]', { host: '[1:2:3:4:5:6:7:0]', kind: 'ipv6' }],
    ['[2001:db8:0:0:1:0:0:1]', { host: '[2001:db8::1:0:0:1]', kind: 'ipv6' }],
    // Refused: userinfo, percent-encoding, characters outside RFC 3986, empty host.
    ['user@localhost', null],
    ['user:pw@localhost:80', null],
    ['@localhost', null],
    ['local%68ost', null],
    ['a b', null],
    [' localhost', null],
    ['localhost ', null],
    ['a\\b', null],
    ['a/b', null],
    ['a?b', null],
    ['a#b', null],
    ['a"b', null],
    ['a`b', null],
    ['a{b', null],
    ['a|b', null],
    ['a^b', null],
    ['a<b', null],
    ['bücher.example', null],
    ['', null],
    ['.', null],
    [':80', null],
    ['.:80', null],
    // Ports: more than five digits, above 65535, not digits, several colons.
    ['example.com:65536', null],
    ['example.com:99999', null],
    ['example.com:000080', null],
    ['example.com:8o', null],
    ['example.com:-1', null],
    ['example.com:+1', null],
    ['example.com:80:80', null],
    // IPv6 only in brackets, with nothing after "]" but ":port"; no zone ids, no IPvFuture.
    ['::1', null],
    ['::1:80', null],
    ['[::1', null],
    ['::1]', null],
    ['[::1]x', null],
    ['[::1]:80x', null],
    ['[::1]]', null],
    ['[::1]:80:80', null],
    ['[fe80::1%25eth0]', null],
    ['[fe80::1%eth0]', null],
    ['[v1.fe]', null],
    ['[1::2::3]', null],
    ['[1:2:3:4:5:6:7:8:9]', null],
    ['[127.0.0.1]', null],
    ['[]', null],
    ['[localhost]', null],
    // Numeric last labels that are not dotted-decimal IPv4 (WHATWG would read them as IPv4).
    ['127.1', null],
    ['0x7f.0.0.1', null],
    ['0x7f000001', null],
    ['2130706433', null],
    ['01.2.3.4', null],
    ['1.2.3.04', null],
    ['1.2.3.4.5', null],
    ['256.1.1.1', null],
    ['a.1', null],
    ['a.0x', null],
    ['a.1.', null],
    ['x'.repeat(256), null],
  ];
  for (const [input, want] of cases) assert.deepEqual(parseAuthority(input), want, JSON.stringify(input));
  assert.deepEqual(parseAuthority('x'.repeat(255)), { host: 'x'.repeat(255), kind: 'reg-name' });
  assert.deepEqual(parseAuthority('x'.repeat(255) + '.:1'), { host: 'x'.repeat(255), port: 1, kind: 'reg-name' });
});

test('formatAuthority writes host[:port] back', () => {
  assert.equal(formatAuthority({ host: '[::1]', port: 80, kind: 'ipv6' }), '[::1]:80');
  assert.equal(formatAuthority({ host: 'a.example', kind: 'reg-name' }), 'a.example');
  fc.assert(
    fc.property(validAuthority(), ({ text }) => {
      const a = parseAuthority(text)!;
      assert.deepEqual(parseAuthority(formatAuthority(a)), a);
    }),
    { numRuns: 500 },
  );
});

/** WHATWG's reading of `http://<s>/`, when it reads `s` as the whole authority. */
function whatwg(s: string): { hostname: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(`http://${s}/`);
  } catch {
    return null;
  }
  if (u.username || u.password || u.pathname !== '/' || u.search || u.hash) return null;
  return { hostname: u.hostname, port: u.port === '' ? 80 : Number(u.port) };
}

const tricky = fc.constantFrom(...'abcXYZ019.-_~:[]@%!$&\'()*+,;= \\/?#"`{}^|<>\u00e9\u0000\t'.split(''), 'localhost', '127.0.0.1', '::1', 'ffff', '0x');

const hexish = fc.constantFrom(...'0123456789abcdefABCDEF:.%'.split(''), '::', 'ffff:', '127.0.0.1');
const bracketed = fc
  .tuple(fc.array(hexish, { maxLength: 12 }), fc.array(tricky, { maxLength: 3 }))
  .map(([inner, tail]) => `[${inner.join('')}]${tail.join('')}`);

test('property: whatever we accept, WHATWG URL accepts as the same host and port', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.array(tricky, { maxLength: 12 }).map((p) => p.join('')),
        bracketed,
      ),
      (s) => {
        const ours = parseAuthority(s);
        if (ours === null) return;
        // We do not check IDNA: WHATWG refuses an `xn--` label that is not valid punycode.
        if (/xn--/i.test(s)) return;
        const ref = whatwg(s);
        assert.ok(ref, `WHATWG refused ${JSON.stringify(s)}`);
        const refHost = ours.kind === 'reg-name' && ref.hostname.endsWith('.') ? ref.hostname.slice(0, -1) : ref.hostname;
        assert.equal(ours.host, refHost, JSON.stringify(s));
        assert.equal(ours.port ?? 80, ref.port, JSON.stringify(s));
      },
    ),
    { numRuns: 20_000 },
  );
});

/** RFC 5952 §4 text form of eight 16-bit groups: lower case, no leading zeros, longest zero run (two or more) as `::`. */
function rfc5952(groups: number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** A valid authority and its known answer. */
function validAuthority(): fc.Arbitrary<{ text: string; want: Authority }> {
  const letter = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''));
  const labelChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_~'.split(''));
  const label = fc.array(labelChar, { minLength: 1, maxLength: 10 }).map((a) => a.join(''));
  // The last label holds a letter and is no hexadecimal number (`0x`, `0xAb`), so the URL
  // standard's reference never reads it as an IPv4 address (WHATWG URL, IPv4 number parser).
  const lastLabel = fc
    .tuple(fc.array(labelChar, { maxLength: 4 }), letter, fc.array(labelChar, { maxLength: 4 }))
    .map(([a, l, b]) => a.join('') + l + b.join(''))
    .filter((l) => !/^0x[0-9a-f]*$/i.test(l));
  const regName = fc
    .tuple(fc.array(label, { maxLength: 3 }), lastLabel, fc.boolean())
    .filter(([ls, last]) => !/xn--/i.test([...ls, last].join('.')))
    .map(([ls, last, dot]) => {
      const name = [...ls, last].join('.');
      return { text: name + (dot ? '.' : ''), host: name.toLowerCase(), kind: 'reg-name' as const };
    });
  const ipv4 = fc
    .array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 })
    .map((o) => ({ text: o.join('.'), host: o.join('.'), kind: 'ipv4' as const }));
  const ipv6 = fc
    .tuple(fc.array(fc.constantFrom(0, 0, 0, 1, 0xabcd, 0xffff, 0x20), { minLength: 8, maxLength: 8 }), fc.boolean(), fc.boolean())
    .map(([groups, upper, full]) => {
      const text = full ? groups.map((g) => g.toString(16).padStart(4, '0')).join(':') : rfc5952(groups);
      return { text: `[${upper ? text.toUpperCase() : text}]`, host: `[${rfc5952(groups)}]`, kind: 'ipv6' as const };
    });
  const port = fc.oneof(
    fc.constant<{ text: string; port?: number }>({ text: '' }),
    fc.constant<{ text: string; port?: number }>({ text: ':' }),
    fc
      .integer({ min: 0, max: 65535 })
      .chain((p) => fc.integer({ min: String(p).length, max: 5 }).map((width) => ({ text: `:${String(p).padStart(width, '0')}`, port: p }))),
  );
  return fc.tuple(fc.oneof(regName, ipv4, ipv6), port).map(([h, p]) => {
    const want: Authority = p.port === undefined ? { host: h.host, kind: h.kind } : { host: h.host, port: p.port, kind: h.kind };
    return { text: h.text + p.text, want };
  });
}

test('property: generated valid authorities parse to their known answer, as WHATWG reads them', () => {
  fc.assert(
    fc.property(validAuthority(), ({ text, want }) => {
      assert.deepEqual(parseAuthority(text), want, text);
      const ref = whatwg(text)!;
      assert.equal(want.kind === 'reg-name' ? ref.hostname.replace(/\.$/, '') : ref.hostname, want.host);
      assert.equal(want.port ?? 80, ref.port);
    }),
    { numRuns: 5_000 },
  );
});

test('property: a valid authority broken by one defect is refused', () => {
  const defect = fc.constantFrom(
    (s: string) => `user@${s}`,
    (s: string) => `u:p@${s}`,
    (s: string) => `%41${s}`,
    (s: string) => `${s.replace(/:\d*$/, '')}:65536`,
    (s: string) => `${s.replace(/:\d*$/, '')}:123456`,
    (s: string) => `${s.replace(/:\d*$/, '')}:1a`,
    (s: string) => `${s} `,
    (s: string) => ` ${s}`,
    (s: string) => `${s}/`,
    (s: string) => `${s}?`,
    (s: string) => `${s}#`,
    (s: string) => `\u00e9${s}`,
    (s: string) => `a\\${s}`,
    (s: string) => `"${s}`,
    (s: string) => `${s}:1:2`,
  );
  fc.assert(
    fc.property(validAuthority(), defect, ({ text }, broken) => {
      assert.equal(parseAuthority(broken(text)), null, broken(text));
    }),
    { numRuns: 5_000 },
  );
});
