// Origin and Host checks against DNS rebinding: an exact verdict for every rule.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { isLoopbackHost } from '../../src/core/loopback.js';
import { createOriginCheck, loopbackHostAllowlist } from '../../src/transports/origin.js';

const ORIGIN = 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN';
const HOST_FORBIDDEN = 'SWY_ERR_HTTP_HOST_FORBIDDEN';
const HOST_INVALID = 'SWY_ERR_HTTP_HOST_INVALID';
const o = (reason: string) => ({ which: 'origin', reason, code: ORIGIN });
const forbidden = (reason: string) => ({ which: 'host', reason, code: HOST_FORBIDDEN });
const invalid = (reason: string) => ({ which: 'host', reason, code: HOST_INVALID });

const defaults = { allowedOrigins: ['localhost', '127.0.0.1', '[::1]'], allowedHosts: [] };

test('Origin: absent is allowed; listed hosts on any port, any case, one trailing dot, are allowed', () => {
  const check = createOriginCheck(defaults);
  assert.equal(check(undefined, 'x.example'), null);
  assert.equal(check([], 'x.example'), null);
  for (const origin of [
    'http://localhost:3000',
    'http://127.0.0.1',
    'https://[::1]:8443',
    'http://LOCALHOST:9',
    'HTTP://localhost',
    'http://localhost.',
    'http://localhost.:5173',
    'https://[0:0:0:0:0:0:0:1]',
    'http://localhost:',
    ['http://localhost'],
  ]) {
    assert.equal(check(origin, '127.0.0.1'), null, String(origin));
  }
});

test('Origin: every refusal has its reason and 403', () => {
  const check = createOriginCheck(defaults);
  const cases: Array<[string | string[], ReturnType<typeof o>]> = [
    ['null', o('opaque origin')],
    ['http://evil.example', o('Origin evil.example not allowed')],
    ['http://localhost.evil.example', o('Origin localhost.evil.example not allowed')],
    ['http://127.0.0.2', o('Origin 127.0.0.2 not allowed')],
    ['http://localhost..', o('Origin localhost. not allowed')],
    ['not a url', o('malformed Origin')],
    ['http://', o('malformed Origin')],
    ['http://a b', o('malformed Origin')],
    ['http://local%68ost', o('malformed Origin')],
    ['http://127.1', o('malformed Origin')],
    ['http://[::1', o('malformed Origin')],
    ['http://localhost:65536', o('malformed Origin')],
    ['http://localhost http://evil.example', o('malformed Origin')],
    ['http://user:pw@localhost', o('Origin carries userinfo')],
    ['http://user@localhost:3000', o('Origin carries userinfo')],
    ['file:///etc', o('Origin scheme not http(s)')],
    ['ws://localhost', o('Origin scheme not http(s)')],
    ['http://localhost/', o('Origin has a path')],
    ['http://localhost/x', o('Origin has a path')],
    ['http://localhost?x', o('Origin has a path')],
    ['http://localhost#x', o('Origin has a path')],
    [['http://localhost', 'http://localhost'], o('more than one Origin')],
  ];
  for (const [origin, want] of cases) assert.deepEqual(check(origin, '127.0.0.1'), want, String(origin));
});

test('Origin: an entry with a port pins it, the scheme giving the default port', () => {
  const check = createOriginCheck({ allowedOrigins: ['app.example.com:8443', 'plain.example:80', 'localhost'], allowedHosts: [] });
  assert.equal(check('https://app.example.com:8443', undefined), null);
  assert.deepEqual(check('https://app.example.com', undefined), o('Origin app.example.com not allowed'));
  assert.deepEqual(check('http://app.example.com:8444', undefined), o('Origin app.example.com not allowed'));
  assert.equal(check('http://plain.example', undefined), null);
  assert.equal(check('http://plain.example:080', undefined), null);
  assert.deepEqual(check('https://plain.example', undefined), o('Origin plain.example not allowed'));
  assert.equal(check('http://localhost:1234', undefined), null);
});

test('Host: two or more field lines, or an invalid value, are 400 whatever the allowlist', () => {
  for (const policy of [defaults, { ...defaults, allowedHosts: ['localhost'] }]) {
    const check = createOriginCheck(policy);
    assert.deepEqual(check(undefined, ['localhost', 'localhost']), invalid('more than one Host'));
    assert.deepEqual(check(undefined, ['localhost', 'evil.example', 'x']), invalid('more than one Host'));
    for (const bad of ['', 'a b', 'user@localhost', '[::1', '::1', 'localhost:99999', 'local%68ost', 'localhost/x']) {
      assert.deepEqual(check(undefined, bad), invalid('Host invalid'), bad);
      assert.deepEqual(check(undefined, [bad]), invalid('Host invalid'), bad);
    }
    // The Origin is checked first: a bad Origin is 403 even when Host is bad too.
    assert.deepEqual(check('http://evil.example', ['a', 'b']), o('Origin evil.example not allowed'));
  }
});

test('Host allowlist: listed names pass whatever their case or one trailing dot; others are 403', () => {
  const check = createOriginCheck({ ...defaults, allowedHosts: ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', 'mcp.example.com'] });
  for (const host of [
    'localhost:3000',
    'LOCALHOST:3000',
    'localhost.:3000',
    'LocalHost.:03000',
    '127.0.0.1:3000',
    '127.0.0.1.:3000',
    '[::1]:3000',
    '[0::1]:3000',
  ]) {
    assert.equal(check(undefined, host), null, host);
    assert.equal(check(undefined, [host]), null, host);
  }
  for (const host of ['mcp.example.com', 'MCP.Example.COM.', 'mcp.example.com:1', 'mcp.example.com:443']) assert.equal(check(undefined, host), null, host);
  const cases: Array<[string, ReturnType<typeof forbidden>]> = [
    ['evil.example:3000', forbidden('Host evil.example not allowed')],
    ['localhost:3001', forbidden('Host localhost not allowed')],
    ['localhost', forbidden('Host localhost not allowed')],
    ['localhost..:3000', forbidden('Host localhost. not allowed')],
    ['127.0.0.2:3000', forbidden('Host 127.0.0.2 not allowed')],
    ['[::2]:3000', forbidden('Host [::2] not allowed')],
    ['mcp.example.com.evil.example', forbidden('Host mcp.example.com.evil.example not allowed')],
  ];
  for (const [host, want] of cases) assert.deepEqual(check(undefined, host), want, host);
  assert.deepEqual(check(undefined, undefined), invalid('Host missing'));
  assert.deepEqual(check(undefined, []), invalid('Host missing'));
});

test('Host without a port stands for the default port, 80 unless the policy says 443', () => {
  const plain = createOriginCheck({ ...defaults, allowedHosts: ['a.example:80'] });
  assert.equal(plain(undefined, 'a.example'), null);
  assert.deepEqual(plain(undefined, 'a.example:443'), forbidden('Host a.example not allowed'));
  const tls = createOriginCheck({ ...defaults, allowedHosts: ['a.example:443'], defaultHostPort: 443 });
  assert.equal(tls(undefined, 'a.example'), null);
  assert.deepEqual(tls(undefined, 'a.example:80'), forbidden('Host a.example not allowed'));
});

test('no allowlist: any single valid Host passes, a missing one too (HTTP/1.0)', () => {
  const check = createOriginCheck(defaults);
  assert.equal(check(undefined, 'evil.example'), null);
  assert.equal(check(undefined, undefined), null);
});

test("an absolute-form target's authority is checked in place of Host", () => {
  const check = createOriginCheck({ ...defaults, allowedHosts: ['localhost:3000'] });
  assert.equal(check(undefined, 'evil.example', 'localhost:3000'), null);
  assert.equal(check(undefined, undefined, 'LOCALHOST.:3000'), null);
  assert.deepEqual(check(undefined, 'localhost:3000', 'evil.example:3000'), forbidden('Host evil.example not allowed'));
  assert.deepEqual(check(undefined, 'localhost:3000', 'user@localhost:3000'), invalid('request target authority invalid'));
  assert.deepEqual(check(undefined, 'localhost:3000', ''), invalid('request target authority invalid'));
  // Host is ignored but still counted (RFC 9112 §3.2).
  assert.deepEqual(check(undefined, ['localhost:3000', 'localhost:3000'], 'localhost:3000'), invalid('more than one Host'));
  assert.equal(check(undefined, 'not valid at all', 'localhost:3000'), null);
});

test('bad allowlist entries are refused when the policy is compiled', () => {
  for (const policy of [
    { allowedOrigins: ['http://localhost'], allowedHosts: [] },
    { allowedOrigins: [], allowedHosts: ['user@host'] },
    { allowedOrigins: [], allowedHosts: ['::1'] },
    { allowedOrigins: [], allowedHosts: [''] },
  ]) {
    assert.throws(
      () => createOriginCheck(policy),
      (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID',
    );
  }
});

test('loopbackHostAllowlist pins localhost, 127.0.0.1 and [::1] to the bound port, plus another loopback bind address', () => {
  assert.deepEqual(loopbackHostAllowlist(3000), ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
  assert.deepEqual(loopbackHostAllowlist(3000, '127.0.0.1'), ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
  assert.deepEqual(loopbackHostAllowlist(3000, '::1'), ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
  assert.deepEqual(loopbackHostAllowlist(3000, 'localhost'), ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
  assert.deepEqual(loopbackHostAllowlist(3000, '127.0.0.2'), ['localhost:3000', '127.0.0.1:3000', '[::1]:3000', '127.0.0.2:3000']);
  assert.deepEqual(loopbackHostAllowlist(3000, '0.0.0.0'), ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
  // With the default list, a rebinding name that resolves to 127.0.0.1 is refused.
  const check = createOriginCheck({ ...defaults, allowedHosts: loopbackHostAllowlist(3000) });
  assert.equal(check('http://localhost:5173', 'localhost:3000'), null);
  assert.equal(check(undefined, '[::1]:3000'), null);
  assert.deepEqual(check(undefined, 'rebind.evil.example:3000'), forbidden('Host rebind.evil.example not allowed'));
  assert.deepEqual(check(undefined, '127.0.0.1:3001'), forbidden('Host 127.0.0.1 not allowed'));
  assert.deepEqual(check(undefined, '127.0.0.1'), forbidden('Host 127.0.0.1 not allowed'));
});

test('isLoopbackHost: 127.0.0.0/8, ::1, localhost (and IPv4-mapped 127/8) only', () => {
  for (const h of [
    'localhost',
    'LOCALHOST',
    'localhost.',
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '[::FFFF:127.1.2.3]',
  ]) {
    assert.equal(isLoopbackHost(h), true, h);
  }
  for (const h of [
    '0.0.0.0',
    '::',
    '[::]',
    '192.168.1.1',
    '128.0.0.1',
    '126.255.255.255',
    'example.com',
    'localhost.example',
    'my-localhost',
    '::2',
    '::ffff:10.0.0.1',
    '::ffff:7f:1',
    '',
    '127.0.0.1:80',
    '[::1]:80',
    '127.1',
  ]) {
    assert.equal(isLoopbackHost(h), false, h);
  }
});
