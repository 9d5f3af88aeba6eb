// Regressions, both about forwards between replicas:
// - (found by a trial) SWY_ERR_CLUSTER_FORWARD_TIMEOUT said "The replica holding this stream did
//   not answer in time", but it is also what an HTTP+SSE message or a 2025 answer forwarded to a
//   session's replica gets, and a 2026-07-28 retry for a call held elsewhere. Its words now fit a
//   session, a stream and a call.
// - (found reading the code) a 2026-07-28 retry resumed on the replica holding its call waited the
//   gateway-wide `limits.requestTimeoutMs` for the answer, and the holder ran the call under that
//   bound too, not the mount's own: a mount allowed 10 s got FORWARD_TIMEOUT after the top-level
//   2 s. Both ends now use the mount's `requestTimeoutMs`, as the mount's executor does locally.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernBody, modernHeaders, openHttpSseSession, post, send } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { EVERYTHING_UPSTREAMS, everythingReplicaConfig, spawnReplica, startReplica, holdElicitationCall } from '../helpers/replicas.js';

test(
  'an HTTP+SSE message forwarded to a hung stream replica (SIGSTOP): 504 FORWARD_TIMEOUT whose message names a session, stream or call',
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const configFile = everythingReplicaConfig(t, 'swy-forward-timeout-', { legacySse: true });
    const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
    const r2 = await startReplica(t, { id: 'r2', redis: redis.url, config: { upstreams: EVERYTHING_UPSTREAMS } });
    const session = await openHttpSseSession(t, `${r1.origin}/ev`);
    // Hung, not gone: it still listens on its Redis channel, so nothing says it left.
    r1.child.kill('SIGSTOP');
    t.after(() => void r1.child.kill('SIGCONT'));
    const elsewhere = session.to.replace(r1.origin, r2.origin);
    const started = Date.now();
    const r = await send(elsewhere, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { 'content-type': 'application/json' });
    assert.equal(r.status, 504, r.text);
    // Like every refusal of an HTTP+SSE POST before its session: the request's id, readable here
    // (JSON-RPC 2.0 §5; test/regressions/sse-messages-refusal-id.test.ts).
    assert.deepEqual(JSON.parse(r.text), {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, message: 'The replica holding this session, stream or call did not answer in time: no answer from r1 within 5000 ms' },
    });
    assert.ok(Date.now() - started >= 4_900, 'after the bus forward timeout (5 s)');
  },
);

test(
  "a retry for a call held by a replica that pauses 3 s: answered, within the mount's requestTimeoutMs (10 s), not cut at the top-level 2 s",
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const configFile = everythingReplicaConfig(t, 'swy-held-deadline-');
    const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
    const r2 = await startReplica(t, {
      id: 'r2',
      redis: redis.url,
      config: { upstreams: { ev: { ...EVERYTHING_UPSTREAMS.ev, limits: { requestTimeoutMs: 10_000 } } }, limits: { requestTimeoutMs: 2_000 } },
    });

    const caps = { elicitation: {} };
    const name = 'trigger-elicitation-request';
    const round = await holdElicitationCall(r1.origin);
    const key = round.key;
    r1.child.kill('SIGSTOP');
    const resume = setTimeout(() => r1.child.kill('SIGCONT'), 3_000);
    t.after(() => {
      clearTimeout(resume);
      r1.child.kill('SIGCONT');
    });

    const started = Date.now();
    const retry = await post(
      r2.url,
      modernBody(2, 'tools/call', { name, arguments: {}, requestState: round.requestState, inputResponses: { [key]: { action: 'decline' } } }, caps),
      modernHeaders('tools/call', name),
    );
    assert.equal(retry.status, 200, retry.text);
    const body = retry.json as { result?: { content: Array<{ type: string; text: string }> }; error?: unknown };
    assert.equal(body.error, undefined, retry.text);
    assert.match(body.result!.content[0].text, /declined/i);
    assert.ok(Date.now() - started >= 2_900, 'the answer came after the holder resumed');
  },
);
