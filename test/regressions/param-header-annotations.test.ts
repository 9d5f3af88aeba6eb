// Found by a trial (2026-12-04): facing a 2026-07-28 HTTP upstream, the gateway kept tools
// whose x-mcp-header annotations are invalid (a `number` property, names equal but for case,
// a space, an empty name, an annotation below a nested property) in every client's tools/list,
// and called them without Mcp-Param headers. An HTTP client MUST drop such a tool from its
// tools/list result (2026-07-28 server/tools#x-mcp-header).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';
import { rawHttp } from '../helpers/servers.js';

test('tools with invalid x-mcp-header annotations from a 2026-07-28 HTTP upstream are dropped from tools/list (both eras) and not called', async (t) => {
  const upstream = await rawHttp(t, '--bad-annotations');
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { upstreamUrl: upstream }, records);
  const modern = await post(gw.url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  const names = (r: typeof modern) => (r.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name);
  assert.deepEqual(names(modern), ['echo', 'greeting', 'utf8', 'trace', 'connections', 'good']);
  const headers = { ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };
  const legacy = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
  assert.deepEqual(names(legacy), ['echo', 'greeting', 'utf8', 'trace', 'connections', 'good']);

  const call = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'bad-number', arguments: { n: 1.5 } } }, headers);
  assert.deepEqual((call.json as { error: unknown }).error, { code: -32602, message: 'Invalid params: unknown tool bad-number' });
  const good = await post(gw.url, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'good', arguments: { region: 'eu' } } }, headers);
  assert.deepEqual((good.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'called good' }]);
  // Each dropped tool is logged once, by name.
  const logged = records.filter((r) => r.msg === 'tool dropped: invalid x-mcp-header annotation').map((r) => r.tool);
  assert.deepEqual(logged.sort(), ['bad-duplicate', 'bad-empty', 'bad-nested', 'bad-number', 'bad-space']);
});
