// Found by a trial (2026-12-04): server requests gathered into one input_required round had no
// bound (a child sending 5,000 roots/list made one round of about 5,000 entries, 314 KB). A round
// now carries at most MAX_INPUT_REQUESTS (32); the rest come in the next round.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const ASKING = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs')}"`;

test('40 roots/list from a legacy child reach a 2026-07-28 client as a round of 32, then a round of 8, then the result', async (t) => {
  const gw = await gateway(t, { stdio: ASKING });
  const caps = { roots: {} };
  type Round = { resultType: string; inputRequests?: Record<string, { method: string }>; requestState?: string; content?: unknown };
  const call = async (id: number, extra: Record<string, unknown>) => {
    const r = await post(gw.url, modernBody(id, 'tools/call', { name: 'ask', arguments: { count: 40 }, ...extra }, caps), modernHeaders('tools/call', 'ask'));
    assert.equal(r.status, 200, r.text);
    return (r.json as { result: Round }).result;
  };
  const sizes: number[] = [];
  let round = await call(1, {});
  for (let i = 2; round.resultType === 'input_required' && i < 10; i++) {
    const keys = Object.keys(round.inputRequests ?? {});
    sizes.push(keys.length);
    assert.ok(Object.values(round.inputRequests ?? {}).every((x) => x.method === 'roots/list'));
    const inputResponses = Object.fromEntries(keys.map((k) => [k, { roots: [] }]));
    round = await call(i, { inputResponses, requestState: round.requestState });
  }
  assert.deepEqual(sizes, [32, 8]);
  assert.deepEqual(round.content, [{ type: 'text', text: 'answered 40' }]);
});
