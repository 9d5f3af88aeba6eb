// Issue 13, target 3: a 5 MiB tool result through each era, from the embedded demo and from a
// stdio upstream (server-everything), arrives intact. The copies the gateway made of it were
// cut (docs/performance.md, "Big payloads"): the POST body is parsed from the chunks it arrived
// in, long strings are decoded in pieces and written out by them, large SSE events and stdin
// lines go out piece by piece as the connection drains. Its memory is measured in bench/ only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, openHttpSseSession, post, send } from '../helpers/http.js';

const MIB = 1024 * 1024;
const LIMITS = { ...DEFAULT_LIMITS, maxBodyBytes: 16 * MIB };
const ERAS = ['2026-07-28', '2025-03-26', '2024-11-05'] as const;

/**
 * 5 MiB of UTF-8 text (the bench's is ASCII): quotes, a reverse solidus and a newline JSON escapes,
 * characters of 2, 3 and 4 bytes, so that pieces are cut inside escapes and characters too.
 */
const MESSAGE = (() => {
  const unit = 'switchyard-payload "q" \\ é € 😀\n 0123456789 ';
  const text = unit.repeat(Math.ceil((5 * MIB) / Buffer.byteLength(unit)));
  return Buffer.from(text)
    .subarray(0, 5 * MIB)
    .toString('utf8')
    .replace(/\ufffd+$/, '');
})();

/** The echo's call through one era of the gateway at `url`; resolves with the answer's text. */
async function echo(t: { after(fn: () => void): void }, url: string, era: (typeof ERAS)[number]): Promise<unknown> {
  const params = { name: 'echo', arguments: { message: MESSAGE } };
  if (era === '2026-07-28') {
    const r = await post(url, modernBody(1, 'tools/call', params), modernHeaders('tools/call', 'echo'));
    assert.equal(r.status, 200, r.text.slice(0, 300));
    return (r.json as { result: { content: unknown } }).result.content;
  }
  if (era === '2025-03-26') {
    const h = await initSession(url, '2025-11-25');
    const r = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params }, { ...H2025, ...h });
    assert.equal(r.status, 200, r.text.slice(0, 300));
    return (r.json as { result: { content: unknown } }).result.content;
  }
  const { sse, to } = await openHttpSseSession(t, new URL(url).origin, {}, 'issue-13');
  assert.equal(
    (await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }), { 'content-type': 'application/json' })).status,
    202,
  );
  const ev = await sse.next(60_000);
  assert.equal(ev.event, 'message');
  const answer = JSON.parse(ev.data) as { id: number; result: { content: unknown } };
  assert.equal(answer.id, 3);
  return answer.result.content;
}

test('a 5 MiB echo through the demo arrives intact in every era', async (t) => {
  assert.ok(Buffer.byteLength(MESSAGE) > 5 * MIB - 4 && Buffer.byteLength(MESSAGE) <= 5 * MIB);
  const gw = await gateway(t, { limits: LIMITS, dialects: [...ERAS] });
  for (const era of ERAS) assert.deepEqual(await echo(t, gw.url, era), [{ type: 'text', text: `Echo: ${MESSAGE}` }], era);
});

test('a 5 MiB echo through a stdio upstream (server-everything) arrives intact in every era', async (t) => {
  const gw = await gateway(t, { limits: LIMITS, dialects: [...ERAS], stdio: everythingStdioCommand() });
  for (const era of ERAS) assert.deepEqual(await echo(t, gw.url, era), [{ type: 'text', text: `Echo: ${MESSAGE}` }], era);
});
