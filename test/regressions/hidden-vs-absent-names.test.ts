// On a non-demo upstream a caller could tell a hidden name from an absent one: curation (and a
// policy's hideDenied) answer the gateway's unknown-name error, while server-everything answered
// an absent tool with an `isError` result (`MCP error -32602: Tool nope not found`), an absent
// prompt with -32602 `MCP error -32602: Prompt nope not found` and an absent resource with -32602
// `MCP error -32602: Resource … not found`, where docs/policy.md promises the same answer. Found by
// calling both through the gateway, over stdio and HTTP, and comparing the JSON-RPC errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { initSession, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';
import { everythingHttp } from '../helpers/servers.js';

const require = createRequire(import.meta.url);
const ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const DOC = 'demo://resource/static/document/';

test('a hidden and an absent tool, prompt or resource get the same JSON-RPC error, byte for byte but the name, over stdio and HTTP upstreams', async (t) => {
  const http = await everythingHttp(t, 'streamableHttp');
  const curation = { tools: { exclude: ['echo'] }, prompts: { exclude: ['simple-prompt'] }, resources: { exclude: [`${DOC}architecture.md`] } };
  const gw = await configGateway(t, {
    upstreams: { st: { command: process.execPath, args: [ENTRY, 'stdio'], ...curation }, ht: { url: http.url, ...curation } },
  });
  for (const mount of ['st', 'ht']) {
    const url = gw.mounts.find((m) => m.name === mount)!.url;
    const headers = await initSession(url);
    const text = async (method: string, params: Record<string, unknown>) => (await post(url, { jsonrpc: '2.0', id: 1, method, params }, headers)).text;
    const pairs: Array<[string, string, string, (name: string) => Record<string, unknown>]> = [
      ['tools/call', 'echo', 'nope', (name) => ({ name, arguments: { message: 'x' } })],
      ['prompts/get', 'simple-prompt', 'nope-prompt', (name) => ({ name, arguments: {} })],
      ['resources/read', `${DOC}architecture.md`, `${DOC}nope.md`, (uri) => ({ uri })],
      ['resources/read', `${DOC}architecture.md`, 'nope://x', (uri) => ({ uri })],
    ];
    for (const [method, hidden, absent, params] of pairs) {
      const h = await text(method, params(hidden));
      const a = await text(method, params(absent));
      assert.equal(a.replaceAll(absent, 'NAME'), h.replaceAll(hidden, 'NAME'), `${mount} ${method}: ${h} / ${a}`);
      assert.match(h, /"error":/);
    }
    assert.deepEqual(JSON.parse(await text('tools/call', { name: 'nope', arguments: {} })), {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'Invalid params: unknown tool: nope' },
    });
    // What the upstream has keeps its own answers: a prompt called without its required argument.
    const missing = JSON.parse(await text('prompts/get', { name: 'args-prompt', arguments: {} })) as { error: { code: number; message: string } };
    assert.equal(missing.error.code, -32602);
    assert.doesNotMatch(missing.error.message, /unknown prompt/);
    // And a visible tool still answers.
    assert.deepEqual(JSON.parse(await text('tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 } })), {
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'The sum of 1 and 2 is 3.' }] },
    });
  }
});

test('with hideDenied, a denied tool and an absent one get the same JSON-RPC error, byte for byte but the name', async (t) => {
  const policy = {
    default: 'allow',
    hideDenied: true,
    rules: [{ name: 'no-echo', effect: 'deny', when: 'component.kind == "tool" && component.name == "echo"' }],
  };
  const gw = await configGateway(t, { upstreams: { st: { command: process.execPath, args: [ENTRY, 'stdio'], policy } } });
  const headers = await initSession(gw.url);
  const text = async (name: string) =>
    (await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { message: 'x' } } }, headers)).text;
  const denied = await text('echo');
  assert.equal((await text('nope')).replaceAll('nope', 'NAME'), denied.replaceAll('echo', 'NAME'));
  assert.deepEqual(JSON.parse(denied), { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params: unknown tool: echo' } });
});
