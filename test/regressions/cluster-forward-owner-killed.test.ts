// Found by a trial (three replicas behind nginx): an HTTP+SSE POST forwarded to the stream's
// replica a few ms after that replica was SIGKILLed waited the whole forward timeout (5 s) for
// 504 SWY_ERR_CLUSTER_FORWARD_TIMEOUT, since Redis still counted the dead replica's subscription
// when PUBLISH ran and the message was lost; only forwards allowed to wait longer than the
// timeout were watched. Every unanswered forward is now checked (PUBSUB NUMSUB) after the bus's
// first owner check (250 ms): the client gets 503 SWY_ERR_CLUSTER_OWNER_GONE.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClusterRedis } from '../../src/cluster/redis.js';
import { openHttpSseSession, send } from '../helpers/http.js';
import { recordingLog, startRedis } from '../helpers/redis.js';
import { EVERYTHING_UPSTREAMS, spawnReplica, startReplica } from '../helpers/replicas.js';

test(
  'an HTTP+SSE POST forwarded to its stream replica just as it is SIGKILLed (PUBLISH counted it): 503 OWNER_GONE, not 504 after the 5 s forward timeout',
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-forward-killed-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const configFile = path.join(dir, 'switchyard.json');
    writeFileSync(
      configFile,
      JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, dialects: { legacySse: true }, cluster: {}, upstreams: EVERYTHING_UPSTREAMS }),
    );
    const r1 = await spawnReplica(t, { id: 'r1', configFile, redis: redis.url });
    const r2 = await startReplica(t, { id: 'r2', redis: redis.url, config: { upstreams: EVERYTHING_UPSTREAMS } });
    const session = await openHttpSseSession(t, `${r1.origin}/ev`);

    // The test listens on r1's channel to see the forward's PUBLISH happen while r1 still counts
    // as a subscriber (stopped: it reads nothing), then leaves the channel and kills r1, so that
    // the message is lost exactly as in the trial's race.
    const watcher = createClusterRedis({ url: redis.url, log: recordingLog().log, reconnectBaseMs: 20, reconnectMaxMs: 200 });
    t.after(() => watcher.destroy());
    assert.equal(await watcher.waitUntilUp(10_000), true);
    let published!: () => void;
    const seen = new Promise<void>((resolve) => (published = resolve));
    await watcher.subscribe('swy:bus:r1', (text) => {
      if ((JSON.parse(text) as { t?: string }).t === 'req') published();
    });
    r1.child.kill('SIGSTOP');

    const elsewhere = session.to.replace(r1.origin, r2.origin);
    const started = Date.now();
    const answered = send(elsewhere, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { 'content-type': 'application/json' });
    await seen;
    await watcher.unsubscribe('swy:bus:r1');
    await r1.kill('SIGKILL');

    const r = await answered;
    const tookMs = Date.now() - started;
    assert.equal(r.status, 503, r.text);
    assert.deepEqual(JSON.parse(r.text), {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32000, message: 'The replica holding this session, stream or call is gone: replica r1 stopped listening before it answered' },
    });
    // Generous: the point is that it did not wait for the forward timeout (5,000 ms).
    assert.ok(tookMs < 4_000, `answered after ${tookMs} ms`);
  },
);
