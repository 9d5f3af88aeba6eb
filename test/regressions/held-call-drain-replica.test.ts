// Found by two new-user trials (2026-12), the replicas' side of a drain: a replica holding a
// 2026-07-28 call (`input_required`) that got SIGTERM stopped at once (nothing counted in flight:
// `inFlight: 0`), so the client's retry, landing on another replica and forwarded to the holder
// over the bus, found it stopping or gone. The holder now counts and waits for its held calls
// within `shutdownGraceMs`, and a retry forwarded to it meanwhile is resumed there and answered.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { EVERYTHING_UPSTREAMS, holdElicitationCall, spawnReplica, startReplica, until } from '../helpers/replicas.js';

test('SIGTERM on the replica holding a call: a retry forwarded to it within the grace is resumed there, then it exits 0', { timeout: 60_000 }, async (t) => {
  const redis = await startRedis(t);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-held-replica-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'switchyard.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    dialects: { modern: true, streamable: true },
    limits: { shutdownGraceMs: 60_000 },
    cluster: {},
    upstreams: EVERYTHING_UPSTREAMS,
  };
  writeFileSync(configFile, JSON.stringify(config));
  const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
  const r2 = await startReplica(t, { id: 'r2', redis: redis.url, config: { upstreams: EVERYTHING_UPSTREAMS } });

  const round = await holdElicitationCall(r1.origin);
  const exited = new Promise<number | null>((resolve) => r1.child.once('exit', (code) => resolve(code)));
  // To the gateway alone, as a container stop signals its main process (its process group would stop the child too).
  r1.child.kill('SIGTERM');
  await until(() => r1.records.some((r) => r.msg === 'shutting down'), 'r1 to begin its drain');
  assert.deepEqual(
    r1.records.filter((r) => r.msg === 'shutting down').map((r) => [r.signal, r.inFlight, r.held]),
    [['SIGTERM', 1, 1]],
  );

  const name = 'trigger-elicitation-request';
  const params = { name, arguments: {}, requestState: round.requestState, inputResponses: { [round.key]: { action: 'decline' } } };
  const retry = await post(r2.url, modernBody(2, 'tools/call', params, { elicitation: {} }), modernHeaders('tools/call', name));
  assert.equal(retry.status, 200, retry.text);
  const body = retry.json as { id: number; result?: { resultType: string; content: unknown[] }; error?: unknown };
  assert.equal(body.error, undefined, retry.text);
  assert.equal(body.result?.resultType, 'complete');
  assert.ok(Array.isArray(body.result?.content) && body.result.content.length > 0);
  assert.equal(await exited, 0);
});
