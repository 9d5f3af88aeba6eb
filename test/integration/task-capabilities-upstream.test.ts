// A client's own declaration of tasks never reaches an upstream: the gateway routes no `tasks/*`
// method (docs/dialects.md, "What clients are told of the upstream"), so an upstream told the
// client can take tasks would hand it one it can never follow. Upstreams: the hand-written
// 2026-07-28 fixture with `--tasks` (test/fixtures/raw-server.mjs), which answers `job` with a
// CreateTaskResult when the request declares the Tasks extension, and server-everything over
// Streamable HTTP, which offers its task-augmented `trigger-elicitation-request-async` only to
// a session whose client declared `tasks.requests.elicitation.create`. Likewise `roots.listChanged`
// toward a 2026-07-28 upstream: that revision has no `notifications/roots/list_changed`, and the
// gateway forwards a client's only to its own upstream sessions of the initialize era
// (test/regressions/roots-outside-call.test.ts), so a 2026-07-28 upstream is not told one will come.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { everythingHttp, rawHttp } from '../helpers/servers.js';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type CallAnswer = { result?: { resultType?: string; content?: Array<{ text: string }> }; error?: unknown };

test('2026-07-28: a client declaring the Tasks extension gets the tool result, not a task the gateway cannot serve', async (t) => {
  const gw = await gateway(t, { upstreamUrl: await rawHttp(t, '--tasks') });
  const caps = { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} };

  const job = await post(gw.url, modernBody(1, 'tools/call', { name: 'job', arguments: {} }, caps), modernHeaders('tools/call', 'job'));
  assert.equal(job.status, 200);
  const answer = job.json as CallAnswer;
  assert.equal(answer.result?.resultType, 'complete');
  assert.deepEqual(answer.result?.content, [{ type: 'text', text: 'job done' }]);

  // What the upstream was told: the client's other capabilities, without the extension (X2 of
  // ext-tasks: a server may create a task only for a request that declares it).
  const seen = await post(gw.url, modernBody(2, 'tools/call', { name: 'capabilities', arguments: {} }, caps), modernHeaders('tools/call', 'capabilities'));
  assert.deepEqual(JSON.parse((seen.json as CallAnswer).result!.content![0].text), { elicitation: {} });

  // A 2025-11-25 client's `tasks` capability is no declaration of the extension, and is left out too.
  const v1 = new V1Client({ name: 'tasks-2025', version: '1' }, { capabilities: { tasks: { requests: { elicitation: { create: {} } } }, roots: {} } });
  await v1.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => v1.close());
  const legacy = await v1.callTool({ name: 'capabilities', arguments: {} });
  assert.deepEqual(JSON.parse((legacy.content as Array<{ text: string }>)[0].text), { roots: {} });
});

test('2025-11-25: a client declaring tasks does not open an upstream session that sends it task-augmented requests', async (t) => {
  const server = await everythingHttp(t, 'streamableHttp');
  const gw = await gateway(t, { upstreamUrl: server.url });
  const v1 = new V1Client(
    { name: 'tasks-2025', version: '1' },
    { capabilities: { elicitation: { form: {} }, tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } } },
  );
  await v1.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => v1.close());
  const names = (await v1.listTools()).tools.map((x) => x.name);
  // Its session is one with elicitation (the plain trigger is there) and without tasks.
  assert.ok(names.includes('trigger-elicitation-request'), names.join(', '));
  assert.ok(!names.includes('trigger-elicitation-request-async'), names.join(', '));
});

test('roots without listChanged toward a 2026-07-28 upstream: no notifications/roots/list_changed reaches one, so it is not told one will come', async (t) => {
  const gw = await gateway(t, { upstreamUrl: await rawHttp(t, '--tasks') });
  const caps = { roots: { listChanged: true }, sampling: {} };
  const seen = await post(gw.url, modernBody(1, 'tools/call', { name: 'capabilities', arguments: {} }, caps), modernHeaders('tools/call', 'capabilities'));
  assert.deepEqual(JSON.parse((seen.json as CallAnswer).result!.content![0].text), { roots: {}, sampling: {} });

  const v1 = new V1Client({ name: 'roots-2025', version: '1' }, { capabilities: { roots: { listChanged: true } } });
  await v1.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  t.after(() => v1.close());
  const legacy = await v1.callTool({ name: 'capabilities', arguments: {} });
  assert.deepEqual(JSON.parse((legacy.content as Array<{ text: string }>)[0].text), { roots: {} });
});
