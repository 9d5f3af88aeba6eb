// What a failing upstream shows. Found by a trial (helper-10): a credential in an upstream's URL
// (userinfo, a key in the path, `?api_key=`) reached an anonymous client in the error message of
// every failed call, the log, `/readyz`, `/status.json` and the status page; they now show the
// URL's origin only. And while an upstream was down, every refused request logged an error with
// a stack; its going down is logged once, the refusals at debug.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startOpsCli } from '../helpers/ops-cli.js';
import { freePort } from '../helpers/servers.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { urlForDisplay } from '../../src/core/url-text.js';

test('urlForDisplay keeps the origin only: no userinfo, path, query or fragment', () => {
  assert.equal(urlForDisplay('https://user:pw@mcp.example.com:8443/k-123/mcp?api_key=x#f'), 'https://mcp.example.com:8443');
  assert.equal(urlForDisplay('http://127.0.0.1:80/mcp'), 'http://127.0.0.1');
  assert.equal(urlForDisplay('not a url'), '[unparsable url]');
});

test('secrets in an upstream URL never reach a client, the log, /readyz or /status.json', async (t) => {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'url-secrets-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'config.json');
  const url = `http://user:UpPass_secret@127.0.0.1:${port}/mcp/SECRETPATHKEY?api_key=QueryKey_secret`;
  writeFileSync(file, JSON.stringify({ listen: { port: 0 }, admin: { port: 0 }, upstreams: { zap: { url } } }));
  const gw = await startOpsCli(t, ['--config', file]);
  const call = await post(gw.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), modernHeaders('tools/call', 'echo'));
  const readyz = await (await fetch(new URL('readyz', gw.admin))).text();
  const status = await (await fetch(new URL('status.json', gw.admin))).text();
  const page = await (await fetch(gw.admin!)).text();
  assert.ok(call.status >= 400, call.text);
  const everything = [call.text, readyz, status, page, JSON.stringify(gw.records)].join('\n');
  for (const secret of ['UpPass_secret', 'SECRETPATHKEY', 'QueryKey_secret']) assert.doesNotMatch(everything, new RegExp(secret), secret);
  assert.match(readyz + status, new RegExp(`http://127\\.0\\.0\\.1:${port}`), 'the origin still says where');
});

test('requests refused because an upstream is down are not logged as errors one by one: its going down is logged once (found by a trial)', async (t) => {
  const { configGateway } = await import('../helpers/ops.js');
  const port = await freePort();
  const gw = await configGateway(t, { upstreams: { dead: { url: `http://127.0.0.1:${port}/mcp` } } });
  const url = gw.mounts.find((m) => m.name === 'dead')!.url;
  for (let i = 1; i <= 5; i++) {
    const r = await post(url, modernBody(i, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), modernHeaders('tools/call', 'echo'));
    assert.equal(r.status, 503, r.text);
  }
  const errors = gw.records.filter((r) => r.level === 50).map((r) => r.msg);
  assert.deepEqual(errors, ['upstream down'], 'the state change once, no error per refused request');
  assert.equal(gw.records.filter((r) => r.msg === 'request failed').length, 5, 'each refusal still at debug');
});
