// Found by a trial (2026-12): when the replica holding a 2026-07-28 held call (input_required) was
// SIGKILLed and the retry reached another replica, the client got SWY_ERR_CLUSTER_OWNER_GONE
// in-band and that replica logged it twice at `error` with a stack, as if the gateway were at
// fault. A lost replica is routine operations: one `request failed` line at `warn`, without a
// stack, and a message that fits a held call as well as a stream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { EVERYTHING_UPSTREAMS, everythingReplicaConfig, spawnReplica, startReplica, holdElicitationCall } from '../helpers/replicas.js';

/** The pids of `pid`'s children (Linux `/proc`), read before it is killed. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`))
    for (const c of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/)) if (c) out.push(Number(c));
  return out;
}

test('a retry for a call held by a SIGKILLed replica: in-band owner-gone error (200), logged once at warn without a stack', { timeout: 60_000 }, async (t) => {
  const redis = await startRedis(t);
  const upstreams = EVERYTHING_UPSTREAMS;
  const configFile = everythingReplicaConfig(t, 'swy-owner-gone-');
  const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
  const r2 = await startReplica(t, { id: 'r2', redis: redis.url, config: { upstreams } });

  const caps = { elicitation: {} };
  const name = 'trigger-elicitation-request';
  const round = await holdElicitationCall(r1.origin);
  const key = round.key;
  // A SIGKILLed gateway cannot stop its stdio child, and this upstream outlives stdin EOF
  // (docs/scaling.md): the test stops it itself.
  const orphans = childrenOf(r1.child.pid!);
  t.after(() => {
    for (const pid of orphans)
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
  });
  await r1.kill('SIGKILL');

  const before = r2.records.length;
  const retry = await post(
    r2.url,
    modernBody(2, 'tools/call', { name, arguments: {}, requestState: round.requestState, inputResponses: { [key]: { action: 'decline' } } }, caps),
    modernHeaders('tools/call', name),
  );
  assert.equal(retry.status, 200, retry.text);
  const logged = r2.records.slice(before).filter((r) => JSON.stringify(r).includes('SWY_ERR_CLUSTER_OWNER_GONE') || JSON.stringify(r).includes('is gone'));
  assert.deepEqual(
    logged.map((r) => ({ level: r.level, msg: r.msg, code: r.code, error: r.error, stack: 'err' in r })),
    [
      {
        level: 40,
        msg: 'request failed',
        code: 'SWY_ERR_CLUSTER_OWNER_GONE',
        error: 'The replica holding this session, stream or call is gone: no replica r1 is listening',
        stack: false,
      },
    ],
  );
  assert.deepEqual(retry.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32000, message: 'The replica holding this session, stream or call is gone: no replica r1 is listening' },
  });
});
