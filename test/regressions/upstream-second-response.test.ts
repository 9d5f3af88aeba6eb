// Named in the closing notes of the last round: a second response for one id, from a stdio child
// or on an HTTP+SSE stream, was dropped without a word the operator could tell from anything else
// (a debug line, as a late answer to a cancelled call gets; or, in the same write as the first,
// nothing at all: the call was still in the table and took it into its finished queue). The
// client keeps the first; the operator now gets a warn line, `upstream sent a second response for
// one id`, naming the upstream, the id and the method, the first 10 per connection one by one and
// then every 1,000th, with the count. It is also counted in
// `switchyard_upstream_protocol_faults_total{kind="duplicate_response"}`
// (upstream-protocol-faults-metric.test.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { httpSseStub } from '../helpers/stub-http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
const MSG = 'upstream sent a second response for one id';

/** A 2026-07-28 tools/call of tool `name` through the gateway: the text of its result. */
async function call(gw: TestGateway, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const r = await post(gw.url, modernBody(9, 'tools/call', { name, arguments: args }), modernHeaders('tools/call', name));
  return (r.json as { result?: { content?: unknown } }).result?.content;
}

/** `[level, upstream, id, method, count]` of each warn line about a second response. */
const seconds = (gw: TestGateway) => gw.records.filter((r) => r.msg === MSG).map((r) => [r.level, r.upstream, r.id, r.method, r.count]);

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
}

test('stdio: a second response in the same write as the first: the client keeps the first, the operator is told', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"` });
  assert.deepEqual(await call(gw, 'twice'), text('first').content);
  await until(() => seconds(gw).length > 0);
  // Ids 1 to 3: server/discover, initialize, the tools/list read for the tool's annotations.
  assert.deepEqual(seconds(gw), [[40, 'default', 'n:4', 'tools/call', 1]]);
});

test('stdio: a second response 100 ms after the first is told too, not taken for a late answer', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"` });
  assert.deepEqual(await call(gw, 'twice-apart'), text('first').content);
  await until(() => seconds(gw).length > 0);
  assert.deepEqual(seconds(gw), [[40, 'default', 'n:4', 'tools/call', 1]]);
  assert.equal(gw.records.filter((r) => r.msg === 'upstream answer matches no request in flight').length, 0);
});

test('stdio: a flood of second responses is said for the first 10, not line by line', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"` });
  assert.deepEqual(await call(gw, 'twice', { more: 50 }), text('first').content);
  await until(() => seconds(gw).length >= 10);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(
    seconds(gw),
    Array.from({ length: 10 }, (_, i) => [40, 'default', 'n:4', 'tools/call', i + 1]),
  );
});

test('HTTP+SSE: a second response on the stream: the client keeps the first, the operator is told', async (t) => {
  const url = await httpSseStub(t, 'sse-twice', (m, write) => {
    if (m.method === 'tools/list') return write({ id: m.id, result: { tools: [{ name: 'twice', inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') {
      write({ id: m.id, result: text('first') });
      return void setTimeout(() => write({ id: m.id, result: text('second') }), 100);
    }
    if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2024-11-05' });
  assert.deepEqual(await call(gw, 'twice'), text('first').content);
  await until(() => seconds(gw).length > 0);
  // Our 1 was the tools/list read for the annotations.
  assert.deepEqual(seconds(gw), [[40, 'default', 'n:2', 'tools/call', 1]]);
});
