// A 2025 session's GET stream kept its notifications for a Last-Event-ID resumption already
// filtered, for the identity and policy of their arrival: after a config reload that narrowed what
// the session's principal may see (a scope taken from its key, a policy rule added), a client that
// resumed the stream was replayed a `resources/updated` of a resource it may no longer read, by
// the replica that kept it and by another one replaying it from Redis. The stream now keeps them
// unfiltered and decides each when it writes it, live or replayed, for the identity the resuming
// GET proves and the policy in force then (docs/security.md, "Subscriptions").
// Spec: 2025-11-25 basic/transports#resumability-and-redelivery.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { validateConfig } from '../../src/config/load.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { openSse, post, type SseReader } from '../helpers/http.js';
import { openSession, sessionHeaders } from '../helpers/identity.js';
import { startRedis } from '../helpers/redis.js';
import { CLUSTER_KEY, startReplica, until, type TestReplica } from '../helpers/replicas.js';

const KEY = 'replay-key_0123456789abcdefghijklmnopqrstuvw';
const AUTHORIZATION = `Bearer ${KEY}`;
/** Readable with the `docs` scope only (once the rule below is in force). */
const README = 'demo://readme';
/** Readable by anyone. */
const ITEM = 'demo://items/1';
const readmeNeedsDocs = {
  name: 'readme-needs-docs',
  effect: 'deny',
  when: `component.kind == "resource" && component.name == "${README}" && !("docs" in principal.scopes)`,
};
const key = (scopes: string[]) => ({ name: 'one', sha256: createHash('sha256').update(KEY).digest('hex'), scopes });
const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });

/** Waits for an event with data on `sse` and returns it as [id, message]. */
async function nextMessage(sse: SseReader): Promise<[string, unknown]> {
  for (;;) {
    const e = await sse.next(10_000);
    if (e.data !== '') return [e.id ?? '', JSON.parse(e.data)];
  }
}

test('SIGHUP that takes a scope from a key: a GET stream resumed with Last-Event-ID no longer replays the kept update of a resource the key may not read now; given back, it replays it', async (t) => {
  const configOf = (scopes: string[]) => ({
    listen: { host: '127.0.0.1', port: 0 },
    auth: { apiKeys: [key(scopes)] },
    policy: { default: 'allow', rules: [readmeNeedsDocs] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const file = configFile(t, configOf(['docs']));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const url = cli.url;
  const sid = await openSession(url, AUTHORIZATION);
  const h = sessionHeaders(sid, AUTHORIZATION);
  for (const [i, uri] of [README, ITEM].entries())
    assert.deepEqual((await post(url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, h)).json, {
      jsonrpc: '2.0',
      id: 10 + i,
      result: {},
    });
  let n = 100;
  const touch = async (uri: string) =>
    assert.equal((await post(url, { jsonrpc: '2.0', id: n++, method: 'tools/call', params: { name: 'touch', arguments: { uri } } }, h)).status, 200);
  const g = { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26', authorization: AUTHORIZATION };
  /** Resumes the GET stream after `last` once the gateway saw the previous connection go (409 until then). */
  const resume = async (last: string): Promise<SseReader> => {
    let out: SseReader | undefined;
    await until(async () => {
      const r = await openSse(url, 'GET', { ...g, 'last-event-id': last });
      if (r.status === 200) out = r;
      else r.close();
      return out !== undefined;
    }, 'the resumed GET stream');
    t.after(() => out!.close());
    return out!;
  };
  const reload = async (scopes: string[]) => {
    writeFileSync(file, JSON.stringify(configOf(scopes)));
    const from = cli.records.length;
    cli.child.kill('SIGHUP');
    await cli.waitFor((r) => r.msg === 'config reloaded', from);
  };

  const first = await openSse(url, 'GET', g);
  t.after(() => first.close());
  assert.equal(first.status, 200);
  await touch(README);
  const [id1, m1] = await nextMessage(first);
  assert.deepEqual(m1, updated(README));
  first.close();
  await first.ended;

  // Kept while no connection carries the stream: README's update (the key may read it now), then ITEM's.
  await touch(README);
  await touch(ITEM);
  await reload([]);
  const second = await resume(id1);
  const stream = id1.slice(0, id1.lastIndexOf('.'));
  // README's (event 2) is not replayed: the key may not read README any more. ITEM's is.
  assert.deepEqual(await nextMessage(second), [`${stream}.3`, updated(ITEM)]);
  await touch(README);
  await touch(ITEM);
  assert.deepEqual(await nextMessage(second), [`${stream}.5`, updated(ITEM)]);
  assert.equal(second.raw().includes(README), false, second.raw());
  second.close();
  await second.ended;

  // README's update of event 4 was kept, unfiltered; given the scope back, a resumption from
  // before it replays it (decided for the identity in force when it is replayed).
  await reload(['docs']);
  const third = await resume(id1);
  assert.deepEqual(
    [await nextMessage(third), await nextMessage(third), await nextMessage(third), await nextMessage(third)],
    [
      [`${stream}.2`, updated(README)],
      [`${stream}.3`, updated(ITEM)],
      [`${stream}.4`, updated(README)],
      [`${stream}.5`, updated(ITEM)],
    ],
  );
});

test('a reload on both replicas that adds a rule denying a resource: the GET stream resumed on the other replica (replayed from Redis) leaves out the kept update of that resource', async (t) => {
  const redis = await startRedis(t);
  const policed = (rules: unknown[]) => ({ policy: { default: 'allow', rules }, upstreams: { demo: { transport: 'embedded' } } });
  const a = await startReplica(t, { id: 'replica-a', redis: redis.url, config: policed([]) });
  const b = await startReplica(t, { id: 'replica-b', redis: redis.url, config: policed([]) });
  /** Replica `id`'s config as startReplica made it, with `rules`. */
  const configOf = (id: string, rules: unknown[]) => ({
    listen: { host: '127.0.0.1', port: 0 },
    dialects: { modern: true, streamable: true, legacySse: true },
    cluster: { redis: redis.url, key: CLUSTER_KEY, replicaId: id },
    ...policed(rules),
  });
  const init = await post(
    a.url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
    { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  );
  const h = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': String(init.headers['mcp-session-id']),
    'mcp-protocol-version': '2025-11-25',
  };
  assert.equal((await post(a.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);
  for (const [i, uri] of [README, ITEM].entries())
    assert.deepEqual((await post(a.url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, h)).json, {
      jsonrpc: '2.0',
      id: 10 + i,
      result: {},
    });
  const touch = async (uri: string) =>
    assert.equal((await post(a.url, { jsonrpc: '2.0', id: uri, method: 'tools/call', params: { name: 'touch', arguments: { uri } } }, h)).status, 200);
  const g = { accept: 'text/event-stream', 'mcp-session-id': h['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const gets = (r: TestReplica) => r.gw.registry.dialects.get('2025-03-26')!.streamCount();

  const first = await openSse(a.url, 'GET', g);
  t.after(() => first.close());
  assert.equal((await first.next()).data, '', 'the priming event');
  await touch(README);
  const [id1, m1] = await nextMessage(first);
  assert.deepEqual(m1, updated(README));
  first.close();
  await until(() => gets(a) === 0, 'A to see the GET connection close');
  // Kept by A while no connection carries the stream, in Redis too.
  await touch(README);
  await touch(ITEM);

  // The rule on both replicas: README may be read by no one now.
  for (const [r, id] of [
    [a, 'replica-a'],
    [b, 'replica-b'],
  ] as const)
    await r.gw.reload(validateConfig(configOf(id, [readmeNeedsDocs]), 'test', { expandEnv: false }));
  const resumed = await openSse(b.url, 'GET', { ...g, 'last-event-id': id1 });
  t.after(() => resumed.close());
  assert.equal(resumed.status, 200, resumed.raw());
  const stream = id1.slice(0, id1.lastIndexOf('.'));
  // Replayed from Redis: ITEM's update (event 3) and the list changes A's reload told the session,
  // never README's (event 2); then B's own stream, from its priming event.
  const replayed: Array<[string, unknown]> = [];
  for (;;) {
    const e = await resumed.next(10_000);
    if (e.data === '') {
      assert.match(e.id ?? '', /~replica-b~g\d+\.0$/);
      break;
    }
    replayed.push([e.id ?? '', JSON.parse(e.data)]);
  }
  const listChanged = (what: string) => ({ jsonrpc: '2.0', method: `notifications/${what}/list_changed`, params: {} });
  assert.deepEqual(replayed, [
    [`${stream}.3`, updated(ITEM)],
    [`${stream}.4`, listChanged('tools')],
    [`${stream}.5`, listChanged('prompts')],
    [`${stream}.6`, listChanged('resources')],
  ]);
});
