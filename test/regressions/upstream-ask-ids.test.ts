// Found in review (2026-12-05): a call's open server requests were keyed by `String(id)`, so an
// upstream's requests 1 and "1" (different JSON-RPC ids) were one entry. The second replaced the
// first; the first's answer settled the entry and the second's was then dropped, so the upstream
// waited for it forever; a 2026-07-28 round named both `input-1`, and the client saw one. An id
// the upstream reused while its first request was still open replaced it the same way. Ids are
// now keyed by type and value (`idKey`), and a reused open id is refused at once (-32600,
// SWY_ERR_REQ_DUPLICATE_ID) while the first goes on.
// @see JSON-RPC 2.0 §4 (an id is a string or a number; "1" and 1 differ);
//   MCP 2025-11-25 basic#requests (an id MUST NOT be reused by the requestor in the same session)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, modernBody, modernHeaders, openSse, post } from '../helpers/http.js';

const ASKING = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs')}"`;
const IDS = [1, '1', 7, 7];

type Got = Array<{ id: unknown; ok?: true; code?: number }>;
const sorted = (got: Got) => got.map((g) => JSON.stringify(g)).sort();
/** What the upstream should get back: an answer for 1, "1" and the first 7, and -32600 for the second 7. */
const EXPECTED = sorted([
  { id: 1, ok: true },
  { id: '1', ok: true },
  { id: 7, ok: true },
  { id: 7, code: -32600 },
]);

test('2026-07-28 client: an upstream asking with ids 1, "1", 7, 7 gets a round of three and every request answered once', async (t) => {
  const gw = await gateway(t, { stdio: ASKING });
  const caps = { roots: {} };
  type Round = { resultType: string; inputRequests?: Record<string, { method: string }>; requestState?: string; content?: Array<{ text: string }> };
  const call = async (id: number, extra: Record<string, unknown>) => {
    const r = await post(
      gw.url,
      modernBody(id, 'tools/call', { name: 'ask-ids', arguments: { ids: IDS }, ...extra }, caps),
      modernHeaders('tools/call', 'ask-ids'),
    );
    assert.equal(r.status, 200, r.text);
    return (r.json as { result: Round }).result;
  };
  const round = await call(1, {});
  assert.equal(round.resultType, 'input_required');
  const keys = Object.keys(round.inputRequests ?? {});
  assert.equal(keys.length, 3, `one entry each for 1, "1" and 7: ${JSON.stringify(keys)}`);
  const done = await call(2, { inputResponses: Object.fromEntries(keys.map((k) => [k, { roots: [] }])), requestState: round.requestState });
  assert.equal(done.resultType, 'complete');
  assert.deepEqual(sorted(JSON.parse(done.content![0].text) as Got), EXPECTED);
});

test('2025-11-25 session: an upstream asking with ids 1, "1", 7, 7 has three requests sent to the client and every one answered once', async (t) => {
  const gw = await gateway(t, { stdio: ASKING });
  const h = await initSession(gw.url, '2025-11-25', { roots: {} });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask-ids', arguments: { ids: IDS } } });
  const sse = await openSse(gw.url, 'POST', h, body);
  const asked: unknown[] = [];
  let result: { content: Array<{ text: string }> } | undefined;
  try {
    while (!result) {
      const ev = await sse.next(10_000);
      if (!ev.data) continue;
      const m = JSON.parse(ev.data) as { id?: unknown; method?: string; result?: { content: Array<{ text: string }> } };
      if (m.method === 'roots/list') {
        asked.push(m.id);
        const r = await post(gw.url, { jsonrpc: '2.0', id: m.id, result: { roots: [] } }, h);
        assert.equal(r.status, 202, r.text);
      } else if (m.id === 1) result = m.result;
    }
  } finally {
    sse.close();
  }
  assert.equal(asked.length, 3, `the client is asked three times: ${JSON.stringify(asked)}`);
  assert.equal(new Set(asked.map((id) => JSON.stringify(id))).size, 3, 'with three different ids');
  assert.deepEqual(sorted(JSON.parse(result.content[0].text) as Got), EXPECTED);
});
