// src/transports/cors.ts and serializedOrigin (src/core/url-text.ts): which origins are taken as
// written, what a preflight grants, and the bound on the names of Access-Control-Request-Headers.
// See WHATWG Fetch §3.2.2, §3.2.3, §4.8; RFC 6454 §6.2.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serializedOrigin } from '../../src/core/url-text.js';
import { createCors, isPreflight, MAX_PREFLIGHT_HEADER_NAMES } from '../../src/transports/cors.js';
import { createOriginCheck } from '../../src/transports/origin.js';

test('serializedOrigin: the form browsers send is taken; another spelling names it; anything else is no origin', () => {
  for (const o of ['https://app.example', 'http://localhost:5173', 'http://[::1]:3000', 'http://127.0.0.1', 'https://xn--bcher-kva.example'])
    assert.equal(serializedOrigin(o), true, o);
  assert.equal(serializedOrigin('HTTPS://App.Example'), 'https://app.example');
  assert.equal(serializedOrigin('https://app.example:443'), 'https://app.example');
  assert.equal(serializedOrigin('http://[0:0::1]:3000'), 'http://[::1]:3000');
  assert.equal(serializedOrigin('https://bücher.example'), 'https://xn--bcher-kva.example');
  assert.equal(serializedOrigin('https://app.example/'), 'https://app.example');
  for (const o of [
    '*',
    'null',
    'app.example',
    'ftp://app.example',
    'https://u:p@app.example',
    'https://app.example/x',
    'https://app.example?q',
    'https://app.example#f',
  ])
    assert.equal(serializedOrigin(o), false, o);
});

test('a preflight grants the MCP request headers and Mcp-Param-*, each once, and looks at no more than 64 names', () => {
  const cors = createCors(
    { origins: ['http://localhost:5173'], maxAgeSec: 0, allowCredentials: false },
    createOriginCheck({ allowedOrigins: ['localhost'], allowedHosts: [] }),
  );
  const pre = (h: string | undefined) => cors.preflight('http://localhost:5173', h, 'POST');
  assert.deepEqual(pre('Content-Type,AUTHORIZATION , mcp-param-a.b_c, mcp-param-, mcp-param-x y, cookie, content-type'), {
    'access-control-allow-origin': 'http://localhost:5173',
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'content-type, authorization, mcp-param-a.b_c',
    'access-control-max-age': '0',
    vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  });
  const filler = Array.from({ length: MAX_PREFLIGHT_HEADER_NAMES - 1 }, (_, i) => `x-${i}`);
  // The 64th name is looked at; the 65th is not.
  assert.equal(pre([...filler, 'accept'].join(', '))?.['access-control-allow-headers'], 'accept');
  assert.equal(pre([...filler, 'x-64', 'accept'].join(', '))?.['access-control-allow-headers'], undefined);
  assert.equal(cors.preflight('http://localhost:5174', 'accept', 'POST'), undefined);
  assert.equal(cors.preflight(undefined, 'accept', 'POST'), undefined);
  assert.equal(cors.actual('http://LOCALHOST:5173'), undefined);
  assert.equal(cors.actual('http://localhost:5173, http://localhost:5173'), undefined);
});

test('isPreflight: OPTIONS with Access-Control-Request-Method, nothing else', () => {
  assert.equal(isPreflight('OPTIONS', 'POST'), true);
  assert.equal(isPreflight('OPTIONS', ''), true);
  assert.equal(isPreflight('OPTIONS', undefined), false);
  assert.equal(isPreflight('POST', 'POST'), false);
});
