// Regression (found by a trial of a cluster in front of an HTTP upstream that was stopped and
// restarted): a tools/call refused because its mount's upstream was down (503
// SWY_ERR_UPSTREAM_DOWN) counted as `gen_ai_tool_name="_other"` in
// `mcp_server_operation_duration_seconds`, and its access line named no `upstream`, although the
// upstream had listed the tool. The executor asks the upstream's description before the call
// (`checkCapability`), and a down supervisor refuses there, before the request's context learnt
// its upstream; a 2026-07-28 tools/call whose `x-mcp-header` list failed likewise. So every
// per-tool error rate missed exactly the outage. Now a single upstream's mount names it on the
// request either way.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { find, getText, openSession, opsHttp } from '../helpers/ops.js';

test('a tools/call refused because the upstream is down keeps its tool name and upstream', async (t) => {
  const fixture = await opsHttp(t);
  // One failed call opens the breaker; it stays open for the whole test.
  const cli = await startOpsCli(t, [
    '--upstream',
    fixture.url,
    '--port',
    '0',
    '--admin-port',
    '0',
    '--limit',
    'upstreamBreakerFailures=1',
    '--limit',
    'upstreamBreakerCooldownMs=600000',
  ]);
  const url = cli.url;
  // The upstream lists its tools: the metrics learn `echo`.
  const list = await post(url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(list.status, 200);
  const session = await openSession(url);

  await fixture.stop();
  // Calls fail at the upstream (connection refused; the session's own traffic may come first)
  // until the breaker opens; from then on the supervisor refuses them.
  const call25 = async (id: number) => {
    const r = await request(url, {
      method: 'POST',
      headers: session.headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: String(id) } } }),
    });
    assert.equal(r.statusCode, 200);
    return ((await r.body.json()) as { error: { code: number; message: string } }).error;
  };
  let downs25 = 0;
  for (let id = 100; id < 110 && downs25 === 0; id++) if ((await call25(id)).message.startsWith('Upstream down')) downs25++;
  assert.equal(downs25, 1);
  // That call's access line (the breaker opened in its upstream call, which named the upstream) is written before the calls below.
  await cli.waitFor((r) => r.msg === 'request' && r.code === 'SWY_ERR_UPSTREAM_DOWN');
  const from = cli.records.length;
  // Refused by the down upstream: a 2025 session's call and a 2026-07-28 call (whose x-mcp-header list fails first).
  const body25 = await call25(3);
  downs25++;
  assert.equal(body25.code, -32000);
  assert.match(body25.message, /^Upstream down: default failed 1 calls in a row \(circuit open\)/);
  const down26 = await post(url, modernBody(4, 'tools/call', { name: 'echo', arguments: { message: 'c' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(down26.status, 503);
  assert.match(JSON.stringify(down26.json), /Upstream down: default failed 1 calls in a row/);

  const lines = [
    await cli.waitFor(
      (r) => r.msg === 'request' && r.method === 'tools/call' && r.code === 'SWY_ERR_UPSTREAM_DOWN' && r.protocolVersion === '2025-06-18',
      from,
    ),
    await cli.waitFor(
      (r) => r.msg === 'request' && r.method === 'tools/call' && r.code === 'SWY_ERR_UPSTREAM_DOWN' && r.protocolVersion === '2026-07-28',
      from,
    ),
  ];
  const metrics = (await getText(new URL('/metrics', cli.admin).href)).text;
  assert.deepEqual(
    lines.map((l) => [l.mount, l.upstream]),
    [
      ['default', 'default'],
      ['default', 'default'],
    ],
    JSON.stringify(lines),
  );

  const down = find(metrics, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', error_type: 'SWY_ERR_UPSTREAM_DOWN' });
  assert.deepEqual(down.map((s) => [s.labels.mcp_protocol_version, s.labels.gen_ai_tool_name, s.value]).sort(), [
    ['2025-06-18', 'echo', downs25],
    ['2026-07-28', 'echo', 1],
  ]);
  assert.deepEqual(find(metrics, 'mcp_server_operation_duration_seconds_count', { gen_ai_tool_name: '_other' }), []);
  assert.equal(await cli.stop(), 0);
});
