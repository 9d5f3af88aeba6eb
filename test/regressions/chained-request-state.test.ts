// Found by h-trial4: a gateway in front of another Switchyard spoken to in 2026-07-28 took the
// upstream's requestState (swy1.…, the same prefix as its own) for one of its own held calls,
// failed to verify it under its own key, and refused the retry with -32602 'requestState is
// unknown…': every input_required round of the upstream gateway (a legacy child's server
// requests) failed for a 2026-07-28 client and for the gateway's own 2025 shim. A state whose
// MAC or seal is not this gateway's now passes through to the upstream that made it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const ASKING = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs')}"`;

test("a 2026-07-28 retry carrying the upstream Switchyard's requestState reaches that upstream and completes", async (t) => {
  const inner = await gateway(t, { stdio: ASKING });
  const outer = await gateway(t, { upstreamUrl: inner.url, upstreamEra: '2026-07-28' });
  const caps = { roots: {} };
  type Round = { resultType?: string; inputRequests?: Record<string, { method: string }>; requestState?: string; content?: unknown };
  const call = async (id: number, extra: Record<string, unknown>) => {
    const r = await post(outer.url, modernBody(id, 'tools/call', { name: 'ask', arguments: { count: 1 }, ...extra }, caps), modernHeaders('tools/call', 'ask'));
    assert.equal(r.status, 200, r.text);
    return r.json as { result?: Round; error?: unknown };
  };
  const first = await call(1, {});
  assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
  const keys = Object.keys(first.result?.inputRequests ?? {});
  assert.equal(keys.length, 1);
  const second = await call(2, { inputResponses: { [keys[0]]: { roots: [] } }, requestState: first.result?.requestState });
  assert.deepEqual(second.result?.content, [{ type: 'text', text: 'answered 1' }], JSON.stringify(second));
});
