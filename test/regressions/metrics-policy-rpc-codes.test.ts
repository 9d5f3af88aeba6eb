// Regression (found by an operator's trial of policy and rate limits): a policy denial (-32010) and
// a rate-limit refusal (-32011) were both counted with `rpc_response_status_code="_OTHER"`, so the
// metrics could not tell them apart, although docs/operations.md admits every JSON-RPC code the
// catalogue defines. Those two codes are the catalogue's own and were missing from the known set.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, find, getText } from '../helpers/ops.js';

const call = (url: string, id: number, name: string) =>
  post(url, modernBody(id, 'tools/call', { name, arguments: { message: 'm' } }), modernHeaders('tools/call', name));

test('policy denials and rate-limit refusals carry their own rpc_response_status_code', async (t) => {
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      policy: { default: 'allow', rules: [{ name: 'no-add', effect: 'deny', when: 'component.kind == "tool" && component.name == "add"' }] },
      rateLimits: [{ name: 'echoes', per: 'principal', ratePerSec: 0.001, burst: 1, tools: ['echo'] }],
      upstreams: { demo: { transport: 'embedded' } },
    },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  const denied = await call(gw.url, 1, 'add');
  assert.equal((denied.json as { error: { code: number } }).error.code, -32010);
  assert.equal((await call(gw.url, 2, 'echo')).status, 200);
  const limited = await call(gw.url, 3, 'echo');
  assert.equal(limited.status, 429);
  assert.equal((limited.json as { error: { code: number } }).error.code, -32011);

  const metrics = (await getText(`${admin}metrics`)).text;
  const codes = (tool: string) =>
    find(metrics, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call', gen_ai_tool_name: tool }).map((s) => [
      s.labels.rpc_response_status_code,
      s.labels.error_type,
      s.value,
    ]);
  assert.deepEqual(codes('add'), [['-32010', undefined, 1]]);
  assert.deepEqual(codes('echo'), [
    [undefined, undefined, 1],
    ['-32011', undefined, 1],
  ]);
});
