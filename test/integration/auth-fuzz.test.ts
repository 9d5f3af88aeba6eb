// A fast-check fuzz of the Authorization header through the real front door: whatever one or
// more Authorization fields say, the answer is a refusal with a well-formed Bearer challenge
// (or the request passes, for the one real token), a JSON-RPC body with id null, never a crash.
// See RFC 6750 §2.1, §3; RFC 9110 §11.6.1 (WWW-Authenticate syntax), §5.6.4 (quoted-string).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { request } from 'undici';
import { startAuthServer } from '../fixtures/auth-server.js';
import { gatewayFromConfig } from '../helpers/identity.js';
import { modernBody, modernHeaders } from '../helpers/http.js';

/** A parsed challenge: scheme and auth-params (names lower-cased, quoted-string values unescaped). */
interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;

/** Parses one `WWW-Authenticate` value holding a single challenge, strictly (RFC 9110 §11.6.1); throws on anything else. */
function parseChallenge(value: string): Challenge {
  let rest = value;
  const scheme = TOKEN.exec(rest)?.[0];
  if (!scheme) throw new Error(`no scheme in ${value}`);
  rest = rest.slice(scheme.length);
  const params: Record<string, string> = {};
  if (rest.startsWith(' ')) rest = rest.slice(1);
  while (rest.length > 0) {
    const name = TOKEN.exec(rest)?.[0];
    if (!name || rest[name.length] !== '=') throw new Error(`bad auth-param at ${rest}`);
    rest = rest.slice(name.length + 1);
    let v = '';
    if (rest[0] === '"') {
      let i = 1;
      for (; i < rest.length && rest[i] !== '"'; i++) {
        if (rest[i] === '\\') i++;
        v += rest[i];
      }
      if (rest[i] !== '"') throw new Error('unterminated quoted-string');
      rest = rest.slice(i + 1);
    } else {
      v = TOKEN.exec(rest)?.[0] ?? '';
      rest = rest.slice(v.length);
    }
    if (name.toLowerCase() in params) throw new Error(`repeated ${name}`);
    params[name.toLowerCase()] = v;
    if (rest.startsWith(', ')) rest = rest.slice(2);
    else if (rest !== '') throw new Error(`junk after ${name}: ${rest}`);
  }
  return { scheme, params };
}

test('any Authorization fields get a refusal with a well-formed Bearer challenge, or pass with the real token', async (t) => {
  const as = await startAuthServer(t);
  const gw = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer, scopes: ['mcp:read'] } }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const prm = `${new URL(url).origin}/.well-known/oauth-protected-resource/demo/mcp`;
  const real = await as.clientCredentialsToken(url, 'mcp:read');
  const narrow = await as.clientCredentialsToken(url, 'mcp:write');

  const printable = fc.string({ unit: fc.constantFrom(...' \t!"#$%&\'()*+,-./0123456789:;<=>?@ABCXYZabcxyz[\\]^_`{|}~'.split('')), maxLength: 40 });
  const b64 = fc.string({ unit: fc.constantFrom(...'ABCxyz019-._~+/='.split('')), minLength: 1, maxLength: 60 });
  const field = fc.oneof(
    printable,
    b64.map((s) => `Bearer ${s}`),
    fc
      .tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'DPoP', 'Digest', 'Bearer,'), fc.constantFrom(' ', '  ', '\t', ''), printable)
      .map(([a, b, c]) => a + b + c),
    fc.constantFrom(
      `Bearer ${real}`,
      `bearer  ${real}`,
      `Bearer ${narrow}`,
      `Bearer ${real}.x`,
      `Bearer ${real.split('.').slice(0, 2).join('.')}.`,
      'Bearer',
      '',
    ),
  );

  await fc.assert(
    fc.asyncProperty(fc.array(field, { minLength: 0, maxLength: 3 }), async (fields) => {
      const headers: string[] = Object.entries(modernHeaders('tools/list')).flat();
      for (const f of fields) headers.push('authorization', f);
      const res = await request(url, { method: 'POST', headers, body: JSON.stringify(modernBody(1, 'tools/list')) });
      const body = (await res.body.json()) as { jsonrpc: string; id: unknown; error?: { code: number; message: string } };
      // What the front door saw: the fields as Node trims them; two or more are joined, which is never one credential.
      const values = fields.map((f) => f.replace(/^[ \t]+|[ \t]+$/g, ''));
      if (values.length === 1 && /^bearer +/i.test(values[0]) && values[0].replace(/^bearer +/i, '') === real) {
        assert.equal(res.statusCode, 200);
        return;
      }
      assert.ok([400, 401, 403].includes(res.statusCode), `${res.statusCode} for ${JSON.stringify(fields)}`);
      assert.equal(body.id, null);
      assert.equal(body.error?.code, -32000);
      const c = parseChallenge(String(res.headers['www-authenticate']));
      assert.equal(c.scheme, 'Bearer');
      assert.equal(c.params.resource_metadata, prm);
      const want =
        res.statusCode === 400 ? 'invalid_request' : res.statusCode === 403 ? 'insufficient_scope' : c.params.error === undefined ? undefined : 'invalid_token';
      assert.equal(c.params.error, want);
      if (res.statusCode === 403 || c.params.error === undefined) assert.equal(c.params.scope, 'mcp:read');
      // RFC 6750 §3.1: no credential, or one of another well-formed scheme, gets a challenge without an error code.
      const other = values.length === 1 && /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+( |$)/.test(values[0]) && !/^bearer( |$)/i.test(values[0]);
      if (values.length === 0 || (values.length === 1 && values[0] === '') || other) {
        assert.equal(res.statusCode, 401);
        assert.equal(c.params.error, undefined);
        assert.equal(body.error?.message, 'Unauthorized: an access token is required');
      }
    }),
    { numRuns: 300 },
  );
});
