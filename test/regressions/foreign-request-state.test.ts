// Named in the closing notes of the last round: a 2026-07-28 `requestState` with Switchyard's own
// prefix that does not open here (forged, altered, or sealed under another key) goes on to the
// upstream, on purpose (a Switchyard upstream's states carry the same prefix), and before an
// upstream of an earlier era the call runs as a fresh one. Written down in docs/security.md
// ("Held calls"); this pins what it means: such a state starts a new call (a new round, a new
// state), while a state of ours is taken once and a replay of it is refused -32602, never run fresh.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const ASKING = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/asking-server.mjs')}"`;
type Round = { resultType?: string; inputRequests?: Record<string, unknown>; requestState?: string; content?: unknown };

test('a swy1./swy2. requestState this gateway did not make runs as a fresh call on a legacy upstream; a replayed state of ours is refused', async (t) => {
  const gw = await gateway(t, { stdio: ASKING });
  const call = async (id: number, extra: Record<string, unknown>) => {
    const r = await post(
      gw.url,
      modernBody(id, 'tools/call', { name: 'ask', arguments: { count: 1 }, ...extra }, { roots: {} }),
      modernHeaders('tools/call', 'ask'),
    );
    assert.equal(r.status, 200, r.text);
    return r.json as { result?: Round; error?: { code: number; message: string } };
  };
  /** A round: its requestState and the inputResponses that answer it. */
  const roundOf = (r: { result?: Round }) => {
    assert.equal(r.result?.resultType, 'input_required', JSON.stringify(r));
    const [key] = Object.keys(r.result?.inputRequests ?? {});
    return { state: r.result.requestState!, answers: { [key]: { roots: [] } } };
  };
  const first = roundOf(await call(1, {}));
  assert.match(first.state, /^swy1\./);
  assert.deepEqual((await call(2, { requestState: first.state, inputResponses: first.answers })).result?.content, [{ type: 'text', text: 'answered 1' }]);
  // Replayed: ours, already used: refused, not run again.
  assert.deepEqual((await call(3, { requestState: first.state, inputResponses: first.answers })).error, {
    code: -32602,
    message: 'Invalid params: requestState is unknown, expired, or bound to another request',
  });
  // Not made here: the same body under a wrong MAC, and a sealed-looking state this gateway (no cluster) cannot open.
  const altered = `${first.state.slice(0, first.state.lastIndexOf('.'))}.${'A'.repeat(43)}`;
  for (const [i, state] of [altered, `swy2.v1.${first.state.slice(5)}`].entries()) {
    const fresh = roundOf(await call(10 + i, { requestState: state, inputResponses: first.answers }));
    // A new round of a new call, under a state of its own.
    assert.match(fresh.state, /^swy1\./);
    assert.notEqual(fresh.state, first.state);
    assert.deepEqual((await call(20 + i, { requestState: fresh.state, inputResponses: fresh.answers })).result?.content, [
      { type: 'text', text: 'answered 1' },
    ]);
  }
});
