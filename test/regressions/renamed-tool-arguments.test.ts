// Regression from a user trial: with curation `tools: { rename: { utf8: zero } }`, a call of `zero`
// whose arguments fail its inputSchema was refused with `…inputSchema: utf8: /offset must be
// integer` and `data.tool: "utf8"`, on the upstream's mount and through the aggregate: the
// renamed tool's upstream name, which docs/policy.md keeps private. The refusal now names the
// tool as the client called it: `zero`, and `a__zero` on the aggregate mount.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';
import { initSession, post } from '../helpers/http.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');

/** The refusal of `{ offset: 'x' }` (raw-server's utf8 takes an integer offset), naming `tool`. */
const refusal = (id: number, tool: string) => ({
  jsonrpc: '2.0',
  id,
  error: {
    code: -32602,
    message: `Invalid params: arguments do not match the tool's inputSchema: ${tool}: /offset must be integer (keyword type)`,
    data: { tool, instancePath: '/offset', keyword: 'type', schemaPath: '#/properties/offset/type', params: { type: 'integer' } },
  },
});

test("an argument refusal of a renamed tool names the client's name, on its mount and through the aggregate, in both eras", async (t) => {
  const gw = await gatewayFromConfig(t, {
    upstreams: { a: { command: process.execPath, args: [RAW, 'stdio'], tools: { rename: { utf8: 'zero' } } } },
    aggregate: {},
  });
  const [own, agg] = gw.urls;
  for (const [url, name] of [
    [own, 'zero'],
    [agg, 'a__zero'],
  ]) {
    const modern = await modernCall(url, 1, 'tools/call', { name, arguments: { offset: 'x' } });
    assert.equal(modern.status, 200);
    assert.deepEqual(modern.json, refusal(1, name), url);
    const headers = await initSession(url, '2025-11-25');
    const legacy = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: { offset: 'x' } } }, headers);
    assert.deepEqual(legacy.json, refusal(2, name), url);
    // The old name stays unknown, and valid arguments reach the tool.
    const old = name.replace('zero', 'utf8');
    assert.deepEqual((await modernCall(url, 3, 'tools/call', { name: old, arguments: { offset: 1 } })).json, {
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'Invalid params: unknown tool: utf8' },
    });
    const ok = await modernCall(url, 4, 'tools/call', { name, arguments: { offset: 1, json: true } });
    assert.deepEqual((ok.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Grüße Ωμέγα 日本語 🚀' }]);
  }
  // Through the aggregate a tool that is not renamed is named as the client called it too.
  assert.deepEqual((await modernCall(agg, 5, 'tools/call', { name: 'a__echo', arguments: { message: 1 } })).json, {
    jsonrpc: '2.0',
    id: 5,
    error: {
      code: -32602,
      message: "Invalid params: arguments do not match the tool's inputSchema: a__echo: /message must be string (keyword type)",
      data: { tool: 'a__echo', instancePath: '/message', keyword: 'type', schemaPath: '#/properties/message/type', params: { type: 'string' } },
    },
  });
});
