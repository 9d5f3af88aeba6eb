// Regression: a tool renamed by curation (`tools.rename`) was counted as
// `gen_ai_tool_name="_other"` in `mcp_server_operation_duration_seconds`, on its own mount and on
// the aggregate mount: the server series names the tool as the client called it (`say`,
// `ev__say`), and the metrics admitted only names the upstream itself listed (`echo`), so every
// call of a renamed tool fell into `_other` with the calls of names nobody listed. Now the names
// clients are shown after curation are known too; the client series keeps the upstream's own name.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, find, getText } from '../helpers/ops.js';
import { everythingUpstream } from '../helpers/identity.js';

test('a renamed tool: the server series names it as called, on its mount and through the aggregate', async (t) => {
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    upstreams: { ev: everythingUpstream({ tools: { rename: { echo: 'say' } } }), b: { transport: 'embedded' } },
    aggregate: { upstreams: ['ev', 'b'] },
  });
  const cli = await startOpsCli(t, ['--config', file]);
  const names = async (url: string) => {
    const r = await post(url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
    return ((r.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((x) => x.name);
  };
  assert.ok((await names(cli.urls.ev)).includes('say'));
  assert.ok((await names(cli.urls.aggregate)).includes('ev__say'));

  const own = await post(cli.urls.ev, modernBody(2, 'tools/call', { name: 'say', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'say'));
  assert.equal(own.status, 200);
  assert.deepEqual((own.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);
  const agg = await post(
    cli.urls.aggregate,
    modernBody(3, 'tools/call', { name: 'ev__say', arguments: { message: 'hi' } }),
    modernHeaders('tools/call', 'ev__say'),
  );
  assert.equal(agg.status, 200);
  assert.deepEqual((agg.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);

  const metrics = (await getText(new URL('/metrics', cli.admin).href)).text;
  const server = (mount: string) =>
    find(metrics, 'mcp_server_operation_duration_seconds_count', { mount, mcp_method_name: 'tools/call' }).map((s) => [s.labels.gen_ai_tool_name, s.value]);
  assert.deepEqual(server('ev'), [['say', 1]]);
  assert.deepEqual(server('aggregate'), [['ev__say', 1]]);
  const client = find(metrics, 'mcp_client_operation_duration_seconds_count', { upstream: 'ev', mcp_method_name: 'tools/call' });
  assert.deepEqual(
    client.map((s) => [s.labels.gen_ai_tool_name, s.value]),
    [['echo', 2]],
  );
  assert.equal(await cli.stop(), 0);
});
