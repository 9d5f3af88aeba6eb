// Rate-limit buckets in Redis outlive a rollout: a replica set replaced by new processes (new
// replica ids, same limits) finds each principal's bucket where the old one left it, so waiting for
// a deploy resets no one's limit; a rollout that changes the limit's numbers starts it on fresh
// buckets (docs/scaling.md, "Redis keys"; docs/policy.md, Reloading). Real Redis, real CLI replicas.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { modernBody, modernHeaders, post, type RawResponse } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { spawnReplica, type ReplicaProcess } from '../helpers/replicas.js';

/** One token a day after the burst: nothing refills during the test. */
const RATE_PER_SEC = 1 / 86_400;

/** A CLI replica `id` in front of the embedded demo, with one limit of `burst` per principal. */
async function replica(
  t: Parameters<typeof spawnReplica>[0] & { after(fn: () => void): void },
  id: string,
  redis: string,
  burst: number,
): Promise<ReplicaProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-bucket-rollout-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'switchyard.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    dialects: { modern: true },
    cluster: {},
    rateLimits: [{ name: 'calls', per: 'principal', ratePerSec: RATE_PER_SEC, burst }],
    upstreams: { demo: { transport: 'embedded' } },
  };
  writeFileSync(configFile, JSON.stringify(config));
  return spawnReplica(t, { id, configFile, redis });
}

function list(r: ReplicaProcess, id: number): Promise<RawResponse> {
  return post(`${r.origin}/demo/mcp`, modernBody(id, 'tools/list'), modernHeaders('tools/list'));
}

/** Stops `r` as a rollout does (SIGTERM, its drain) and waits for it to exit 0. */
async function rollOut(r: ReplicaProcess): Promise<void> {
  const exited = new Promise<number | null>((resolve) => r.child.once('exit', (code) => resolve(code)));
  r.child.kill('SIGTERM');
  assert.equal(await exited, 0);
}

test('a rollout with the same limit keeps every bucket in Redis; one that changes the limit starts fresh', { timeout: 60_000 }, async (t) => {
  const redis = await startRedis(t);
  const old = await replica(t, 'old-a', redis.url, 2);
  assert.equal((await list(old, 1)).status, 200);
  assert.equal((await list(old, 2)).status, 200);
  const refused = await list(old, 3);
  assert.equal(refused.status, 429, refused.text);
  await rollOut(old);

  // New processes, new replica ids, the same limit: the anonymous principal's bucket is still empty.
  const next = await replica(t, 'new-b', redis.url, 2);
  const still = await list(next, 4);
  assert.equal(still.status, 429, still.text);
  assert.deepEqual((still.json as { error: { data?: { limit?: string } } }).error.data?.limit, 'calls');
  await rollOut(next);

  // A rollout that raises the burst is another limit: its buckets start full.
  const raised = await replica(t, 'new-c', redis.url, 3);
  assert.equal((await list(raised, 5)).status, 200);
});
