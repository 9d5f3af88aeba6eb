// Found by a trial (helper-27, 2026-12-05): a 2026-07-28 client's inputResponses were not checked,
// so `{"input-…": 42}` went to the upstream as the answer to its roots/list (or elicitation), and
// the held call was used up. InputResponses values are results, objects (2026-07-28 schema
// `InputResponses`: CreateMessageResult, ListRootsResult, ElicitResult): anything else is now
// -32602 before the held call is taken, so the same requestState still works once corrected.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const ASKING = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs')}"`;

test('inputResponses that are not an object of result objects are -32602, and the same requestState then works', async (t) => {
  const gw = await gateway(t, { stdio: ASKING });
  type Answer = {
    result?: { resultType: string; inputRequests?: Record<string, unknown>; requestState?: string; content?: unknown };
    error?: { code: number; message: string };
  };
  const call = async (id: number, extra: Record<string, unknown>) => {
    const r = await post(
      gw.url,
      modernBody(id, 'tools/call', { name: 'ask', arguments: { count: 1 }, ...extra }, { roots: {} }),
      modernHeaders('tools/call', 'ask'),
    );
    return r.json as Answer;
  };
  const round = (await call(1, {})).result!;
  assert.equal(round.resultType, 'input_required');
  const [key] = Object.keys(round.inputRequests ?? {});
  for (const inputResponses of [{ [key]: 42 }, { [key]: null }, { [key]: [] }, 'x', [{ roots: [] }]]) {
    const bad = await call(2, { inputResponses, requestState: round.requestState });
    assert.equal(bad.error?.code, -32602, JSON.stringify({ inputResponses, bad }));
    assert.match(bad.error?.message ?? '', /inputResponses/);
  }
  const done = await call(3, { inputResponses: { [key]: { roots: [] } }, requestState: round.requestState });
  assert.deepEqual(done.result?.content, [{ type: 'text', text: 'answered 1' }]);
});
