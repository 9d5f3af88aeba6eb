// A reload that removes an API key ends the open streams that key started. The key was refused in
// new requests and in its sessions' requests, but its open streams were not cut: a 2025 session's
// GET stream, a 2024-11-05 HTTP+SSE stream and a 2026-07-28 listen opened with it went on
// delivering notifications to a client no longer authorized. Now the mount's executor keeps its
// open streams with the credential each was opened with and checks them again with the front door
// a reload builds (docs/security.md, "Revoking a key"); a mount whose `auth` did not change keeps
// its streams untouched.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { modernBody, modernHeaders, nextSseMessage, openHttpSseSession, openSse, post, send, type SseReader } from '../helpers/http.js';
import { modernCall, openSession, sessionHeaders } from '../helpers/identity.js';

const K1 = 'revoked-key_0123456789abcdefghijklmnopqrstuv';
const K2 = 'kept-key_0123456789abcdefghijklmnopqrstuvwxyz';
const URI = 'demo://readme';
const entry = (name: string, key: string) => ({ name, sha256: createHash('sha256').update(key).digest('hex') });
/** Mount `demo` takes the top-level keys; mount `other` has its own `auth` with K1, which no reload here changes. */
const configOf = (keys: unknown[]) => ({
  listen: { host: '127.0.0.1', port: 0 },
  auth: { apiKeys: keys },
  dialects: { legacySse: true },
  upstreams: { demo: { transport: 'embedded' }, other: { transport: 'embedded', auth: { apiKeys: [entry('one', K1)] } } },
});

/** Resolves true once `sse` ended, false when it is still open after `ms`. */
const endsWithin = (sse: SseReader, ms: number) =>
  Promise.race([sse.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

interface Streams {
  get: SseReader;
  sse: SseReader;
  listen: SseReader;
}

/** Opens, with `key` on the mount at `url`, a 2025 session's GET stream, an HTTP+SSE stream and a 2026-07-28 listen, each subscribed to URI. */
async function openStreams(t: { after(fn: () => void): void }, url: string, key: string): Promise<Streams> {
  const authorization = `Bearer ${key}`;
  const sid = await openSession(url, authorization);
  assert.equal(
    (await post(url, { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: URI } }, sessionHeaders(sid, authorization))).status,
    200,
  );
  const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26', authorization });
  t.after(() => get.close());
  assert.equal(get.status, 200);

  const { sse, to } = await openHttpSseSession(t, new URL('.', url).href.replace(/\/$/, ''), {}, 'raw', { authorization });
  const h = { 'content-type': 'application/json', authorization };
  assert.equal((await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: URI } }), h)).status, 202);
  assert.deepEqual(await nextSseMessage(sse), { jsonrpc: '2.0', id: 1, result: {} });

  const body = JSON.stringify(modernBody(7, 'subscriptions/listen', { notifications: { resourceSubscriptions: [URI] } }));
  const listen = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization }, body);
  t.after(() => listen.close());
  assert.equal(listen.status, 200);
  assert.equal((await nextSseMessage(listen)).method, 'notifications/subscriptions/acknowledged');
  return { get, sse, listen };
}

/** Asserts that each stream of `s` receives the `resources/updated` of URI next. */
async function hearUpdate(s: Streams): Promise<void> {
  for (const [name, sse] of Object.entries(s)) {
    const m = await nextSseMessage(sse as SseReader);
    assert.equal(m.method, 'notifications/resources/updated', name);
    assert.equal((m.params as { uri: string }).uri, URI, name);
  }
}

test('SIGHUP after removing a top-level API key ends the GET stream, HTTP+SSE stream and listen it opened; the other key, and the same key on a mount whose auth did not change, keep theirs', async (t) => {
  const file = configFile(t, configOf([entry('one', K1), entry('two', K2)]));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const demo = cli.urls.demo;
  const other = cli.urls.other;
  const s1 = await openStreams(t, demo, K1);
  const s2 = await openStreams(t, demo, K2);
  const kept = await openStreams(t, other, K1);
  // Every stream hears an update before the reload.
  assert.equal((await modernCall(demo, 1, 'tools/call', { name: 'touch', arguments: { uri: URI } }, `Bearer ${K2}`)).status, 200);
  for (const s of [s1, s2]) await hearUpdate(s);
  assert.equal((await modernCall(other, 2, 'tools/call', { name: 'touch', arguments: { uri: URI } }, `Bearer ${K1}`)).status, 200);
  await hearUpdate(kept);

  writeFileSync(file, JSON.stringify(configOf([entry('two', K2)])));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([done.added, done.removed, done.changed], [[], [], []]);

  // K1's three streams on `demo` end (within a bound, not at once: the check is asynchronous).
  for (const [name, sse] of Object.entries(s1)) assert.equal(await endsWithin(sse as SseReader, 10_000), true, `${name} ended`);
  // The listen is answered with the refusal a new request with the key gets.
  assert.match(s1.listen.raw(), /"id":7,"error":\{"code":-32000,"message":"Unauthorized: invalid access token: unknown API key"\}/);
  // One line for each, naming the key (never the key itself) and the refusal.
  const lineOf = (kind: string) => cli.waitFor((r) => r.msg === 'open stream ended: its credential no longer passes' && r.kind === kind, from);
  for (const kind of ['get', 'http-sse', 'listen']) {
    const r = await lineOf(kind);
    assert.deepEqual(
      [r.mount, r.dialect, r.principal, r.cause, r.code, r.reason],
      [
        'demo',
        { get: '2025-03-26', 'http-sse': '2024-11-05', listen: '2026-07-28' }[kind],
        { iss: 'switchyard:api-key', sub: 'one' },
        'reload',
        'SWY_ERR_AUTH_INVALID_TOKEN',
        'Unauthorized: invalid access token: unknown API key',
      ],
    );
    assert.equal(JSON.stringify(r).includes(K1), false);
  }
  const closed = await cli.waitFor((r) => r.msg === 'session closed' && r.dialect === '2024-11-05', from);
  assert.equal(closed.reason, 'credential-refused');
  assert.equal(cli.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes').length, 3);

  // K2's streams, and K1's on `other`, are open and still hear an update.
  for (const [name, sse] of [...Object.entries(s2), ...Object.entries(kept)]) assert.equal(await endsWithin(sse as SseReader, 0), false, `${name} open`);
  assert.equal((await modernCall(demo, 3, 'tools/call', { name: 'touch', arguments: { uri: URI } }, `Bearer ${K2}`)).status, 200);
  await hearUpdate(s2);
  assert.equal((await modernCall(other, 4, 'tools/call', { name: 'touch', arguments: { uri: URI } }, `Bearer ${K1}`)).status, 200);
  await hearUpdate(kept);
});
