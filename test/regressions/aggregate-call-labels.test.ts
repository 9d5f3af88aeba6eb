// Regression (left open in earlier notes): a tools/call through the aggregate mount counted as
// `gen_ai_tool_name="_other"` in `mcp_server_operation_duration_seconds`, whatever the tool, and
// its access line named no `upstream`: the client request never learnt the member that served it
// (only the member call's own context did). Now the aggregate tells the client request its member
// (`servedBy`): the access line names it, and the server series carries the name the client called.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, find, getText } from '../helpers/ops.js';

test('an aggregate tools/call: the server series names the tool as called, the access line the member', async (t) => {
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    upstreams: { a: { transport: 'embedded' }, b: { transport: 'embedded' } },
    aggregate: { upstreams: ['a', 'b'] },
  });
  const cli = await startOpsCli(t, ['--config', file]);
  const url = cli.urls.aggregate;
  // The members' lists teach the metrics their names (the aggregate lists through them).
  const list = await post(url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.ok(((list.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).some((x) => x.name === 'b__echo'));
  const from = cli.records.length;
  const call = await post(url, modernBody(2, 'tools/call', { name: 'b__echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'b__echo'));
  assert.equal(call.status, 200);

  const access = await cli.waitFor((r) => r.msg === 'request' && r.method === 'tools/call', from);
  assert.deepEqual([access.mount, access.upstream], ['aggregate', 'b'], JSON.stringify(access));
  const metrics = (await getText(new URL('/metrics', cli.admin).href)).text;
  const server = find(metrics, 'mcp_server_operation_duration_seconds_count', { mount: 'aggregate', mcp_method_name: 'tools/call' });
  assert.deepEqual(
    server.map((s) => [s.labels.gen_ai_tool_name, s.value]),
    [['b__echo', 1]],
  );
  const client = find(metrics, 'mcp_client_operation_duration_seconds_count', { upstream: 'b', mcp_method_name: 'tools/call' });
  assert.deepEqual(
    client.map((s) => [s.labels.gen_ai_tool_name, s.value]),
    [['echo', 1]],
  );
  assert.equal(await cli.stop(), 0);
});
