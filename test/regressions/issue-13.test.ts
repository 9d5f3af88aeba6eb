// Issue 13, target 3: a 5 MiB tool result through each era, from the embedded demo and from a
// stdio upstream (server-everything), arrives intact. The copies the gateway made of it were
// cut (docs/performance.md, "Big payloads"): the POST body is parsed from the chunks it arrived
// in, long strings are decoded in pieces and written out by them, large SSE events and stdin
// lines go out piece by piece as the connection drains. The whole copies of it the gateway
// allocates are counted here (V8's sampling heap profiler); its memory is measured in bench/ only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector/promises';
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

/** A node of a sampling heap profile (the protocol's shape; @types/node leaves out `id` and `samples`). */
interface SampledNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children: SampledNode[];
}

/** A sampling heap profile: the call tree and one entry per sampled object (its size, bytes). */
interface SampledProfile {
  head: SampledNode;
  samples: Array<{ size: number; nodeId: number }>;
}

/**
 * The strings of at least `minUnits` UTF-16 units that this process's gateway code allocated
 * while `work` ran, by V8's sampling heap profiler (a sample every 64 KiB on average, collected
 * objects kept, so an object of a mebibyte is missed with a probability of about e^-16): for
 * each, the innermost function of ours (src/ or dialects/) on its allocation stack. The
 * test client's own copies (its body, the answer's text and parse) have no such frame.
 * @see Chrome DevTools Protocol HeapProfiler.startSampling, SamplingHeapProfileSample.size
 */
async function largeAllocations(minUnits: number, work: () => Promise<unknown>): Promise<string[]> {
  const session = new Session();
  session.connect();
  let profile: SampledProfile;
  try {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 64 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    try {
      await work();
    } finally {
      profile = (await session.post('HeapProfiler.stopSampling')).profile as unknown as SampledProfile;
    }
  } finally {
    session.disconnect();
  }
  const parent = new Map<number, SampledNode>();
  const byId = new Map<number, SampledNode>();
  const walk = (n: SampledNode) => {
    byId.set(n.id, n);
    for (const c of n.children) {
      parent.set(c.id, n);
      walk(c);
    }
  };
  walk(profile.head);
  // Our code: the src/ and dialects/ beside this test's own tree (dist/ when built).
  const ours = [new URL('../../src/', import.meta.url).href, new URL('../../dialects/', import.meta.url).href];
  const found: string[] = [];
  for (const s of profile.samples) {
    // A string of n units takes at least n bytes (one-byte) or 2n (two-byte).
    if (s.size < minUnits) continue;
    for (let n = byId.get(s.nodeId); n !== undefined; n = parent.get(n.id)) {
      if (ours.some((root) => n.callFrame.url.startsWith(root))) {
        found.push(n.callFrame.functionName);
        break;
      }
    }
  }
  return found;
}

test('through a stdio upstream the gateway makes one whole copy of a 5 MiB echo per call in every era: the child answer made flat', async (t) => {
  const gw = await gateway(t, { limits: LIMITS, dialects: [...ERAS], stdio: everythingStdioCommand() });
  for (const era of ERAS) {
    // The first call of an era compiles its path; the one measured runs as a warm gateway does.
    await echo(t, gw.url, era);
    let content: unknown;
    const copies = await largeAllocations(MESSAGE.length, async () => (content = await echo(t, gw.url, era)));
    assert.deepEqual(content, [{ type: 'text', text: `Echo: ${MESSAGE}` }], era);
    // The request's long string is its decoded pieces (never flattened: it goes to the child by
    // them), the answer's is joined once (json-bytes.ts `flat`) and written out in slices of it.
    assert.deepEqual(copies, ['parseJsonBytes'], era);
  }
});
