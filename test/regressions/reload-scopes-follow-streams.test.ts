// A reload that changes only a key's scopes (the same principal) left its open streams filtering
// with the identity they were opened with: after the key lost the scope a policy rule asks for to
// read a resource, the `resources/updated` of that resource still reached its 2025 GET stream, its
// HTTP+SSE stream and its 2026-07-28 listen. The re-check now compares everything policy reads of
// the identity (policyViewKey) and the streams follow the identity the credential proves now
// (docs/security.md, "Revoking a key (or changing `auth`)"). A reload that removes `auth` from the
// mount ended its authenticated streams logged as "the credential now names another principal";
// they still end (their sessions are bound to a principal the anonymous requests that follow are
// not), said as what happened, the listen with its graceful result.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { modernBody, modernHeaders, nextSseMessage, openHttpSseSession, openSse, post, send, type SseReader } from '../helpers/http.js';
import { modernCall, openSession, sessionHeaders } from '../helpers/identity.js';

const KEY = 'scoped-key_0123456789abcdefghijklmnopqrstuv';
/** Readable with the `docs` scope only. */
const README = 'demo://readme';
/** Readable by anyone. */
const ITEM = 'demo://items/1';
const key = (scopes: string[]) => ({ name: 'one', sha256: createHash('sha256').update(KEY).digest('hex'), scopes });
const policy = {
  default: 'allow',
  rules: [
    { name: 'readme-needs-docs', effect: 'deny', when: `component.kind == "resource" && component.name == "${README}" && !("docs" in principal.scopes)` },
  ],
};
const configOf = (auth: unknown) => ({
  listen: { host: '127.0.0.1', port: 0 },
  ...(auth !== undefined ? { auth } : {}),
  dialects: { legacySse: true },
  policy,
  upstreams: { demo: { transport: 'embedded' } },
});

/** Resolves true once `sse` ended, false when it is still open after `ms`. */
const endsWithin = (sse: SseReader, ms: number) =>
  Promise.race([sse.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);

/** `p`, or a rejection naming `what` once `ms` passed without it (the CLI helper's waitFor waits for ever). */
function within<T>(p: Promise<T>, what: string, ms = 10_000): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms).unref())]);
}

interface Streams {
  get: SseReader;
  sse: SseReader;
  listen: SseReader;
}

/** Opens, with KEY on `url`, a 2025 session's GET stream, an HTTP+SSE stream and a 2026-07-28 listen, each subscribed to README and ITEM. */
async function openStreams(t: { after(fn: () => void): void }, url: string): Promise<Streams> {
  const authorization = `Bearer ${KEY}`;
  const sid = await openSession(url, authorization);
  for (const [i, uri] of [README, ITEM].entries()) {
    const res = await post(url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, sessionHeaders(sid, authorization));
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { jsonrpc: '2.0', id: 10 + i, result: {} });
  }
  const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26', authorization });
  t.after(() => get.close());
  assert.equal(get.status, 200);

  const { sse, to } = await openHttpSseSession(t, new URL('.', url).href.replace(/\/$/, ''), {}, 'raw', { authorization });
  const h = { 'content-type': 'application/json', authorization };
  for (const [i, uri] of [README, ITEM].entries()) {
    assert.equal((await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1 + i, method: 'resources/subscribe', params: { uri } }), h)).status, 202);
    assert.deepEqual(await nextSseMessage(sse), { jsonrpc: '2.0', id: 1 + i, result: {} });
  }

  const body = JSON.stringify(modernBody(7, 'subscriptions/listen', { notifications: { resourceSubscriptions: [README, ITEM] } }));
  const listen = await openSse(url, 'POST', { ...modernHeaders('subscriptions/listen'), authorization }, body);
  t.after(() => listen.close());
  assert.equal(listen.status, 200);
  const ack = await nextSseMessage(listen);
  assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
  assert.deepEqual((ack.params as { notifications: unknown }).notifications, { resourceSubscriptions: [README, ITEM] });
  return { get, sse, listen };
}

/** Touches `uri` through the demo's `touch` tool, as KEY. */
async function touch(url: string, id: number, uri: string): Promise<void> {
  assert.equal((await modernCall(url, id, 'tools/call', { name: 'touch', arguments: { uri } }, `Bearer ${KEY}`)).status, 200);
}

/** The URI of the next `resources/updated` on each stream of `s`. */
async function nextUpdates(s: Streams): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, sse] of Object.entries(s)) {
    const m = await nextSseMessage(sse as SseReader);
    assert.equal(m.method, 'notifications/resources/updated', name);
    out[name] = (m.params as { uri: string }).uri;
  }
  return out;
}

test('SIGHUP that takes a scope from a key: its open GET stream, HTTP+SSE stream and listen stay open and stop hearing what a policy rule on that scope now denies', async (t) => {
  const file = configFile(t, configOf({ apiKeys: [key(['docs'])] }));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const url = cli.url;
  const s = await openStreams(t, url);
  // With the scope, every stream hears README's update.
  await touch(url, 1, README);
  assert.deepEqual(await nextUpdates(s), { get: README, sse: README, listen: README });

  writeFileSync(file, JSON.stringify(configOf({ apiKeys: [key([])] })));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  await within(
    cli.waitFor((r) => r.msg === 'config reloaded', from),
    'config reloaded',
  );
  // README's update is now dropped on every stream: the next one each hears is ITEM's.
  await touch(url, 2, README);
  await touch(url, 3, ITEM);
  assert.deepEqual(await nextUpdates(s), { get: ITEM, sse: ITEM, listen: ITEM });
  for (const [name, sse] of Object.entries(s)) assert.equal(await endsWithin(sse as SseReader, 0), false, `${name} open`);
  assert.equal(cli.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes').length, 0);

  // One line for each stream: kept, following the key's new identity (never the key itself).
  const line = 'open stream kept: its notifications now follow the identity its credential proves';
  for (const kind of ['get', 'http-sse', 'listen']) {
    const r = await within(
      cli.waitFor((x) => x.msg === line && x.kind === kind, from),
      `${kind} line`,
    );
    assert.deepEqual(
      [r.level, r.mount, r.dialect, r.principal, r.cause],
      [30, 'demo', { get: '2025-03-26', 'http-sse': '2024-11-05', listen: '2026-07-28' }[kind], { iss: 'switchyard:api-key', sub: 'one' }, 'reload'],
    );
    assert.equal(JSON.stringify(r).includes(KEY), false);
  }
  assert.equal(cli.records.filter((r) => r.msg === line).length, 3);

  // The scope given back: followed again, README's update passes again.
  writeFileSync(file, JSON.stringify(configOf({ apiKeys: [key(['docs'])] })));
  const again = cli.records.length;
  cli.child.kill('SIGHUP');
  await within(
    cli.waitFor((r) => r.msg === 'config reloaded', again),
    'config reloaded',
  );
  for (const kind of ['get', 'http-sse', 'listen'])
    await within(
      cli.waitFor((x) => x.msg === line && x.kind === kind, again),
      `${kind} line`,
    );
  await touch(url, 4, README);
  assert.deepEqual(await nextUpdates(s), { get: README, sse: README, listen: README });
});

test('SIGHUP that removes auth from the mount ends its authenticated streams, said as such; the listen gets its graceful result', async (t) => {
  const file = configFile(t, configOf({ apiKeys: [key(['docs'])] }));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const url = cli.url;
  const s = await openStreams(t, url);

  writeFileSync(file, JSON.stringify(configOf(undefined)));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  await within(
    cli.waitFor((r) => r.msg === 'config reloaded', from),
    'config reloaded',
  );
  for (const [name, sse] of Object.entries(s)) assert.equal(await endsWithin(sse as SseReader, 10_000), true, `${name} ended`);
  // No refusal: the listen ends as a server ends it gracefully (2026-07-28 basic/patterns/subscriptions).
  assert.match(s.listen.raw(), /"id":7,"result":\{"resultType":"complete","_meta":\{"io\.modelcontextprotocol\/subscriptionId":7\}\}/);
  assert.doesNotMatch(s.listen.raw(), /"error"/);
  const line = 'open stream ended: its mount no longer authenticates';
  for (const kind of ['get', 'http-sse', 'listen']) {
    const r = await within(
      cli.waitFor((x) => x.msg === line && x.kind === kind, from),
      `${kind} line`,
    );
    assert.deepEqual(
      [r.level, r.mount, r.principal, r.cause, r.code, r.reason],
      [30, 'demo', { iss: 'switchyard:api-key', sub: 'one' }, 'reload', undefined, undefined],
    );
  }
  assert.equal(cli.records.filter((r) => r.msg === line).length, 3);
  assert.equal(cli.records.filter((r) => r.msg === 'open stream ended: its credential no longer passes').length, 0);
  const closed = await within(
    cli.waitFor((r) => r.msg === 'session closed' && r.dialect === '2024-11-05', from),
    'session closed line',
  );
  assert.equal(closed.reason, 'auth-removed');
  // The mount is open now: a request without a key is served.
  assert.equal((await modernCall(url, 5, 'tools/list', {})).status, 200);
});
