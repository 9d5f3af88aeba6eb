// A reload that changes only policy rules, rate limits or curation (top-level or an upstream's)
// used to cost the team its sessions: an upstream's own `policy`, `rateLimits` and curation were
// applied by rebuilding its mount (the stdio child restarted, 2025 sessions ended, every client had
// to initialize again), and the top-level `policy` and `rateLimits` were restart-only (logged as
// needing a restart, the running ones kept). Found by the task "policy reloads that do not cost
// the team its sessions"; now the compiled policy, limits and curation are swapped into the
// running interceptor chain (docs/policy.md, "Reloading").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { validateConfig } from '../../src/config/load.js';
import { writeFileSync } from 'node:fs';
import { configFile, configGateway, RAW_SERVER } from '../helpers/ops.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { initSession, modernBody, modernHeaders, nextSseMessage, openSse, post } from '../helpers/http.js';

const raw = { command: process.execPath, args: [RAW_SERVER, 'stdio'] };
const denyEcho = { default: 'allow', rules: [{ name: 'no-echo', effect: 'deny', when: 'component.name == "echo"' }] };
const DENIED_ECHO = { code: -32010, message: 'Forbidden by policy: tool echo', data: { kind: 'tool', name: 'echo' } };

/** What the fixture server's 2026-07-28 results carry besides their content. */
const ECHO_META = { resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'raw-fixture', version: '1.0.0' } } };

const configOf = (extra: Record<string, unknown>) => validateConfig({ listen: { host: '127.0.0.1', port: 0 }, ...extra }, 'test', { env: {} });
const pidOf = (gw: { upstreams: ReadonlyMap<string, unknown> }, name: string) => (gw.upstreams.get(name) as { pid: number | undefined }).pid;

const modernEcho = (url: string, id: number) =>
  post(url, modernBody(id, 'tools/call', { name: 'echo', arguments: { message: `m${id}` } }), modernHeaders('tools/call', 'echo'));

/** `p`, or a rejection naming `what` after `ms` (a notification that never comes fails the test rather than hanging it). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

test("an upstream's own policy and curation change in place: the SDK client's session, the child's pid stay; the new rule holds; tools/list_changed is sent", async (t) => {
  const gw = await configGateway(t, { upstreams: { raw: { ...raw, policy: { default: 'allow' } } } });
  const url = gw.urls[0];
  const pid = pidOf(gw, 'raw');
  assert.equal(typeof pid, 'number');

  const client = new Client({ name: 'reload-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  t.after(() => client.close());
  const session = transport.sessionId;
  assert.equal(typeof session, 'string');
  let changed!: () => void;
  const heard = new Promise<void>((resolve) => (changed = resolve));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
  assert.deepEqual(await client.callTool({ name: 'echo', arguments: { message: 'before' } }), { content: [{ type: 'text', text: 'Echo: before' }] });
  const names = async () => (await client.listTools()).tools.map((x) => x.name);
  assert.ok((await names()).includes('echo'));
  assert.ok((await names()).includes('greeting'));

  const report = await gw.reload(configOf({ upstreams: { raw: { ...raw, policy: denyEcho, tools: { exclude: ['greeting'] } } } }));
  assert.deepEqual(report, { added: [], removed: [], changed: [], unchanged: ['raw'], policy: ['raw'], needRestart: [], kept: [] });

  await within(heard, 10_000, 'no notifications/tools/list_changed');
  // The same session, no new initialize: the next call is refused by the new rule, in-band.
  await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'after' } }), (err: { code?: number; message?: string }) => {
    assert.equal(err.code, -32010);
    return true;
  });
  assert.equal(transport.sessionId, session);
  const after = await names();
  assert.equal(after.includes('echo'), false);
  assert.equal(after.includes('greeting'), false);
  assert.ok(after.includes('utf8'));
  assert.equal(pidOf(gw, 'raw'), pid);
});

test('a top-level policy change takes effect without a restart; a call in flight finishes under the rule it started with', async (t) => {
  const gw = await configGateway(t, { policy: { default: 'allow' }, upstreams: { raw, demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const demoUrl = gw.urls[1];
  const pid = pidOf(gw, 'raw');
  assert.deepEqual((await modernEcho(url, 1)).json, { jsonrpc: '2.0', id: 1, result: { ...ECHO_META, content: [{ type: 'text', text: 'Echo: m1' }] } });

  const slow = post(demoUrl, modernBody(2, 'tools/call', { name: 'slow', arguments: { steps: 2, stepMs: 300 } }), modernHeaders('tools/call', 'slow'));
  const demoMount = gw.mounts.find((m) => m.name === 'demo')!;
  while (demoMount.executor.inFlight === 0) await new Promise((r) => setImmediate(r));
  const noSlow = { default: 'allow', rules: [...denyEcho.rules, { name: 'no-slow', effect: 'deny', when: 'component.name == "slow"' }] };
  const report = await gw.reload(configOf({ policy: noSlow, upstreams: { raw, demo: { transport: 'embedded' } } }));
  assert.deepEqual(report, { added: [], removed: [], changed: [], unchanged: ['raw', 'demo'], policy: ['raw', 'demo'], needRestart: [], kept: [] });
  assert.equal(
    gw.records.some((r) => r.msg === 'config keys changed that take effect after a restart'),
    false,
  );

  const done = await slow;
  assert.equal(done.status, 200);
  assert.equal((done.json as { result?: unknown }).result !== undefined, true);
  assert.deepEqual((await modernEcho(url, 3)).json, { jsonrpc: '2.0', id: 3, error: DENIED_ECHO });
  assert.equal(pidOf(gw, 'raw'), pid);
  assert.deepEqual(
    gw.config.policy?.rules?.map((r) => r.name),
    ['no-echo', 'no-slow'],
  );
});

test('rate limits: an unchanged limit keeps its bucket state, a changed one starts fresh, a removed one goes', async (t) => {
  const limit = (name: string, burst: number) => ({ name, per: 'principal', ratePerSec: 0.001, burst });
  const gw = await configGateway(t, { rateLimits: [limit('a', 3), limit('c', 2)], upstreams: { raw } });
  const url = gw.urls[0];
  const pid = pidOf(gw, 'raw');
  const limitOf = async (id: number) => {
    const r = await modernEcho(url, id);
    return r.status === 429 ? (r.json as { error: { data: { limit: string } } }).error.data.limit : r.status;
  };
  // a: 3 tokens, c: 2 (taken in that order). Two calls pass; the third takes a's last token and is refused by c.
  assert.deepEqual([await limitOf(1), await limitOf(2), await limitOf(3)], [200, 200, 'c']);

  // `a` as it was, `c` with another burst: a's bucket is still empty.
  const report = await gw.reload(configOf({ rateLimits: [limit('a', 3), limit('c', 4)], upstreams: { raw } }));
  assert.deepEqual([report.needRestart, report.changed, report.policy], [[], [], ['raw']]);
  assert.equal(await limitOf(4), 'a');

  // Without `a`, c's bucket is a fresh one of 4 (the old one of 2 was empty): four calls pass, then it refuses.
  await gw.reload(configOf({ rateLimits: [limit('c', 4)], upstreams: { raw } }));
  assert.deepEqual([await limitOf(5), await limitOf(6), await limitOf(7), await limitOf(8), await limitOf(9)], [200, 200, 200, 200, 'c']);
  assert.equal(pidOf(gw, 'raw'), pid);
});

test('a reload that denies a subscribed resource: no further updates about it reach the subscriber; list changes are announced', async (t) => {
  const ALPHA = 'demo://items/alpha';
  const README = 'demo://readme';
  const gw = await configGateway(t, { policy: { default: 'allow' }, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const headers = await initSession(url);
  const get = await openSse(url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': headers['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' });
  t.after(() => get.close());
  for (const [i, uri] of [ALPHA, README].entries()) {
    const r = await post(url, { jsonrpc: '2.0', id: 10 + i, method: 'resources/subscribe', params: { uri } }, headers);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 10 + i, result: {} });
  }
  const touch = async (id: number, uri: string) => {
    const r = await post(url, modernBody(id, 'tools/call', { name: 'touch', arguments: { uri } }), modernHeaders('tools/call', 'touch'));
    assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: `Touched ${uri}` }]);
  };
  const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
  await touch(1, ALPHA);
  assert.deepEqual(await nextSseMessage(get), updated(ALPHA));

  const noAlpha = { default: 'allow', rules: [{ name: 'no-alpha', effect: 'deny', when: `component.kind == "resource" && component.name == "${ALPHA}"` }] };
  await gw.reload(configOf({ policy: noAlpha, upstreams: { demo: { transport: 'embedded' } } }));
  const changes = [await nextSseMessage(get), await nextSseMessage(get), await nextSseMessage(get)].map((m) => m.method);
  assert.deepEqual(changes.sort(), ['notifications/prompts/list_changed', 'notifications/resources/list_changed', 'notifications/tools/list_changed']);
  await touch(2, ALPHA);
  await touch(3, README);
  // The first update after the reload is the readme's: alpha's was dropped.
  assert.deepEqual(await nextSseMessage(get), updated(README));
  // And the session itself lives on.
  const read = await post(url, { jsonrpc: '2.0', id: 20, method: 'resources/read', params: { uri: ALPHA } }, headers);
  assert.deepEqual((read.json as { error: { code: number } }).error.code, -32010);
});

test('2026-07-28 x-mcp-header annotations: a tool a reload makes visible has its Mcp-Param-* headers checked at once', async (t) => {
  const hidden = { default: 'allow', hideDenied: true, rules: [{ name: 'no-lookup', effect: 'deny', when: 'component.name == "lookup"' }] };
  const gw = await configGateway(t, { policy: hidden, upstreams: { demo: { transport: 'embedded' } } });
  const url = gw.urls[0];
  const lookup = (id: number) =>
    post(url, modernBody(id, 'tools/call', { name: 'lookup', arguments: { region: 'eu', key: 'k' } }), {
      ...modernHeaders('tools/call', 'lookup'),
      'mcp-param-region': 'us',
    });
  // A call learns this caller's annotation map (lookup not in it: hidden).
  assert.equal((await modernEcho(url, 1)).status, 200);
  const unknown = await lookup(2);
  assert.deepEqual([unknown.status, (unknown.json as { error: { code: number } }).error.code], [200, -32602]);

  await gw.reload(configOf({ policy: { default: 'allow' }, upstreams: { demo: { transport: 'embedded' } } }));
  const r = await lookup(3);
  assert.deepEqual(
    [r.status, r.json],
    [400, { jsonrpc: '2.0', id: 3, error: { code: -32020, message: 'Header mismatch: Mcp-Param-Region differs from arguments.region' } }],
  );
});

test('the aggregate mount: a 2025 session there sees a top-level rule at once, hears its lists changed, and lives on', async (t) => {
  const gw = await configGateway(t, { policy: { default: 'allow' }, upstreams: { raw }, aggregate: { upstreams: ['raw'] } });
  const aggUrl = gw.urls[gw.urls.length - 1];
  const headers = await initSession(aggUrl);
  const get = await openSse(aggUrl, 'GET', { accept: 'text/event-stream', 'mcp-session-id': headers['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' });
  t.after(() => get.close());
  const names = async (id: number) =>
    ((await post(aggUrl, { jsonrpc: '2.0', id, method: 'tools/list' }, headers)).json as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (x) => x.name,
    );
  assert.ok((await names(1)).includes('raw__echo'));

  const report = await gw.reload(configOf({ policy: denyEcho, upstreams: { raw }, aggregate: { upstreams: ['raw'] } }));
  assert.deepEqual(report, { added: [], removed: [], changed: [], unchanged: ['raw', 'aggregate'], policy: ['raw'], needRestart: [], kept: [] });
  assert.equal((await nextSseMessage(get)).method, 'notifications/tools/list_changed');
  const after = await names(2);
  assert.equal(after.includes('raw__echo'), false);
  assert.ok(after.includes('raw__utf8'));
  const call = await post(aggUrl, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'raw__echo', arguments: { message: 'x' } } }, headers);
  assert.deepEqual([call.status, (call.json as { error: { code: number } }).error.code], [200, -32010]);
});

test('a top-level rule that does not compile refuses the whole reload: nothing of it applies', async (t) => {
  const gw = await configGateway(t, { policy: denyEcho, upstreams: { raw } });
  const url = gw.urls[0];
  const broken = { default: 'allow', rules: [{ name: 'broken', effect: 'deny', when: 'principal.subject == "x"' }] };
  await assert.rejects(
    gw.reload(configOf({ policy: broken, upstreams: { raw, more: { transport: 'embedded' } } })),
    (err: { code?: string; data?: { errors?: Array<{ path: string }> } }) => {
      assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
      assert.deepEqual(
        err.data?.errors?.map((e) => e.path),
        ['/policy/rules/0/when'],
      );
      return true;
    },
  );
  assert.deepEqual(
    gw.mounts.map((m) => m.name),
    ['raw'],
  );
  assert.deepEqual((await modernEcho(url, 1)).json, { jsonrpc: '2.0', id: 1, error: DENIED_ECHO });
});

test('SIGHUP: a top-level policy change in the file applies in place; a 2025 session opened before keeps its Mcp-Session-Id and gets the new rule', async (t) => {
  const file = configFile(t, { listen: { port: 0 }, admin: false, policy: { default: 'allow' }, upstreams: { raw } });
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  const headers = await initSession(cli.url);
  const echo = (id: number) => post(cli.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, headers);
  assert.deepEqual((await echo(1)).json, { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'Echo: x' }] } });

  writeFileSync(file, JSON.stringify({ listen: { port: 0 }, admin: false, policy: denyEcho, upstreams: { raw } }));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  const done = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([done.changed, done.policy], [[], ['raw']]);
  assert.equal(
    cli.records.slice(from).some((r) => r.msg === 'config keys changed that take effect after a restart'),
    false,
  );
  const after = await echo(2);
  assert.deepEqual([after.status, after.json], [200, { jsonrpc: '2.0', id: 2, error: DENIED_ECHO }]);
});
