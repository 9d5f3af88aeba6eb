// Regression from a stdio-user trial (helper h-t4): a stdio child that answered with a JSON-RPC
// error whose id is null (it could not read a message of ours) was dropped without a word, and
// the call it concerned waited for its deadline (requestTimeoutMs, 300 s by default) with
// nothing in the log to say why. Such an error is logged at warn with the child's error code
// and message (bounded: the first ten, then every 1000th, as invalid lines are). A review then
// found the call still waited for its deadline even when it was the only request in flight,
// where an HTTP upstream's id-null error answers its POST's request: with exactly one request
// unanswered, the error is now that request's answer; with several, nobody's (docs/upstreams.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT, type TestGateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/confused-server.mjs');

const call = (gw: TestGateway, id: number, name: string) =>
  post(gw.url, modernBody(id, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name));
const warnings = (gw: TestGateway) => gw.records.filter((x) => x.msg === 'upstream sent an error for no request');

test('an error with id null from a stdio child answers the one request in flight, and is logged at warn', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"`, limits: { requestTimeoutMs: 5_000 } });
  const r = await call(gw, 1, 'x');
  assert.equal(r.status, 200);
  // The child's own error, as it came (an HTTP upstream's id-null error reaches its client so too).
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 1, error: { code: -32700, message: 'Parse error: unexpected token' } });
  const warned = warnings(gw);
  assert.equal(warned.length, 1, JSON.stringify(gw.records.map((x) => x.msg)));
  assert.equal(warned[0].level, 40);
  // The code and the start of the message (at most 200 characters), counted like invalid lines.
  assert.deepEqual(
    [warned[0].code, warned[0].message, warned[0].count, warned[0].inFlight, warned[0].answered],
    [-32700, 'Parse error: unexpected token', 1, 1, 'tools/call'],
  );
});

test('with two requests in flight an error with id null answers neither: each gets its own answer or its deadline', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"`, limits: { requestTimeoutMs: 1_500 } });
  const hold = call(gw, 1, 'hold');
  // The child holds `hold` before `x` is sent, so that both are in flight when the error comes.
  while (!gw.records.some((x) => x.msg === 'upstream stderr' && x.line === 'holding')) await new Promise((r) => setTimeout(r, 10));
  const x = await call(gw, 2, 'x');
  assert.deepEqual((x.json as { error?: unknown }).error, { code: -32000, message: 'Request timed out: 1500 ms' });
  // `hold` got its own answer, not the error its neighbour caused.
  const held = (await hold).json as { id: number; result: { content: unknown } };
  assert.deepEqual([held.id, held.result.content], [1, [{ type: 'text', text: 'held' }]]);
  const warned = warnings(gw);
  assert.equal(warned.length, 1);
  assert.equal(warned[0].inFlight, 2);
  assert.equal('answered' in warned[0], false);
});

test("an error with id null to the gateway's own era probe answers it: the start does not wait out the probe", async (t) => {
  const gw = await gateway(t, {
    stdio: `"${process.execPath}" "${FIXTURE}" discover-null`,
    limits: { upstreamProbeTimeoutMs: 3_000, upstreamStartTimeoutMs: 12_000 },
  });
  assert.equal(
    gw.records.some((x) => x.msg === 'upstream did not answer server/discover'),
    false,
  );
  const warned = warnings(gw);
  assert.equal(warned.length, 1);
  assert.deepEqual([warned[0].inFlight, warned[0].answered], [1, 'server/discover']);
});
