// `switchyard probe --json` printed the URL as given: a password in its userinfo and an
// `access_token` in its query went to stdout, and so into the CI logs and issues such reports
// are pasted into (found by the client-author trial, h-probe). The report now shows the URL with
// its userinfo and credential query values as `[redacted]`, its path and other parameters kept.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { urlForReport } from '../../src/core/url-text.js';
import { CLI } from '../helpers/cli.js';
import { modernHttp } from '../helpers/servers.js';

test('urlForReport hides userinfo and credential query values, and keeps the rest', () => {
  assert.equal(
    urlForReport('https://alice:s3cret@mcp.example.com:8443/t/mcp?access_token=abc&sessionId=9#x'),
    'https://[redacted]@mcp.example.com:8443/t/mcp?access_token=[redacted]&sessionId=9#x',
  );
  assert.equal(urlForReport('http://127.0.0.1:7/mcp'), 'http://127.0.0.1:7/mcp');
  assert.equal(urlForReport('http://bob@h/mcp?api_key=k&q=1'), 'http://[redacted]@h/mcp?api_key=[redacted]&q=1');
  assert.equal(urlForReport('not a url'), '[unparsable url]');
});

test('probe --json names the URL without its password or token', async (t) => {
  const s = await modernHttp(t);
  const u = new URL(s.url);
  u.username = 'alice';
  u.password = 'pw-s3cret';
  u.search = '?access_token=tok-s3cret&tenant=7';
  const r = await promisify(execFile)(process.execPath, [CLI, 'probe', '--json', '--timeout-ms', '3000', u.href], { encoding: 'utf8' }).then(
    (x) => x.stdout,
    (err: { stdout: string }) => err.stdout,
  );
  assert.doesNotMatch(r, /s3cret/);
  const verdict = JSON.parse(r) as { url: string };
  assert.equal(verdict.url, `http://[redacted]@${u.host}${u.pathname}?access_token=[redacted]&tenant=7`);
});
