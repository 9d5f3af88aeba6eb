// Named in the closing notes of the last round: `unknown_id` in
// `switchyard_upstream_protocol_faults_total` was tested on a stdio child only. Here a Streamable
// HTTP (2025) upstream and an HTTP+SSE (2024-11-05) one answer a call with a response whose id the
// gateway never sent before the call's own: it is counted once under its upstream, and the call
// gets its own answer. Also reported by a helper: a second reply to the gateway's own
// `initialize` counted as `unknown_id`, though the gateway sent that id; it is a second response
// for one id (`duplicate_response`), as for any request (docs/upstreams.md, "Second responses").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { faultsGateway } from '../helpers/ops.js';
import { httpSseStub, sessionStub } from '../helpers/stub-http.js';

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

/** A 2026-07-28 tools/call of `name` through the gateway: the result's content. */
async function call(url: string, name: string): Promise<unknown> {
  const r = await post(url, modernBody(9, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name));
  return (r.json as { result?: { content?: unknown } }).result?.content ?? r.json;
}

/** A GET stream refused 405 (the server offers none), so the test sees only the POSTs. */
const noGet = (req: http.IncomingMessage, res: http.ServerResponse) => (req.method === 'GET' ? (res.writeHead(405).end(), true) : false);

test('Streamable HTTP: a response to an id never sent, on a call’s SSE answer, is counted as unknown_id; the call gets its own answer', async (t) => {
  const url = await sessionStub(t, {
    name: 'stray',
    tool: 'stray',
    before: noGet,
    call: (id, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 'never-sent', result: text('impostor') })}\n\n`);
      return res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: text('own') })}\n\n`);
    },
  });
  const { gw, faults, counted } = await faultsGateway(t, { url, era: '2025-06-18' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'stray'), text('own').content);
  assert.deepEqual(await counted(), [['up', 'unknown_id', 1]]);
});

test('HTTP+SSE: a response to an id never sent, on the stream, is counted as unknown_id; the call gets its own answer', async (t) => {
  const url = await httpSseStub(t, 'sse-stray', (m, write) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'stray', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') {
      write({ id: 'never-sent', result: text('impostor') });
      return write({ id: m.id, result: text('own') });
    }
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const { gw, faults, counted } = await faultsGateway(t, { url, transport: 'sse' });
  assert.deepEqual(await faults(), []);
  assert.deepEqual(await call(gw.url, 'stray'), text('own').content);
  assert.deepEqual(await counted(), [['up', 'unknown_id', 1]]);
});

test('HTTP+SSE: a second reply to the gateway’s own initialize is a duplicate_response, not an unknown_id', async (t) => {
  const hello = { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'sse-twice-init', version: '1.0.0' } };
  const url = await httpSseStub(
    t,
    'sse-twice-init',
    (m, write) => {
      if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'x', inputSchema: { type: 'object' } }] } });
      if (m.method === 'tools/call') return write({ id: m.id, result: text('own') });
      if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    },
    {
      initialize: (m, write) => {
        write({ id: m.id, result: hello });
        setTimeout(() => write({ id: m.id, result: hello }), 100);
      },
    },
  );
  const { gw, counted } = await faultsGateway(t, { url, transport: 'sse' });
  // A call opens a client's upstream session (per-session): two sessions answered twice each.
  assert.deepEqual(await call(gw.url, 'x'), text('own').content);
  let f = await counted();
  for (let i = 0; i < 250 && Number(f[0]?.[2] ?? 0) < 2; i++) {
    await new Promise((r) => setTimeout(r, 20));
    f = await counted();
  }
  assert.deepEqual(f, [['up', 'duplicate_response', 2]]);
  const said = gw.records.filter((r) => r.msg === 'upstream sent a second response for one id').map((r) => [r.level, r.upstream, r.id, r.method]);
  assert.deepEqual(said, [
    [40, 'up', 's:init', 'initialize'],
    [40, 'up', 's:init', 'initialize'],
  ]);
});

test('Streamable HTTP: the initialize reply repeated on the session’s GET stream is a duplicate_response, not an unknown_id', async (t) => {
  const hello = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'get-twice-init', version: '1' } };
  let gets = 0;
  const url = await sessionStub(t, {
    name: 'get-twice-init',
    tool: 'x',
    // The first GET stream repeats its session's initialize reply (id 0) once; any other stays open, silent.
    before: (req, res) => {
      if (req.method !== 'GET') return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (++gets === 1) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 0, result: hello })}\n\n`);
      return true;
    },
    call: () => text('own'),
  });
  const { gw, counted } = await faultsGateway(t, { url, era: '2025-06-18' });
  assert.deepEqual(await call(gw.url, 'x'), text('own').content);
  assert.deepEqual(await counted(), [['up', 'duplicate_response', 1]]);
  const said = gw.records.filter((r) => r.msg === 'upstream sent a second response for one id').map((r) => [r.level, r.upstream, r.id, r.method]);
  assert.deepEqual(said, [[40, 'up', 'n:0', 'initialize']]);
});
