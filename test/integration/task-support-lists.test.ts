// Tools that need tasks, as every client era is told of them: the gateway serves no tasks
// (docs/dialects.md, "What clients are told of the upstream"), so a tool's `execution.taskSupport`
// reaches no client, and a tool an upstream serves only as a task is not listed at all.
// The upstream is server-everything over stdio, whose `simulate-research-query` is
// `taskSupport: "required"` and every other tool `"forbidden"`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { fetch2024 } from '../helpers/clients.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

type Tool = { name: string; execution?: unknown };

const RESEARCH = 'simulate-research-query';

test('no era is told of task support: execution is left out of every tool, and a task-only tool is not listed', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand(), dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const check = (era: string, tools: Tool[]) => {
    assert.ok(
      tools.some((x) => x.name === 'echo'),
      `${era}: echo listed`,
    );
    assert.deepEqual(
      tools.filter((x) => x.name === RESEARCH).map((x) => x.name),
      [],
      `${era}: a tool served only as a task is not listed`,
    );
    assert.deepEqual(
      tools.filter((x) => Object.hasOwn(x, 'execution')).map((x) => x.name),
      [],
      `${era}: no tool carries execution`,
    );
  };

  // 2025-11-25 over Streamable HTTP: told of no `tasks` capability, so it must not augment a
  // call (2025-11-25 basic/utilities/tasks#tool-level-negotiation), and `required` would ask it to.
  const v1 = new V1Client({ name: 'tasks-2025', version: '1' });
  await v1.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => v1.close());
  assert.equal(v1.getServerCapabilities()?.tasks, undefined);
  check('2025-11-25', (await v1.listTools()).tools);

  // 2024-11-05 over HTTP+SSE: its revision has no tasks at all.
  const sse = new V1Client({ name: 'tasks-2024', version: '1' });
  await sse.connect(new SSEClientTransport(new URL(gw.url), { fetch: fetch2024 }));
  t.after(() => sse.close());
  check('2024-11-05', (await sse.listTools()).tools);

  // 2026-07-28: Tool has no `execution` in its schema (SEP-2663); the v2 client would drop it
  // itself, so the raw answer is read.
  const res = await post(gw.url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(res.status, 200);
  check('2026-07-28', (res.json as { result: { tools: Tool[] } }).result.tools);

  // The hidden tool is not refused by the gateway: a call still reaches the upstream, which says why.
  const call = await v1.callTool({ name: RESEARCH, arguments: { topic: 'x' } });
  assert.equal(call.isError, true);
  assert.match((call.content as Array<{ text: string }>)[0].text, /requires task augmentation/);
});
