// The front door's request guard: the loopback Host default follows the address actually bound
// (port 0 resolved), stays off on other binds, and request targets split as RFC 9112 reads them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createRequestGuard, fieldLines, MAX_REMEMBERED_VERDICTS, splitTarget } from '../../src/transports/request-guard.js';
import { rawRequest } from '../helpers/raw-http.js';

const DEFAULTS = { allowedOrigins: ['localhost', '127.0.0.1', '[::1]'], allowedHosts: [] as string[] };

/** A node:http server on 127.0.0.1:0 that answers each request with the guard's verdict for the address `bound()` reports. */
async function server(t: { after(fn: () => Promise<void>): void }, allowedHosts: string[], bound: (real: AddressInfo) => AddressInfo | null) {
  const srv: http.Server = http.createServer({ requireHostHeader: false }, (req, res) => res.end(JSON.stringify(guard(req))));
  const guard = createRequestGuard({ ...DEFAULTS, allowedHosts }, () => bound(srv.address() as AddressInfo));
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.after(async () => {
    srv.closeAllConnections();
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  const port = (srv.address() as AddressInfo).port;
  return { port, verdict: async (head: string) => (await rawRequest(port, head)).json };
}

const forbidden = (host: string) => ({ which: 'host', reason: `Host ${host} not allowed`, code: 'SWY_ERR_HTTP_HOST_FORBIDDEN' });

test('a loopback bind pins the loopback names to the bound port, read after listen', async (t) => {
  const { port, verdict } = await server(t, [], (real) => real);
  assert.equal(await verdict(`GET / HTTP/1.1\r\nHost: localhost:${port}`), null);
  assert.equal(await verdict(`GET / HTTP/1.1\r\nHost: [::1]:${port}`), null);
  assert.deepEqual(await verdict(`GET / HTTP/1.1\r\nHost: evil.example:${port}`), forbidden('evil.example'));
  assert.deepEqual(await verdict(`GET / HTTP/1.1\r\nHost: localhost:1`), forbidden('localhost'));
});

test('other binds check no Host by default; an explicit list applies on any bind', async (t) => {
  for (const address of ['0.0.0.0', '::', '10.0.0.5', 'fd00::1']) {
    const { verdict } = await server(t, [], (real) => ({ ...real, address }));
    assert.equal(await verdict('GET / HTTP/1.1\r\nHost: evil.example:7600'), null, address);
    // RFC 9112 §3.2 holds whatever the list: one valid Host on HTTP/1.1.
    assert.deepEqual(await verdict('GET / HTTP/1.1'), { which: 'host', reason: 'Host missing', code: 'SWY_ERR_HTTP_HOST_INVALID' }, address);
    assert.deepEqual(await verdict('GET / HTTP/1.1\r\nHost: a\r\nHost: b'), { which: 'host', reason: 'more than one Host', code: 'SWY_ERR_HTTP_HOST_INVALID' });
  }
  const { verdict } = await server(t, ['mcp.example.com'], (real) => ({ ...real, address: '0.0.0.0' }));
  assert.equal(await verdict('GET / HTTP/1.1\r\nHost: mcp.example.com'), null);
  assert.deepEqual(await verdict('GET / HTTP/1.1\r\nHost: evil.example'), forbidden('evil.example'));
  // HTTP/1.0 may omit Host; with a list that is a missing host (400), without one it passes.
  assert.deepEqual(await verdict('GET / HTTP/1.0'), { which: 'host', reason: 'Host missing', code: 'SWY_ERR_HTTP_HOST_INVALID' });
  const open = await server(t, [], (real) => ({ ...real, address: '0.0.0.0' }));
  assert.equal(await open.verdict('GET / HTTP/1.0'), null);
});

test('a guard that never learns its bind (the Node handler on a host server) takes it from the request socket: loopback, own port only', async (t) => {
  const { verdict, port } = await server(t, [], () => null);
  assert.deepEqual(await verdict('GET / HTTP/1.1\r\nHost: evil.example'), {
    which: 'host',
    reason: 'Host evil.example not allowed',
    code: 'SWY_ERR_HTTP_HOST_FORBIDDEN',
  });
  assert.equal(await verdict(`GET / HTTP/1.1\r\nHost: localhost:${port}`), null);
  // A configured list still decides alone.
  const listed = await server(t, ['evil.example'], () => null);
  assert.equal(await listed.verdict('GET / HTTP/1.1\r\nHost: evil.example'), null);
});

test('splitTarget: origin-form and absolute-form', () => {
  assert.deepEqual(splitTarget('/mcp'), { path: '/mcp', query: '' });
  assert.deepEqual(splitTarget('/messages?sessionId=a&b=c'), { path: '/messages', query: 'sessionId=a&b=c' });
  assert.deepEqual(splitTarget('http://h:1/mcp?x=1'), { authority: 'h:1', path: '/mcp', query: 'x=1' });
  assert.deepEqual(splitTarget('HTTPS://[::1]:8443/a/b'), { authority: '[::1]:8443', path: '/a/b', query: '' });
  assert.deepEqual(splitTarget('http://h'), { authority: 'h', path: '/', query: '' });
  assert.deepEqual(splitTarget('http://h?q'), { authority: 'h', path: '/', query: 'q' });
  assert.deepEqual(splitTarget('http://u@h/p'), { authority: 'u@h', path: '/p', query: '' });
  // Neither form (asterisk-form, garbage): taken as a path, which no route matches.
  assert.deepEqual(splitTarget('*'), { path: '*', query: '' });
});

test('fieldLines: every field line of a name, in any case, one value as a string', () => {
  const raw = ['Host', 'a.example', 'Accept', '*/*', 'HOST', 'b.example', 'origin', 'http://localhost'];
  assert.deepEqual(fieldLines(raw, 'host'), ['a.example', 'b.example']);
  assert.equal(fieldLines(raw, 'origin'), 'http://localhost');
  assert.equal(fieldLines(raw, 'accept'), '*/*');
  assert.equal(fieldLines(raw, 'content-type'), undefined);
  assert.equal(fieldLines([], 'host'), undefined);
});

test('remembered verdicts never let a refused request through: the same fields get the same verdict, repeated ones are checked each time', async (t) => {
  const { port, verdict } = await server(t, [], (real) => real);
  for (let round = 0; round < 3; round++) {
    assert.equal(await verdict(`GET / HTTP/1.1\r\nHost: localhost:${port}`), null);
    assert.deepEqual(await verdict(`GET / HTTP/1.1\r\nHost: evil.example:${port}`), forbidden('evil.example'));
    assert.deepEqual(await verdict(`GET / HTTP/1.1\r\nHost: localhost:${port}\r\nHost: localhost:${port}`), {
      which: 'host',
      reason: 'more than one Host',
      code: 'SWY_ERR_HTTP_HOST_INVALID',
    });
    assert.deepEqual(await verdict(`GET / HTTP/1.1\r\nHost: localhost:${port}\r\nOrigin: http://evil.example`), {
      which: 'origin',
      reason: 'Origin evil.example not allowed',
      code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN',
    });
  }
  // Past the bound the memory starts again: more distinct Hosts than it keeps are each judged on their own.
  for (let i = 0; i < MAX_REMEMBERED_VERDICTS + 10; i++)
    assert.deepEqual(await verdict(`GET / HTTP/1.1\r\nHost: h${i}.example:${port}`), forbidden(`h${i}.example`));
  assert.equal(await verdict(`GET / HTTP/1.1\r\nHost: localhost:${port}`), null);
});
