// Public URLs behind trusted proxies, and the HTTP+SSE endpoint reference: known answers and properties.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { createPublicUrl, endpointReference, isCleanPath, MAX_REMEMBERED_ORIGINS, type PublicUrlRequest } from '../../src/transports/public-url.js';

function req(remoteAddress: string | undefined, headers: Record<string, string>, path = '/sse', secure = false): PublicUrlRequest {
  return { remoteAddress, headers: { get: (n) => headers[n] }, path, secure };
}

function throwsCode(f: () => unknown, code: string, detail?: string): void {
  assert.throws(f, (err: unknown) => {
    assert.ok(err instanceof SwitchyardError, String(err));
    assert.equal(err.code, code);
    if (detail !== undefined) assert.equal(err.message, detail);
    return true;
  });
}

const FORWARDED = {
  host: '127.0.0.1:8080',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'mcp.example.com',
  'x-forwarded-prefix': '/tenant-7',
  'x-forwarded-for': '203.0.113.9',
};

test('trustProxy false: forwarded headers are ignored; Host and the socket give the URL', () => {
  const pub = createPublicUrl({ trustProxy: false });
  assert.deepEqual(pub(req('127.0.0.1', FORWARDED)), {
    clientAddress: '127.0.0.1',
    trustedHops: 0,
    origin: 'http://127.0.0.1:8080',
    prefix: '',
    baseUrl: 'http://127.0.0.1:8080',
    url: 'http://127.0.0.1:8080/sse',
    authoritySource: 'host',
    prefixSource: 'none',
  });
  assert.equal(pub(req('::1', { host: 'LOCALHOST.:443' }, '/mcp', true)).url, 'https://localhost/mcp');
  assert.equal(pub(req('::1', { host: 'localhost:80' }, '/mcp')).url, 'http://localhost/mcp');
  assert.equal(pub(req('::1', { host: '[0::1]:3000' }, '/mcp')).url, 'http://[::1]:3000/mcp');
  throwsCode(() => pub(req('::1', {})), 'SWY_ERR_HTTP_HOST_INVALID', 'Bad Request: invalid or repeated Host: Host missing');
  throwsCode(() => pub(req('::1', { host: 'a b' })), 'SWY_ERR_HTTP_HOST_INVALID', 'Bad Request: invalid or repeated Host: Host invalid');
});

test('a trusted proxy (address list) sets scheme, host and prefix; the client address comes from X-Forwarded-For', () => {
  const pub = createPublicUrl({ trustProxy: ['127.0.0.1', '10.0.0.0/8', 'fd00::/8'] });
  const want = {
    clientAddress: '203.0.113.9',
    trustedHops: 1,
    origin: 'https://mcp.example.com',
    prefix: '/tenant-7',
    baseUrl: 'https://mcp.example.com/tenant-7',
    url: 'https://mcp.example.com/tenant-7/sse',
    authoritySource: 'forwarded',
    prefixSource: 'forwarded',
  };
  assert.deepEqual(pub(req('127.0.0.1', FORWARDED)), want);
  assert.deepEqual(pub(req('10.1.2.3', FORWARDED)), want);
  assert.deepEqual(pub(req('::ffff:10.1.2.3', FORWARDED)), want);
  assert.deepEqual(pub(req('fd12::1', FORWARDED)), want);
  // Only some headers: the rest falls back to Host and the socket.
  assert.deepEqual(pub(req('127.0.0.1', { host: '127.0.0.1:8080', 'x-forwarded-prefix': '/tenant-7/' })), {
    clientAddress: '127.0.0.1',
    trustedHops: 1,
    origin: 'http://127.0.0.1:8080',
    prefix: '/tenant-7',
    baseUrl: 'http://127.0.0.1:8080/tenant-7',
    url: 'http://127.0.0.1:8080/tenant-7/sse',
    authoritySource: 'host',
    prefixSource: 'forwarded',
  });
  assert.equal(pub(req('127.0.0.1', { host: 'h', 'x-forwarded-proto': 'HTTPS', 'x-forwarded-host': 'Pub.Example:443' })).origin, 'https://pub.example');
  assert.equal(pub(req('127.0.0.1', { host: 'h', 'x-forwarded-host': 'pub.example:8443' })).origin, 'http://pub.example:8443');
  assert.equal(pub(req('127.0.0.1', { host: 'h', 'x-forwarded-prefix': '/' })).baseUrl, 'http://h');
});

test('an untrusted peer cannot set any forwarded header', () => {
  const pub = createPublicUrl({ trustProxy: ['127.0.0.1', '10.0.0.0/8'] });
  for (const peer of ['192.0.2.1', '11.0.0.1', '::1', '::ffff:192.0.2.1', undefined]) {
    const r = pub(req(peer, FORWARDED));
    assert.equal(r.baseUrl, 'http://127.0.0.1:8080', String(peer));
    assert.equal(r.clientAddress, peer);
    assert.equal(r.trustedHops, 0);
  }
  // Even invalid values from an untrusted peer are simply not read.
  assert.equal(pub(req('192.0.2.1', { host: 'h', 'x-forwarded-proto': 'gopher' })).origin, 'http://h');
});

test('the outermost trusted proxy wrote the value: client-prepended entries are ignored', () => {
  // Two proxies, each appending: the client sent "evil", the outer proxy appended what it
  // received, the inner proxy what the outer one sent it.
  const headers = {
    host: 'backend:8080',
    'x-forwarded-for': '198.51.100.1, 203.0.113.9, 10.0.0.2',
    'x-forwarded-host': 'evil.example, mcp.example.com, inner.internal',
    'x-forwarded-proto': 'http, https, http',
    'x-forwarded-prefix': '/evil, /tenant-7, /inner',
  };
  const byList = createPublicUrl({ trustProxy: ['10.0.0.0/8'] })(req('10.0.0.1', headers));
  assert.equal(byList.trustedHops, 2);
  assert.equal(byList.clientAddress, '203.0.113.9');
  assert.equal(byList.baseUrl, 'https://mcp.example.com/tenant-7');
  const byCount = createPublicUrl({ trustProxy: 2 })(req('192.0.2.77', headers));
  assert.equal(byCount.trustedHops, 2);
  assert.equal(byCount.clientAddress, '203.0.113.9');
  assert.equal(byCount.baseUrl, 'https://mcp.example.com/tenant-7');
  const one = createPublicUrl({ trustProxy: 1 })(req('192.0.2.77', headers));
  assert.equal(one.clientAddress, '10.0.0.2');
  assert.equal(one.baseUrl, 'http://inner.internal/inner');
  // A proxy that overwrites leaves one entry, which is used whatever the hop count.
  const single = createPublicUrl({ trustProxy: 3 })(req('192.0.2.77', { host: 'h', 'x-forwarded-host': 'mcp.example.com' }));
  assert.equal(single.baseUrl, 'http://mcp.example.com');
  assert.equal(single.trustedHops, 1);
  assert.equal(createPublicUrl({ trustProxy: 0 })(req('192.0.2.77', headers)).baseUrl, 'http://backend:8080');
  assert.equal(createPublicUrl({ trustProxy: [] })(req('10.0.0.1', headers)).baseUrl, 'http://backend:8080');
});

test('honoured forwarded values are validated: 400 SWY_ERR_HTTP_FORWARDED_INVALID', () => {
  const pub = createPublicUrl({ trustProxy: ['loopback'] });
  const bad = (h: Record<string, string>, detail: string) =>
    throwsCode(() => pub(req('127.0.0.1', { host: 'h', ...h })), 'SWY_ERR_HTTP_FORWARDED_INVALID', `Bad Request: invalid X-Forwarded-* header: ${detail}`);
  bad({ 'x-forwarded-proto': 'ftp' }, 'X-Forwarded-Proto "ftp"');
  bad({ 'x-forwarded-proto': 'https ' + 'x'.repeat(100) }, `X-Forwarded-Proto "https ${'x'.repeat(34)}"`);
  bad({ 'x-forwarded-host': 'user@mcp.example.com' }, 'X-Forwarded-Host "user@mcp.example.com"');
  bad({ 'x-forwarded-host': 'mcp.example.com/x' }, 'X-Forwarded-Host "mcp.example.com/x"');
  bad({ 'x-forwarded-host': '[::1' }, 'X-Forwarded-Host "[::1"');
  for (const p of ['tenant-7', '/a/../b', '/a/./b', '/a//b', '/a%2fb', '/a b', '/a?b', '/a#b', '//evil.example', '/a\\b', '/ä']) {
    bad({ 'x-forwarded-prefix': p }, `X-Forwarded-Prefix ${JSON.stringify(p)}`);
  }
  assert.equal(pub(req('127.0.0.1', { host: 'h', 'x-forwarded-proto': '', 'x-forwarded-host': '', 'x-forwarded-prefix': '' })).baseUrl, 'http://h');
});

test('publicBaseUrl overrides every forwarded header; bad values and trust entries fail at creation', () => {
  const pub = createPublicUrl({ trustProxy: ['127.0.0.1'], publicBaseUrl: 'HTTPS://MCP.Example.com:443/tenant-7/' });
  assert.deepEqual(pub(req('127.0.0.1', FORWARDED, '/messages')), {
    clientAddress: '203.0.113.9',
    trustedHops: 1,
    origin: 'https://mcp.example.com',
    prefix: '/tenant-7',
    baseUrl: 'https://mcp.example.com/tenant-7',
    url: 'https://mcp.example.com/tenant-7/messages',
    authoritySource: 'config',
    prefixSource: 'config',
  });
  assert.equal(createPublicUrl({ trustProxy: false, publicBaseUrl: 'http://a.example:8080' })(req('1.2.3.4', {})).baseUrl, 'http://a.example:8080');
  for (const u of [
    'ftp://x',
    'https://u@x',
    'https://x/a?b',
    'https://x/a#b',
    'https://x/a/../b',
    'https://x//a',
    'not a url',
    'https://',
    'https://x:99999',
  ]) {
    throwsCode(() => createPublicUrl({ trustProxy: false, publicBaseUrl: u }), 'SWY_ERR_CONFIG_INVALID');
  }
  for (const t of [['not-an-ip'], ['10.0.0.0/33'], ['10.0.0.1/x'], -1, 1.5]) {
    throwsCode(() => createPublicUrl({ trustProxy: t }), 'SWY_ERR_CONFIG_INVALID');
  }
});

test('endpointReference: relative by default, absolute URL or absolute path when the public side is known', () => {
  assert.equal(endpointReference('/sse', '/messages', 'abc'), 'messages?sessionId=abc');
  assert.equal(new URL('messages?sessionId=abc', 'http://h/tenant-7/sse').href, 'http://h/tenant-7/messages?sessionId=abc');
  assert.equal(endpointReference('/mcp/sse', '/messages', 'abc'), '../messages?sessionId=abc');
  assert.equal(endpointReference('/a/b/sse', '/a/messages', 'abc'), '../messages?sessionId=abc');
  assert.equal(endpointReference('/a/sse', '/a/b/messages', 'abc'), 'b/messages?sessionId=abc');
  assert.equal(endpointReference('/sse/', '/messages', 'abc'), '../messages?sessionId=abc');
  assert.equal(endpointReference('/sse', '/a:b', 'abc'), './a:b?sessionId=abc');
  assert.equal(endpointReference('/x/sse', '/x/', 'abc'), './?sessionId=abc');
  assert.equal(endpointReference('/sse', '/', 'abc'), './?sessionId=abc');
  assert.equal(endpointReference('/sse', '/messages', 'a b&c=d/é'), 'messages?sessionId=a%20b%26c%3Dd%2F%C3%A9');
  const pub = createPublicUrl({ trustProxy: ['127.0.0.1'] });
  const forwarded = pub(req('127.0.0.1', FORWARDED));
  assert.equal(endpointReference('/sse', '/messages', 'abc', forwarded), 'https://mcp.example.com/tenant-7/messages?sessionId=abc');
  const prefixOnly = pub(req('127.0.0.1', { host: '127.0.0.1:8080', 'x-forwarded-prefix': '/tenant-7' }));
  assert.equal(endpointReference('/sse', '/messages', 'abc', prefixOnly), '/tenant-7/messages?sessionId=abc');
  const direct = pub(req('192.0.2.1', FORWARDED));
  assert.equal(endpointReference('/sse', '/messages', 'abc', direct), 'messages?sessionId=abc');
  for (const [g, m] of [
    ['sse', '/messages'],
    ['/sse', 'messages'],
    ['/a/../sse', '/messages'],
    ['/sse', '/m?x'],
    ['/sse', '//messages'],
  ]) {
    throwsCode(() => endpointReference(g, m, 'abc'), 'SWY_ERR_CONFIG_INVALID');
  }
});

const segChar = fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@".split(''));
const segment = fc
  .array(segChar, { minLength: 1, maxLength: 5 })
  .map((a) => a.join(''))
  .filter((s) => s !== '.' && s !== '..');
const cleanPath = fc
  .tuple(fc.array(segment, { maxLength: 4 }), fc.boolean())
  .map(([segs, slash]) => (segs.length === 0 ? '/' : `/${segs.join('/')}${slash ? '/' : ''}`));
// X-Forwarded-* values are comma-separated lists, so a forwarded prefix cannot hold a comma.
const prefix = fc
  .array(
    segment.filter((s) => !s.includes(',')),
    { maxLength: 3 },
  )
  .map((segs) => segs.map((s) => `/${s}`).join(''));
const sessionId = fc.string({ unit: 'grapheme', maxLength: 12 });

test('property: every form of the reference resolves against the public GET URL to the message path under the same prefix', () => {
  const pub = createPublicUrl({ trustProxy: ['127.0.0.1'] });
  fc.assert(
    fc.property(prefix, cleanPath, cleanPath, sessionId, fc.constantFrom('none', 'prefix', 'host'), (pre, getPath, messagesPath, sid, known) => {
      assert.ok(isCleanPath(getPath) && isCleanPath(messagesPath));
      const headers: Record<string, string> = { host: '127.0.0.1:8080' };
      if (known !== 'none') headers['x-forwarded-prefix'] = pre === '' ? '/' : pre;
      if (known === 'host') Object.assign(headers, { 'x-forwarded-host': 'mcp.example.com:8443', 'x-forwarded-proto': 'https' });
      const view = pub(req('127.0.0.1', headers, getPath));
      const getUrl = known === 'host' ? `https://mcp.example.com:8443${pre}${getPath}` : `http://127.0.0.1:8080${pre}${getPath}`;
      if (known === 'host') assert.equal(view.url, getUrl);
      const ref = endpointReference(getPath, messagesPath, sid, view);
      const resolved = new URL(ref, getUrl);
      assert.equal(resolved.origin, new URL(getUrl).origin, ref);
      assert.equal(resolved.pathname, pre + messagesPath, `${ref} against ${getUrl}`);
      assert.deepEqual([...resolved.searchParams], [['sessionId', sid]]);
      assert.equal(resolved.hash, '');
      // Without any public knowledge the reference is relative, so it also holds for a prefix the listener never learns.
      if (known === 'none') assert.ok(!ref.startsWith('/') && !/^[a-z]+:/i.test(ref), ref);
    }),
    { numRuns: 5_000 },
  );
});

test('property: isCleanPath accepts generated clean paths and refuses them with one defect', () => {
  const defect = fc.constantFrom(
    (p: string) => p.slice(1),
    (p: string) => `${p}//`,
    (p: string) => `${p}/./x`,
    (p: string) => `${p}/../x`,
    (p: string) => `${p}/%41`,
    (p: string) => `${p}/a b`,
    (p: string) => `${p}?`,
    (p: string) => `${p}#`,
    (p: string) => `${p}/\\`,
    (p: string) => `${p}/é`,
  );
  fc.assert(
    fc.property(cleanPath, defect, (p, broken) => {
      assert.equal(isCleanPath(p), true, p);
      assert.equal(isCleanPath(broken(p)), false, broken(p));
    }),
    { numRuns: 3_000 },
  );
});

test('remembered origins: the same Host answers alike every time, per scheme, and past the bound', () => {
  const pub = createPublicUrl({ trustProxy: false });
  for (let round = 0; round < 2; round++) {
    assert.equal(pub(req('127.0.0.1', { host: 'gw.example.com:443' })).origin, 'http://gw.example.com:443');
    // The same Host over TLS: the default port is dropped, a different origin from the plain one.
    assert.equal(pub(req('127.0.0.1', { host: 'gw.example.com:443' }, '/mcp', true)).origin, 'https://gw.example.com');
    assert.equal(pub(req('127.0.0.1', { host: 'GW.example.com' }, '/mcp')).url, 'http://gw.example.com/mcp');
    // A refused Host stays refused when asked again.
    throwsCode(() => pub(req('127.0.0.1', { host: 'bad host' })), 'SWY_ERR_HTTP_HOST_INVALID', 'Bad Request: invalid or repeated Host: Host invalid');
  }
  // More distinct Hosts than the memory holds: every answer is still the one for its own Host.
  for (let i = 0; i < MAX_REMEMBERED_ORIGINS * 2 + 7; i++)
    assert.equal(pub(req('127.0.0.1', { host: `h${i}.example:${1000 + i}` })).origin, `http://h${i}.example:${1000 + i}`);
  throwsCode(() => pub(req('127.0.0.1', { host: 'bad host' })), 'SWY_ERR_HTTP_HOST_INVALID', 'Bad Request: invalid or repeated Host: Host invalid');
  // A long Host is parsed each time (not kept), and still refused or accepted by its own rule.
  throwsCode(
    () => pub(req('127.0.0.1', { host: `${'a'.repeat(300)}.example` })),
    'SWY_ERR_HTTP_HOST_INVALID',
    'Bad Request: invalid or repeated Host: Host invalid',
  );
});

test("baseUrlOfHost: the view's baseUrl when Host alone decides it, else undefined (publicBaseUrl, a trusted peer, an invalid Host)", () => {
  const plain = createPublicUrl({ trustProxy: false });
  assert.equal(plain.baseUrlOfHost('127.0.0.1', false, '127.0.0.1:8080'), 'http://127.0.0.1:8080');
  assert.equal(plain.baseUrlOfHost('::1', true, 'LOCALHOST.:443'), 'https://localhost');
  assert.equal(plain.baseUrlOfHost('::1', false, 'a b'), undefined);
  assert.equal(plain.baseUrlOfHost('::1', false, ''), undefined);
  const proxied = createPublicUrl({ trustProxy: ['10.0.0.0/8'] });
  assert.equal(proxied.baseUrlOfHost('10.0.0.1', false, 'backend:8080'), undefined);
  assert.equal(proxied.baseUrlOfHost('192.0.2.7', false, 'backend:8080'), 'http://backend:8080');
  assert.equal(createPublicUrl({ trustProxy: 1 }).baseUrlOfHost('192.0.2.7', false, 'backend:8080'), undefined);
  assert.equal(createPublicUrl({ trustProxy: false, publicBaseUrl: 'https://mcp.example.com/t' }).baseUrlOfHost('::1', false, 'backend'), undefined);
  // Whenever it answers, it answers what the whole view says.
  const rules = [plain, proxied, createPublicUrl({ trustProxy: 0 }), createPublicUrl({ trustProxy: ['loopback'] })];
  fc.assert(
    fc.property(
      fc.constantFrom(...rules),
      fc.constantFrom('127.0.0.1', '10.1.2.3', '192.0.2.7', '::1', undefined),
      fc.boolean(),
      fc.oneof(fc.constantFrom('localhost', 'localhost:80', 'EXAMPLE.com:443', '[::1]:3000', 'h:0', 'a@b', 'x:99999'), fc.string({ maxLength: 12 })),
      (pub, peer, secure, host) => {
        const base = pub.baseUrlOfHost(peer, secure, host);
        if (base === undefined) return;
        assert.equal(base, pub(req(peer, { host, 'x-forwarded-host': 'other.example', 'x-forwarded-prefix': '/p' }, '/mcp', secure)).baseUrl);
      },
    ),
  );
});
