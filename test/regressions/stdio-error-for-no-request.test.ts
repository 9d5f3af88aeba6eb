// Regression from a stdio-user trial (helper h-t4): a stdio child that answered with a JSON-RPC
// error whose id is null (it could not read a message of ours) was dropped without a word, and
// the call it concerned waited for its deadline (requestTimeoutMs, 300 s by default) with
// nothing in the log to say why. Such an error is now logged at warn with the child's error
// code and message (bounded: the first ten, then every 1000th, as invalid lines are).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/confused-server.mjs');

test('an error with id null from a stdio child is logged at warn', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${FIXTURE}"`, limits: { requestTimeoutMs: 1_000 } });
  const r = await post(gw.url, modernBody(1, 'tools/call', { name: 'x', arguments: {} }), modernHeaders('tools/call', 'x'));
  assert.equal((r.json as { error?: { message: string } }).error?.message, 'Request timed out: 1000 ms');
  const warned = gw.records.filter((x) => x.msg === 'upstream sent an error for no request');
  assert.equal(warned.length, 1, JSON.stringify(gw.records.map((x) => x.msg)));
  assert.equal(warned[0].level, 40);
  // The code and the start of the message (at most 200 characters), counted like invalid lines.
  assert.deepEqual([warned[0].code, warned[0].message, warned[0].count], [-32700, 'Parse error: unexpected token', 1]);
});
