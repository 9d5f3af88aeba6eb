// A reload that removes an API key from the top-level `auth` revokes it. The top-level `auth` was
// restart-only: the key went on working, in new requests and in the sessions it had opened, and
// the only sign was the warn line 'config keys changed that take effect after a restart' with
// keys ["auth"], while the same edit in a mount's own `auth` applied at once (found by h-trial8).
// Now the front door a reload builds reads the top-level `auth` too (docs/operations.md, "Hot
// reload"; docs/security.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { post } from '../helpers/http.js';
import { validateConfig } from '../../src/config/load.js';
import { gatewayFromConfig, modernCall, openSession, refusalBody, sessionHeaders } from '../helpers/identity.js';

const K1 = 'revoked-key_0123456789abcdefghijklmnopqrstuv';
const K2 = 'kept-key_0123456789abcdefghijklmnopqrstuvwxyz';
const entry = (name: string, key: string) => ({ name, sha256: createHash('sha256').update(key).digest('hex') });
const configOf = (keys: unknown[]) => ({ listen: { host: '127.0.0.1', port: 0 }, auth: { apiKeys: keys }, upstreams: { demo: { transport: 'embedded' } } });

/** A tools/list in the 2025-03-26 session `sid`. */
const listIn = (url: string, sid: string, key: string, id: number) =>
  post(url, { jsonrpc: '2.0', id, method: 'tools/list', params: {} }, sessionHeaders(sid, `Bearer ${key}`));

test('SIGHUP after removing a top-level API key: the key is refused (401) at once, in new requests and in its open session; the other key and its session go on', async (t) => {
  const file = configFile(t, configOf([entry('one', K1), entry('two', K2)]));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const url = cli.url;
  assert.equal((await modernCall(url, 1, 'tools/list', {}, `Bearer ${K1}`)).status, 200);
  const s1 = await openSession(url, `Bearer ${K1}`);
  const s2 = await openSession(url, `Bearer ${K2}`);
  assert.equal((await listIn(url, s1, K1, 2)).status, 200);

  writeFileSync(file, JSON.stringify(configOf([entry('two', K2)])));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([done.added, done.removed, done.changed], [[], [], []]);
  assert.equal(
    cli.records.slice(from).some((r) => r.msg === 'config keys changed that take effect after a restart'),
    false,
  );

  const fresh = await modernCall(url, 3, 'tools/list', {}, `Bearer ${K1}`);
  assert.equal(fresh.status, 401);
  assert.match(String(fresh.headers['www-authenticate']), /^Bearer /);
  assert.deepEqual(fresh.json, refusalBody('Unauthorized: invalid access token: unknown API key'));
  const inSession = await listIn(url, s1, K1, 4);
  assert.equal(inSession.status, 401);
  assert.deepEqual(inSession.json, refusalBody('Unauthorized: invalid access token: unknown API key'));
  assert.equal((await modernCall(url, 5, 'tools/list', {}, `Bearer ${K2}`)).status, 200);
  const other = await listIn(url, s2, K2, 6);
  assert.equal(other.status, 200);
  assert.ok(Array.isArray((other.json as { result: { tools: unknown[] } }).result.tools));
});

test('a reload keeps the running auth.stdio (read once by --serve-stdio) and says it needs a restart; the rest of the top-level auth applies', async (t) => {
  const raw = { auth: { apiKeys: [entry('one', K1), entry('two', K2)], stdio: { subject: 'first' } }, upstreams: { demo: { transport: 'embedded' } } };
  const gw = await gatewayFromConfig(t, raw);
  const next = validateConfig({ ...raw, listen: { host: '127.0.0.1', port: 0 }, auth: { apiKeys: [entry('two', K2)], stdio: { subject: 'second' } } }, 'test', {
    env: {},
  });
  const report = await gw.reload(next);
  assert.deepEqual(report.needRestart, ['auth.stdio']);
  assert.deepEqual(gw.config.auth, { apiKeys: [{ ...entry('two', K2), scopes: [] }], stdio: { subject: 'first', scopes: [], claims: {} } });
  assert.equal((await modernCall(gw.urls[0], 1, 'tools/list', {}, `Bearer ${K1}`)).status, 401);
  assert.equal((await modernCall(gw.urls[0], 2, 'tools/list', {}, `Bearer ${K2}`)).status, 200);
});
