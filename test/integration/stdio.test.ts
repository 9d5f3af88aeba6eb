// The stdio upstream: shared by many clients without id collisions, restarted when it dies.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StdioUpstream } from '../../src/upstreams/stdio/index.js';
import { splitCommand } from '../../src/upstreams/stdio/index.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';

const H = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function session(url: string): Promise<Record<string, string>> {
  const r = await post(
    url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
    H,
  );
  assert.equal(r.status, 200);
  const h = { ...H, 'mcp-session-id': String(r.headers['mcp-session-id']), 'mcp-protocol-version': '2025-06-18' };
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
  return h;
}

test('two clients use the same request ids on one child at once; each gets only its own answers', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand() });
  const [a, b] = await Promise.all([session(gw.url), session(gw.url)]);
  const call = (h: Record<string, string>, id: number, message: string) =>
    post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }, h);
  const rounds = await Promise.all(Array.from({ length: 20 }, (_, i) => i).flatMap((i) => [call(a, i, `a-${i}`), call(b, i, `b-${i}`)]));
  rounds.forEach((r, k) => {
    const i = Math.floor(k / 2);
    const who = k % 2 === 0 ? 'a' : 'b';
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: `Echo: ${who}-${i}` }] } });
  });
});

test('a child killed during a request: the request fails cleanly, calls get 503-style upstream down while it restarts, then succeed', async (t) => {
  // A backoff long enough that the call below lands while the child is still down.
  const gw = await gateway(t, { stdio: everythingStdioCommand(), limits: { upstreamBackoffMinMs: 4_000 } });
  const up = gw.upstreams.get('default') as StdioUpstream;
  const health = gw.supervised.get('default')!;
  const h = await session(gw.url);
  const firstPid = up.pid;
  assert.ok(firstPid);
  // A first call reads the tool list for argument validation, so the kill below meets the call itself.
  await post(gw.url, { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'echo', arguments: { message: 'warm' } } }, h);
  const pending = post(
    gw.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } } },
    h,
  );
  for (let i = 0; i < 100 && gw.executor.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  process.kill(firstPid, 'SIGKILL');
  const failed = await pending;
  assert.equal(failed.status, 200);
  assert.deepEqual(failed.json, { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Upstream unavailable: child exited (SIGKILL)' } });
  assert.equal(health.state, 'down');
  const upAgain = new Promise<void>((resolve) => health.onChange((s) => s === 'up' && resolve()));
  const refused = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'now' } } }, h);
  // In-band on the session's POST (200), with Retry-After.
  assert.equal(refused.status, 200);
  assert.equal(refused.headers['retry-after'], '4');
  assert.deepEqual(refused.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32000, message: 'Upstream down: default is restarting', data: { upstream: 'default', retryAfterMs: 4000 } },
  });
  await upAgain;
  const next = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'again' } } }, h);
  assert.deepEqual(next.json, { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Echo: again' }] } });
  assert.notEqual(up.pid, firstPid);
  assert.ok(gw.records.some((r) => r.msg === 'upstream restarting'));
});

test('the child is stopped when the gateway closes', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand() });
  const pid = (gw.upstreams.get('default') as StdioUpstream).pid!;
  await gw.close();
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
});

test('with requireUpstreams, a command that cannot start fails the gateway start with upstream unavailable', async (t) => {
  await assert.rejects(gateway(t, { stdio: 'switchyard-no-such-command-xyz', requireUpstreams: true }), { code: 'SWY_ERR_UPSTREAM_UNAVAILABLE' });
});

test('splitCommand splits like a shell, without running one', () => {
  assert.deepEqual(splitCommand(`node "a b/c.js" 'x y' z\\ w --flag="q\\"r"`), ['node', 'a b/c.js', 'x y', 'z w', '--flag=q"r']);
  assert.deepEqual(splitCommand(`npx -y @modelcontextprotocol/server-everything`), ['npx', '-y', '@modelcontextprotocol/server-everything']);
  assert.deepEqual(splitCommand(`a ""`), ['a', '']);
  assert.throws(() => splitCommand(`a "b`), { code: 'SWY_ERR_CLI_USAGE' });
  assert.throws(() => splitCommand(`   `), { code: 'SWY_ERR_CLI_USAGE' });
});
