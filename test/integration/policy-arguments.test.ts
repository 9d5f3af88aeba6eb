// Argument validation against the tool's advertised inputSchema: over the real embedded demo,
// and over a real MCP server in a child process (official SDK 1.x) whose tools carry a remote
// $ref, a draft-07 schema and the spec's own x-mcp-header annotation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { PeerRpcError, SwitchyardError, toRpcError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { compose, type Dispatch, type Interceptor } from '../../src/core/interceptor.js';
import type { JsonObject } from '../../src/core/message.js';
import type { RequestContext } from '../../src/core/request.js';
import { createDemoUpstream } from '../../src/upstreams/demo/index.js';
import { VERSION } from '../../src/version.js';
import { createArgumentValidator } from '../../src/policy/index.js';
import { recordingLog } from '../helpers/identity.js';
import { demoContext } from '../helpers/request-context.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bob: Identity = { issuer: 'https://issuer.test', subject: 'bob', scopes: [], claims: {}, source: 'jwt' };

/** A context as the executor builds it for one upstream call (test/helpers/request-context.ts). */
function ctxOf(method: string, params: JsonObject, upstream = 'demo', signal = new AbortController().signal): RequestContext {
  return demoContext(method, params, { identity: bob, upstream, signal, clientInfo: { name: 'policy-test', version: '1.0.0' } });
}

/** Records what reaches the upstream (placed inside the validator). */
function recorder(): { seen: Array<{ method: string; params: JsonObject }>; intercept: Interceptor } {
  const seen: Array<{ method: string; params: JsonObject }> = [];
  return {
    seen,
    intercept: (next) => (ctx) => {
      seen.push({ method: ctx.method, params: ctx.params });
      return next(ctx);
    },
  };
}

async function demoDispatch(): Promise<Dispatch> {
  const demo = createDemoUpstream({ version: VERSION });
  await demo.start();
  return (ctx) => demo.request(ctx);
}

async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof Error, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

test('a failure is -32602 naming the JSON Pointer and the keyword; no coercion, no defaults, extra properties kept', async () => {
  const { log } = recordingLog();
  const { seen, intercept } = recorder();
  const chain = compose(await demoDispatch(), [intercept, createArgumentValidator({ log, maxSchemas: 16 })]);

  const err = await errorOf(chain(ctxOf('tools/call', { name: 'add', arguments: { a: '2', b: 3 } })));
  assert.ok(err instanceof SwitchyardError);
  assert.equal(err.code, 'SWY_ERR_POLICY_ARGUMENTS');
  assert.equal(err.status, 200);
  assert.deepEqual(toRpcError(err), {
    code: -32602,
    message: "Invalid params: arguments do not match the tool's inputSchema: add: /a must be number (keyword type)",
    data: { tool: 'add', instancePath: '/a', keyword: 'type', schemaPath: '#/properties/a/type', params: { type: 'number' } },
  });
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'add', arguments: { a: 2 } })))), {
    code: -32602,
    message: "Invalid params: arguments do not match the tool's inputSchema: add: (root) must have required property 'b' (keyword required)",
    data: { tool: 'add', instancePath: '', keyword: 'required', schemaPath: '#/required', params: { missingProperty: 'b' } },
  });
  // `steps` is an integer: a string is not coerced.
  assert.equal((toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'slow', arguments: { steps: '1' } })))).data as JsonObject).instancePath, '/steps');
  // Absent arguments are checked as {}.
  assert.equal((toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'echo' })))).data as JsonObject).keyword, 'required');

  assert.deepEqual(await chain(ctxOf('tools/call', { name: 'add', arguments: { a: 1, b: 2, note: 'extra' } })), {
    content: [{ type: 'text', text: '3' }],
    structuredContent: { sum: 3 },
  });
  assert.deepEqual(await chain(ctxOf('tools/call', { name: 'slow', arguments: { stepMs: 0 } })), { content: [{ type: 'text', text: 'Finished 5 steps.' }] });
  // One tools/list (first call), then only the valid calls reached the upstream, unchanged (no `steps` default inserted).
  assert.deepEqual(seen, [
    { method: 'tools/list', params: {} },
    { method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2, note: 'extra' } } },
    { method: 'tools/call', params: { name: 'slow', arguments: { stepMs: 0 } } },
  ]);
});

test('the tool list is cached per upstream: read once for concurrent calls, again after invalidate or the TTL', async () => {
  const { log } = recordingLog();
  const { seen, intercept } = recorder();
  let nowMs = 0;
  const validator = createArgumentValidator({ log, maxSchemas: 16, listTtlMs: 1_000, now: () => nowMs });
  const chain = compose(await demoDispatch(), [intercept, validator]);
  const call = () => chain(ctxOf('tools/call', { name: 'echo', arguments: { message: 'x' } }));
  const lists = () => seen.filter((s) => s.method === 'tools/list').length;

  await Promise.all([call(), call(), call()]);
  assert.equal(lists(), 1);
  await call();
  assert.equal(lists(), 1);
  validator.invalidate('demo');
  await call();
  assert.equal(lists(), 2);
  nowMs = 999;
  await call();
  assert.equal(lists(), 2);
  nowMs = 1_000;
  await call();
  assert.equal(lists(), 3);
});

test('validateArguments: false for an upstream lets its calls through unchecked', async () => {
  const { log } = recordingLog();
  const { seen, intercept } = recorder();
  const chain = compose(await demoDispatch(), [intercept, createArgumentValidator({ log, maxSchemas: 16, upstreams: { demo: { validateArguments: false } } })]);
  // The demo's own check answers instead.
  assert.deepEqual(toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'add', arguments: { a: '2', b: 3 } })))), {
    code: -32602,
    message: 'Invalid params: add needs numbers "a" and "b"',
  });
  assert.deepEqual(seen, [{ method: 'tools/call', params: { name: 'add', arguments: { a: '2', b: 3 } } }]);
});

test('a bounded validator cache recompiles what it evicted', async () => {
  const { log } = recordingLog();
  const chain = compose(await demoDispatch(), [createArgumentValidator({ log, maxSchemas: 1 })]);
  for (let round = 0; round < 2; round++) {
    assert.equal((toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'add', arguments: { a: 1 } })))).data as JsonObject).schemaPath, '#/required');
    assert.equal(
      (toRpcError(await errorOf(chain(ctxOf('tools/call', { name: 'echo', arguments: { message: 1 } })))).data as JsonObject).instancePath,
      '/message',
    );
  }
});

// A real MCP server (official SDK 1.x, low-level Server) in a child process; tools/call echoes its
// arguments, and `break-list` makes tools/list fail (or work again).
const SERVER = `
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
const tools = [
  { name: 'remote', inputSchema: { type: 'object', properties: { x: { $ref: 'https://schemas.example.invalid/x.json' } } } },
  { name: 'legacy', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } },
  { name: 'annotated', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } }, required: ['region'] } },
  { name: 'ancient', inputSchema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } },
  { name: 'break-list', inputSchema: { type: 'object', properties: { broken: { type: 'boolean' } }, required: ['broken'] } },
];
let listBroken = false;
const server = new Server({ name: 'schema-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => {
  if (listBroken) throw new Error('list broken');
  return { tools };
});
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (!tools.some((t) => t.name === req.params.name)) throw new McpError(-32602, 'Unknown tool: ' + req.params.name);
  if (req.params.name === 'break-list') listBroken = req.params.arguments.broken;
  return { content: [{ type: 'text', text: JSON.stringify(req.params.arguments ?? {}) }] };
});
await server.connect(new StdioServerTransport());
`;

async function sdkServer(t: { after(fn: () => Promise<void>): void }): Promise<Dispatch> {
  const client = new Client({ name: 'policy-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--input-type=module', '-e', SERVER], cwd: REPO_ROOT, stderr: 'ignore' }));
  t.after(() => client.close());
  return async (ctx) => {
    try {
      return await client.request({ method: ctx.method, params: ctx.params }, ResultSchema, { signal: ctx.signal });
    } catch (err) {
      if (err instanceof McpError) throw new PeerRpcError({ code: err.code, message: err.message, data: err.data });
      throw err;
    }
  };
}

test('schemas from a real server: a remote $ref passes unvalidated with one warning; draft-07 and x-mcp-header are honoured', async (t) => {
  const { log, records } = recordingLog();
  const chain = compose(await sdkServer(t), [createArgumentValidator({ log, maxSchemas: 16 })]);
  const call = (name: string, args: JsonObject) => chain(ctxOf('tools/call', { name, arguments: args }, 'sdk'));
  const echoed = (args: JsonObject) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] });

  assert.deepEqual(await call('remote', { x: 1 }), echoed({ x: 1 }));
  assert.deepEqual(await call('remote', { x: 'anything' }), echoed({ x: 'anything' }));
  assert.deepEqual(await call('ancient', { y: 1 }), echoed({ y: 1 }));
  assert.deepEqual(await call('ancient', { y: 2 }), echoed({ y: 2 }));
  assert.deepEqual(
    records.filter((r) => r.msg === 'tool inputSchema not usable; arguments pass unvalidated'),
    [
      {
        level: 40,
        upstream: 'sdk',
        tool: 'remote',
        error: "can't resolve reference https://schemas.example.invalid/x.json from id #",
        msg: 'tool inputSchema not usable; arguments pass unvalidated',
      },
      {
        level: 40,
        upstream: 'sdk',
        tool: 'ancient',
        error: 'unsupported $schema "http://json-schema.org/draft-04/schema#"',
        msg: 'tool inputSchema not usable; arguments pass unvalidated',
      },
    ],
  );

  assert.deepEqual(await call('legacy', { n: 3 }), echoed({ n: 3 }));
  assert.deepEqual((toRpcError(await errorOf(call('legacy', { n: 1.5 }))).data as JsonObject).instancePath, '/n');
  assert.deepEqual(toRpcError(await errorOf(call('legacy', { n: 1, extra: true }))), {
    code: -32602,
    message: "Invalid params: arguments do not match the tool's inputSchema: legacy: (root) must NOT have additional properties (keyword additionalProperties)",
    data: { tool: 'legacy', instancePath: '', keyword: 'additionalProperties', schemaPath: '#/additionalProperties', params: { additionalProperty: 'extra' } },
  });
  assert.deepEqual(await call('annotated', { region: 'eu' }), echoed({ region: 'eu' }));
  assert.equal((toRpcError(await errorOf(call('annotated', { region: 5 }))).data as JsonObject).keyword, 'type');
  // An unknown tool is the upstream's to answer.
  const unknown = await errorOf(call('nope', {}));
  assert.ok(unknown instanceof PeerRpcError);
  assert.deepEqual(unknown.rpc, { code: -32602, message: 'MCP error -32602: MCP error -32602: Unknown tool: nope', data: undefined });
});

test('a tool list that cannot be read lets calls through with one warning, until it can be read; a cancelled call is not let through', async (t) => {
  const { log, records } = recordingLog();
  // TTL 0: every call reads the list again.
  const chain = compose(await sdkServer(t), [createArgumentValidator({ log, maxSchemas: 16, listTtlMs: 0 })]);
  const call = (name: string, args: JsonObject, signal?: AbortSignal) => chain(ctxOf('tools/call', { name, arguments: args }, 'sdk', signal));
  const echoed = (args: JsonObject) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] });

  assert.deepEqual(await call('break-list', { broken: true }), echoed({ broken: true }));
  assert.deepEqual(await call('legacy', { n: 1.5 }), echoed({ n: 1.5 }));
  assert.deepEqual(await call('legacy', { n: 2.5 }), echoed({ n: 2.5 }));
  const ac = new AbortController();
  ac.abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
  await assert.rejects(call('legacy', { n: 3.5 }, ac.signal));
  assert.deepEqual(await call('break-list', { broken: false }), echoed({ broken: false }));
  assert.equal((toRpcError(await errorOf(call('legacy', { n: 1.5 }))).data as JsonObject).keyword, 'type');
  assert.deepEqual(
    records.filter((r) => r.level === 40),
    [{ level: 40, upstream: 'sdk', error: 'MCP error -32603: list broken', msg: 'tool list for argument validation failed; arguments pass unvalidated' }],
  );
});
