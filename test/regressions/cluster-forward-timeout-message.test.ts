// Regression (found by a trial): SWY_ERR_CLUSTER_FORWARD_TIMEOUT said "The replica holding this
// stream did not answer in time", but it is also what a 2026-07-28 retry gets when the replica
// holding its call (`input_required`) does not answer, and what an HTTP+SSE message or a 2025
// answer forwarded to a session's replica gets. Its words now fit a session, a stream and a call.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { EVERYTHING_UPSTREAMS, everythingReplicaConfig, spawnReplica, startReplica } from '../helpers/replicas.js';

test('a retry for a call held by a hung replica (SIGSTOP): in-band FORWARD_TIMEOUT whose message names a call', { timeout: 60_000 }, async (t) => {
  const redis = await startRedis(t);
  const upstreams = EVERYTHING_UPSTREAMS;
  const configFile = everythingReplicaConfig(t, 'swy-forward-timeout-');
  const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
  // The resume forwarded to the holder waits the gateway's requestTimeoutMs (2 s here); the call's
  // own deadline is its mount's (10 s), so the forward's timeout is what the client gets.
  const r2 = await startReplica(t, {
    id: 'r2',
    redis: redis.url,
    config: { upstreams: { ev: { ...upstreams.ev, limits: { requestTimeoutMs: 10_000 } } }, limits: { requestTimeoutMs: 2_000 } },
  });

  const caps = { elicitation: {} };
  const name = 'trigger-elicitation-request';
  const first = await post(`${r1.origin}/ev/mcp`, modernBody(1, 'tools/call', { name, arguments: {} }, caps), modernHeaders('tools/call', name));
  assert.equal(first.status, 200, first.text);
  const round = (first.json as { result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> } }).result;
  assert.equal(round.resultType, 'input_required');
  const [key] = Object.keys(round.inputRequests);
  // Hung, not gone: it still listens on its Redis channel, so nothing says it left.
  r1.child.kill('SIGSTOP');

  const retry = await post(
    r2.url,
    modernBody(2, 'tools/call', { name, arguments: {}, requestState: round.requestState, inputResponses: { [key]: { action: 'decline' } } }, caps),
    modernHeaders('tools/call', name),
  );
  assert.equal(retry.status, 200, retry.text);
  assert.deepEqual(retry.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32000, message: 'The replica holding this session, stream or call did not answer in time: no answer from r1 within 2000 ms' },
  });
});
