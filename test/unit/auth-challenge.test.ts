// The Bearer scheme on the wire: Authorization parsing (RFC 6750 §2.1) and WWW-Authenticate
// building (RFC 6750 §3, RFC 9728 §5.1), with examples and fast-check properties against a
// reference RFC 9110 §11.6.1 challenge parser written here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { buildChallenge, challengeError, MAX_TOKEN_CHARS, parseAuthorization, quoteString, withChallenge } from '../../src/auth/challenge.js';

interface Challenge {
  scheme: string;
  token68?: string;
  params: Record<string, string>;
}

/**
 * Reference parser for a WWW-Authenticate field value (RFC 9110 §11.6.1):
 * `1#challenge`, `challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`,
 * `auth-param = token BWS "=" BWS ( token / quoted-string )`. Throws on anything else.
 */
function parseChallenges(value: string): Challenge[] {
  const tchar = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
  let i = 0;
  const out: Challenge[] = [];
  const ows = () => {
    while (value[i] === ' ' || value[i] === '\t') i++;
  };
  const token = () => {
    const start = i;
    while (i < value.length && tchar.test(value[i])) i++;
    if (i === start) throw new Error(`token expected at ${i}`);
    return value.slice(start, i);
  };
  const quoted = () => {
    if (value[i] !== '"') throw new Error(`quote expected at ${i}`);
    i++;
    let s = '';
    for (;;) {
      if (i >= value.length) throw new Error('unterminated quoted-string');
      const c = value[i];
      if (c === '"') {
        i++;
        return s;
      }
      if (c === '\\') {
        const n = value[i + 1];
        if (n === undefined || !/[\t\x20-\x7E\x80-\xFF]/.test(n)) throw new Error('bad quoted-pair');
        s += n;
        i += 2;
        continue;
      }
      if (!/[\t\x20\x21\x23-\x5B\x5D-\x7E\x80-\xFF]/.test(c)) throw new Error(`bad qdtext at ${i}`);
      s += c;
      i++;
    }
  };
  ows();
  while (i < value.length) {
    const ch: Challenge = { scheme: token(), params: {} };
    out.push(ch);
    if (value[i] === ' ') {
      while (value[i] === ' ') i++;
      // token68 when a run of token68 characters is not followed by BWS "=" and a value.
      const m = /^[A-Za-z0-9\-._~+/]+=*/.exec(value.slice(i));
      const after = m ? value.slice(i + m[0].length).replace(/^[ \t]*/, '') : '';
      if (m && !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+[ \t]*=/.test(value.slice(i)) && (after === '' || after.startsWith(','))) {
        ch.token68 = m[0];
        i += m[0].length;
      } else {
        for (;;) {
          const name = token().toLowerCase();
          ows();
          if (value[i] !== '=') throw new Error(`= expected at ${i}`);
          i++;
          ows();
          const v = value[i] === '"' ? quoted() : token();
          if (name in ch.params) throw new Error(`repeated ${name}`);
          ch.params[name] = v;
          ows();
          // Another auth-param of this challenge, or the next challenge (a token followed by SP or end).
          if (value[i] !== ',') break;
          const save = i;
          i++;
          ows();
          const rest = value.slice(i);
          if (/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+[ \t]*=/.test(rest)) continue;
          i = save;
          break;
        }
      }
    }
    ows();
    if (i < value.length) {
      if (value[i] !== ',') throw new Error(`, expected at ${i}`);
      i++;
      ows();
    }
  }
  if (out.length === 0) throw new Error('no challenge');
  return out;
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError, `not a catalogue error: ${String(err)}`);
    return err.code;
  }
  return 'no error';
}

test('parseAuthorization: Bearer in any case with one or more spaces yields the token', () => {
  assert.equal(parseAuthorization('Bearer abc.DEF-ghi_~+/=='), 'abc.DEF-ghi_~+/==');
  assert.equal(parseAuthorization('bearer abc'), 'abc');
  assert.equal(parseAuthorization('BEARER   abc'), 'abc');
  assert.equal(parseAuthorization(' \tBearer abc \t'), 'abc');
});

test('parseAuthorization: no credential or another scheme is null (RFC 6750 §3.1: no error code)', () => {
  assert.equal(parseAuthorization(undefined), null);
  assert.equal(parseAuthorization(null), null);
  assert.equal(parseAuthorization(''), null);
  assert.equal(parseAuthorization('   '), null);
  assert.equal(parseAuthorization('Basic dXNlcjpwYXNz'), null);
  assert.equal(parseAuthorization('DPoP abc'), null);
  assert.equal(parseAuthorization('Bearerabc'), null);
});

test('parseAuthorization: malformed Bearer credentials are invalid_request, an overlong token too', () => {
  for (const bad of [
    'Bearer',
    'Bearer ',
    'Bearer a b',
    'Bearer a,Bearer b',
    'Bearer a, Bearer b',
    'Bearer\tabc',
    'Bearer a=b',
    'Bearer "abc"',
    'Bearer ab%',
    '@@ x',
    'Bearer é',
  ]) {
    assert.equal(
      codeOf(() => parseAuthorization(bad)),
      'SWY_ERR_AUTH_INVALID_REQUEST',
      bad,
    );
  }
  assert.equal(parseAuthorization(`Bearer ${'a'.repeat(MAX_TOKEN_CHARS)}`), 'a'.repeat(MAX_TOKEN_CHARS));
  assert.equal(
    codeOf(() => parseAuthorization(`Bearer ${'a'.repeat(MAX_TOKEN_CHARS + 1)}`)),
    'SWY_ERR_AUTH_TOKEN_TOO_LONG',
  );
});

test('buildChallenge: exact values for each case', () => {
  const rm = 'https://gw.example.com/.well-known/oauth-protected-resource/mcp';
  assert.equal(buildChallenge({ resourceMetadata: rm }), `Bearer resource_metadata="${rm}"`);
  assert.equal(buildChallenge({ resourceMetadata: rm, scope: ['mcp:read', 'mcp:write'] }), `Bearer resource_metadata="${rm}", scope="mcp:read mcp:write"`);
  assert.equal(
    buildChallenge({ resourceMetadata: rm, error: 'invalid_token', errorDescription: 'expired' }),
    `Bearer resource_metadata="${rm}", error="invalid_token", error_description="expired"`,
  );
  assert.equal(
    buildChallenge({ resourceMetadata: rm, error: 'insufficient_scope', scope: ['a', 'b'] }),
    `Bearer resource_metadata="${rm}", error="insufficient_scope", scope="a b"`,
  );
  assert.equal(quoteString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(
    codeOf(() => quoteString('line\nbreak')),
    'SWY_ERR_INTERNAL_FAULT',
  );
  assert.equal(
    codeOf(() => buildChallenge({ resourceMetadata: rm, scope: ['has space'] })),
    'SWY_ERR_INTERNAL_FAULT',
  );
});

test('challengeError and withChallenge: status, code and WWW-Authenticate per RFC 6750 §3.1', () => {
  const res = { prmUrl: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' };
  const req = challengeError('SWY_ERR_AUTH_REQUIRED', res, { scope: ['mcp:read'] });
  assert.equal(req.status, 401);
  assert.deepEqual(req.headers, { 'WWW-Authenticate': `Bearer resource_metadata="${res.prmUrl}", scope="mcp:read"` });
  const scope = challengeError('SWY_ERR_AUTH_INSUFFICIENT_SCOPE', res, { detail: 'missing mcp:admin', scope: ['mcp:read', 'mcp:admin'] });
  assert.equal(scope.status, 403);
  assert.equal(scope.message, 'Forbidden: the access token lacks a required scope: missing mcp:admin');
  assert.deepEqual(scope.headers, { 'WWW-Authenticate': `Bearer resource_metadata="${res.prmUrl}", error="insufficient_scope", scope="mcp:read mcp:admin"` });
  let parseErr: unknown;
  try {
    parseAuthorization('Bearer a b');
  } catch (err) {
    parseErr = err;
  }
  const withIt = withChallenge(parseErr, res) as SwitchyardError;
  assert.equal(withIt.status, 400);
  assert.equal(withIt.rpcCode, -32000);
  assert.deepEqual(withIt.headers, {
    'WWW-Authenticate': `Bearer resource_metadata="${res.prmUrl}", error="invalid_request", error_description="the Bearer credential is not exactly one b64token"`,
  });
  const other = new Error('x');
  assert.equal(withChallenge(other, res), other);
  assert.equal(
    codeOf(() => challengeError('SWY_ERR_AUTH_ISSUER_UNAVAILABLE', res)),
    'SWY_ERR_INTERNAL_FAULT',
  );
});

test('the reference parser reads the wire examples of RFC 6750 §3 and RFC 9728 §5.1', () => {
  assert.deepEqual(parseChallenges('Bearer realm="example", error="invalid_token", error_description="The access token expired"'), [
    { scheme: 'Bearer', params: { realm: 'example', error: 'invalid_token', error_description: 'The access token expired' } },
  ]);
  assert.deepEqual(parseChallenges('Bearer resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource"'), [
    { scheme: 'Bearer', params: { resource_metadata: 'https://resource.example.com/.well-known/oauth-protected-resource' } },
  ]);
  assert.deepEqual(parseChallenges('Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"'), [
    { scheme: 'Newauth', params: { realm: 'apps', type: '1', title: 'Login to "apps"' } },
    { scheme: 'Basic', params: { realm: 'simple' } },
  ]);
  assert.throws(() => parseChallenges('Bearer error="unterminated'));
});

// Printable ASCII, with `"` and `\` made frequent so escaping is exercised.
const printable = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', ' ', '\t'),
    fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 60,
});
const scopeToken = fc.string({
  unit: fc
    .integer({ min: 0x21, max: 0x7e })
    .filter((c) => c !== 0x22 && c !== 0x5c)
    .map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 12,
});

test('property: every challenge the builder makes parses back to the same parameters', () => {
  fc.assert(
    fc.property(
      printable,
      fc.option(fc.constantFrom<'invalid_request' | 'invalid_token' | 'insufficient_scope'>('invalid_request', 'invalid_token', 'insufficient_scope'), {
        nil: undefined,
      }),
      fc.option(printable, { nil: undefined }),
      fc.option(fc.array(scopeToken, { minLength: 1, maxLength: 5 }), { nil: undefined }),
      (resourceMetadata, error, errorDescription, scope) => {
        const header = buildChallenge({ resourceMetadata, error, errorDescription, scope });
        const want: Record<string, string> = { resource_metadata: resourceMetadata };
        if (error !== undefined) want.error = error;
        if (errorDescription !== undefined) want.error_description = errorDescription;
        if (scope !== undefined) want.scope = scope.join(' ');
        assert.deepEqual(parseChallenges(header), [{ scheme: 'Bearer', params: want }]);
      },
    ),
    { numRuns: 1000 },
  );
});

test('property: on any string the builder either makes a parseable challenge or throws SWY_ERR_INTERNAL_FAULT', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
      let header: string;
      try {
        header = buildChallenge({ resourceMetadata: s, error: 'invalid_token', errorDescription: s });
      } catch (err) {
        assert.ok(err instanceof SwitchyardError);
        assert.equal(err.code, 'SWY_ERR_INTERNAL_FAULT');
        return;
      }
      assert.deepEqual(parseChallenges(header), [{ scheme: 'Bearer', params: { resource_metadata: s, error: 'invalid_token', error_description: s } }]);
    }),
    { numRuns: 1000 },
  );
});

test('property: parseAuthorization never throws anything but its two catalogue errors', () => {
  const anyHeader = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.string({ maxLength: 80 }).map((s) => `Bearer ${s}`),
    fc
      .tuple(
        fc.constantFrom('bearer', 'Bearer', 'BEARER', 'Basic', ''),
        fc.string({ unit: fc.constantFrom(' ', '\t', ',', '=', 'a', '.', '"'), maxLength: 20 }),
      )
      .map(([a, b]) => a + b),
  );
  fc.assert(
    fc.property(anyHeader, (h) => {
      try {
        const token = parseAuthorization(h);
        if (token !== null) assert.match(token, /^[A-Za-z0-9\-._~+/]+=*$/);
      } catch (err) {
        assert.ok(err instanceof SwitchyardError, `threw ${String(err)}`);
        assert.ok(['SWY_ERR_AUTH_INVALID_REQUEST', 'SWY_ERR_AUTH_TOKEN_TOO_LONG'].includes(err.code));
      }
    }),
    { numRuns: 3000 },
  );
});

test('property: any b64token after any-case "Bearer" and spaces is returned as is', () => {
  const b64 = fc.tuple(
    fc.string({ unit: fc.constantFrom(...'ABCxyz019-._~+/'.split('')), minLength: 1, maxLength: 40 }),
    fc.string({ unit: fc.constant('='), maxLength: 3 }),
  );
  const scheme = fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }).map((up) => [...'bearer'].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));
  fc.assert(
    fc.property(scheme, fc.integer({ min: 1, max: 4 }), b64, (s, spaces, [body, pad]) => {
      assert.equal(parseAuthorization(`${s}${' '.repeat(spaces)}${body}${pad}`), body + pad);
    }),
    { numRuns: 500 },
  );
});
