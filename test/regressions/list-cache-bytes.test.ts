// The list cache is bounded in bytes (`listCache.maxBytes`, 64 MiB by default), not only in
// entries. Found by hostile testing: its key holds the client's capabilities, which every client
// picks, and it was bounded by 10,000 entries alone, so one client that listed tools with a new
// `experimental` capability each time kept a copy of the list per request: 600 copies of a
// 567 KB page grew the gateway by 320 MB, and 10,000 would have kept some 5 GB. Now the least
// recently used lists go once the kept ones pass the byte bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { sessionStub } from '../helpers/stub-http.js';

/** A tools/list page of about 1 MiB: 1,000 tools with 1,000-character descriptions. */
const TOOLS = Array.from({ length: 1000 }, (_, i) => ({ name: `tool-${i}`, description: 'd'.repeat(1000), inputSchema: { type: 'object' } }));
/** Lists asked for with distinct capabilities: about 75 MiB in all, past the 64 MiB default. */
const LISTS = 70;

test('the list cache keeps at most listCache.maxBytes of lists: lists asked with new capabilities push the oldest out', async (t) => {
  let listed = 0;
  const url = await sessionStub(t, {
    name: 'big-lists',
    tool: 'tool-0',
    // listChanged: the gateway keeps its lists until told they changed (maxAgeMs), not for ttlMs.
    capabilities: { tools: { listChanged: true } },
    tools: () => (listed++, TOOLS),
    call: () => ({ content: [] }),
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18' });
  const list = async (n: number) => {
    const r = await post(gw.url, modernBody(n, 'tools/list', {}, { experimental: { n: { v: n } } }), modernHeaders('tools/list'));
    assert.equal(r.status, 200);
    assert.equal((r.json as { result: { tools: unknown[] } }).result.tools.length, TOOLS.length);
  };
  await list(0);
  await list(0);
  assert.equal(listed, 1, 'the second list came from the cache');
  for (let n = 1; n < LISTS; n++) await list(n);
  assert.equal(listed, LISTS);
  // The first list was the least recently used when the kept lists passed 64 MiB: it is gone.
  await list(0);
  assert.equal(listed, LISTS + 1, 'the first list was dropped and asked for again');
  // The latest is still kept.
  await list(LISTS - 1);
  assert.equal(listed, LISTS + 1, 'the latest list is still cached');
});
