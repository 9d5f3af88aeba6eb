// Named in the closing notes of the last round: requests and notifications inside a JSON array
// (a batch) from an upstream that does not speak 2025-03-26 were dropped at debug from a stdio
// child and without a word on HTTP (a Streamable HTTP POST stream, the HTTP+SSE stream), so an
// operator never learnt the upstream broke the rule. Every transport now logs one warn line per
// dropped message, `upstream batch dropped`, naming the upstream, the revision it speaks, the
// method and how many it dropped on that connection so far; the first 10 per connection one by
// one, then every 1,000th, by the limiter of `upstream sent a second response for one id`
// (docs/upstreams.md, "Batches from an upstream").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { httpSseStub, modernToolStub, sessionStub } from '../helpers/stub-http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const MSG = 'upstream batch dropped';
const progress = (token: unknown, n: number) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n } });

/** A 2026-07-28 tools/call of tool `name` through the gateway, with a progress token: its result's content. */
async function call(gw: TestGateway, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const body = modernBody(9, 'tools/call', { name, arguments: args, _meta: { progressToken: 'p' } });
  const r = await post(gw.url, body, modernHeaders('tools/call', name));
  return (r.json as { result?: { content?: unknown } }).result?.content;
}

/** `[level, upstream, revision, method, count]` of each `upstream batch dropped` line. */
const dropped = (gw: TestGateway) => gw.records.filter((r) => r.msg === MSG).map((r) => [r.level, r.upstream, r.revision, r.method, r.count]);
const line = (revision: string, count: number) => [40, 'default', revision, 'notifications/progress', count];

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
}

test('stdio, 2025-11-25: each notification of a dropped batch is said at warn, with the revision and the count', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" 2025-11-25` });
  assert.deepEqual(await call(gw, 'notes-batched'), text('after notes').content);
  assert.deepEqual(dropped(gw), [line('2025-11-25', 1), line('2025-11-25', 2)]);
});

test('stdio: a flood of batched notifications is said for the first 10, not line by line', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" 2025-11-25` });
  assert.deepEqual(await call(gw, 'notes-batched', { notes: 50 }), text('after notes').content);
  assert.deepEqual(
    dropped(gw),
    Array.from({ length: 10 }, (_, i) => line('2025-11-25', i + 1)),
  );
});

test('stdio, 2025-03-26: a batch of notifications is taken, and nothing is said', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}" 2025-03-26` });
  // The progress taken turns the answer into an SSE stream (upstream-batched-response.test.ts reads it).
  const r = await post(
    gw.url,
    modernBody(9, 'tools/call', { name: 'notes-batched', arguments: {}, _meta: { progressToken: 'p' } }),
    modernHeaders('tools/call', 'notes-batched'),
  );
  assert.equal(r.status, 200);
  assert.deepEqual(dropped(gw), []);
});

test('Streamable HTTP, 2025-06-18: a batch of notifications on a POST stream is said at warn', async (t) => {
  const url = await sessionStub(t, {
    name: 'batching',
    tool: 'notes',
    call: (id, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      res.write(`event: message\ndata: ${JSON.stringify([progress(id, 1), progress(id, 2)])}\n\n`);
      res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: text('after notes') })}\n\n`);
    },
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18' });
  assert.deepEqual(await call(gw, 'notes'), text('after notes').content);
  assert.deepEqual(dropped(gw), [line('2025-06-18', 1), line('2025-06-18', 2)]);
});

test('HTTP+SSE, 2024-11-05: a batch of notifications on the stream is said at warn', async (t) => {
  const url = await httpSseStub(t, 'sse-batching', (m, write, raw) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'notes', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') {
      raw(JSON.stringify([progress(m.id, 1), progress(m.id, 2)]));
      return write({ id: m.id, result: text('after notes') });
    }
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05' });
  assert.deepEqual(await call(gw, 'notes'), text('after notes').content);
  await until(() => dropped(gw).length >= 2);
  assert.deepEqual(dropped(gw), [line('2024-11-05', 1), line('2024-11-05', 2)]);
});

test('Streamable HTTP, 2026-07-28: a batch of notifications on a call answer stream is said at warn', async (t) => {
  const url = await modernToolStub(t, 'batching', 'notes', (id, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`event: message\ndata: ${JSON.stringify([progress(id, 1), progress(id, 2)])}\n\n`);
    res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { ...text('after notes'), resultType: 'complete' } })}\n\n`);
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2026-07-28' });
  assert.deepEqual(await call(gw, 'notes'), text('after notes').content);
  assert.deepEqual(dropped(gw), [line('2026-07-28', 1), line('2026-07-28', 2)]);
});
