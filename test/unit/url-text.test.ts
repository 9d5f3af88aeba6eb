// How upstream URLs and stdio command lines are shown: credentials hidden, the rest kept (known answers).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argForDisplay, argvForDisplay, redactQuery, serverOfUrl, urlForDisplay } from '../../src/core/url-text.js';

test('urlForDisplay: the origin only', () => {
  assert.equal(urlForDisplay('https://u:p@mcp.example.com:8443/k/SECRET?api_key=X'), 'https://mcp.example.com:8443');
  assert.equal(urlForDisplay('not a url'), '[unparsable url]');
});

test('serverOfUrl: the host and port of an HTTP upstream, the port explicit or the scheme default; nothing else of the URL', () => {
  assert.deepEqual(serverOfUrl('https://u:p@mcp.example.com/k/SECRET?api_key=X'), { address: 'mcp.example.com', port: 443 });
  assert.deepEqual(serverOfUrl('http://mcp.example.com/mcp'), { address: 'mcp.example.com', port: 80 });
  assert.deepEqual(serverOfUrl('https://mcp.example.com:8443/mcp'), { address: 'mcp.example.com', port: 8443 });
  // Written as the default, the port is still the default (URL drops it; the value is the same).
  assert.deepEqual(serverOfUrl('http://127.0.0.1:80/sse'), { address: '127.0.0.1', port: 80 });
  // An IPv6 literal is an address without the URL's brackets.
  assert.deepEqual(serverOfUrl('http://[::1]:3001/mcp'), { address: '::1', port: 3001 });
  assert.equal(serverOfUrl('ws://mcp.example.com/mcp'), undefined);
  assert.equal(serverOfUrl('not a url'), undefined);
});

test('redactQuery: credential-named parameters are hidden, the others kept', () => {
  assert.equal(
    redactQuery('access_token=A&api_key=B&pwd=C&sessionId=s-1&page=2'),
    'access_token=[redacted]&api_key=[redacted]&pwd=[redacted]&sessionId=s-1&page=2',
  );
  assert.equal(redactQuery(''), '');
  // `code` and `sig` only as whole names: too short to look for inside others.
  assert.equal(redactQuery('code=C&SIG=S&unicode=u&signal=TERM&zipcode=1'), 'code=[redacted]&SIG=[redacted]&unicode=u&signal=TERM&zipcode=1');
  // The same list for a stdio child's argv.
  assert.deepEqual(argvForDisplay(['srv', '--code', 'C', '--sig=S', '--signal', 'TERM']), [
    'srv',
    '--code',
    '[redacted]',
    '--sig=[redacted]',
    '--signal',
    'TERM',
  ]);
});

test('argForDisplay: a URL keeps its user, host, path and harmless parameters; the password, a bare userinfo and credential parameters go', () => {
  assert.equal(argForDisplay('postgresql://app:PGSECRETPW@db.internal/prod'), 'postgresql://app:[redacted]@db.internal/prod');
  assert.equal(argForDisplay('postgresql://app:p@ss@db.internal:5432/prod'), 'postgresql://app:[redacted]@db.internal:5432/prod');
  assert.equal(argForDisplay('https://ghp_TOKEN@github.com/o/r.git'), 'https://[redacted]@github.com/o/r.git');
  assert.equal(argForDisplay('https://h.example/x?api_key=QSECRET&page=2#top'), 'https://h.example/x?api_key=[redacted]&page=2#top');
  assert.equal(
    argForDisplay('--db=mysql://root:ROOTPW@127.0.0.1/app?sslmode=require&password=P2'),
    '--db=mysql://root:[redacted]@127.0.0.1/app?sslmode=require&password=[redacted]',
  );
  assert.equal(argForDisplay('https://a.example/x'), 'https://a.example/x');
  assert.equal(argForDisplay('/usr/bin/node'), '/usr/bin/node');
});

test('argvForDisplay: values of credential-named flags, variables and headers are hidden, whichever form they take', () => {
  assert.deepEqual(
    argvForDisplay([
      'node',
      'server.mjs',
      'postgresql://app:PGSECRETPW@db.internal/prod',
      '--api-key=K1',
      '--token',
      'T1',
      '-p',
      '8080',
      '--client-secret',
      '--verbose',
      '--no-auth',
      '/data',
      'DB_PASSWORD=P1',
      '--header',
      'Authorization: Bearer B1',
      '--url=https://h.example/?access_token=Q1&x=1',
      '--pwd=W1',
      '--credentials-file',
      '/run/secrets/c.json',
    ]),
    [
      'node',
      'server.mjs',
      'postgresql://app:[redacted]@db.internal/prod',
      '--api-key=[redacted]',
      '--token',
      '[redacted]',
      '-p',
      '8080',
      '--client-secret',
      '--verbose',
      '--no-auth',
      '/data',
      'DB_PASSWORD=[redacted]',
      '--header',
      'Authorization: [redacted]',
      '--url=https://h.example/?access_token=[redacted]&x=1',
      '--pwd=[redacted]',
      '--credentials-file',
      '[redacted]',
    ],
  );
  assert.deepEqual(argvForDisplay(['https://u:PW@x.example/run']), ['https://u:[redacted]@x.example/run']);
  assert.deepEqual(argvForDisplay([]), []);
});
