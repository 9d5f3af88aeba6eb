// A 2026-07-28 retry resumed on another replica is cut when a drain's grace ends, as a call of
// the draining replica's own is: the client gets 503 -32000 `Server is shutting down: request
// aborted` (docs/operations.md, "Held calls at shutdown and reload"). Two real replicas, a real
// Redis, and an initialize-era stdio upstream that asks for input and then runs on for 60 s.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cancelledReasons } from '../helpers/cancelled.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post, type RawResponse } from '../helpers/http.js';
import { startRedis } from '../helpers/redis.js';
import { spawnReplica, startReplica, until, type ReplicaProcess, type TestReplica } from '../helpers/replicas.js';

const ELICITING = path.join(REPO_ROOT, 'test/fixtures/eliciting-server.mjs');
const CAPS = { elicitation: {} };
const ASK = { name: 'ask-many', arguments: { count: 1, tag: 'held' } };
/** What a call the drain cuts at the end of its grace gets (SWY_ERR_ADMISSION_SHUTTING_DOWN). */
const CUT = { code: -32000, message: 'Server is shutting down: request aborted' };
const GRACE_MS = 1_500;
/** The upstream answers this long after the client's input: far past the grace, well within the deadline. */
const RUNS_ON_MS = 60_000;

/** Upstream `asking`: the eliciting child, answering RUNS_ON_MS after its input came back. */
const ASKING = { asking: { transport: 'stdio', command: process.execPath, args: [ELICITING], env: { ANSWER_AFTER_MS: String(RUNS_ON_MS) } } };
const LIMITS = { shutdownGraceMs: GRACE_MS, requestTimeoutMs: 120_000 };

type Round = { resultType: string; inputRequests: Record<string, unknown>; requestState: string };

/** The first call, on `origin`: the child asks for input, that replica holds the call. */
async function hold(origin: string): Promise<Round> {
  const r = await post(`${origin}/asking/mcp`, modernBody(1, 'tools/call', ASK, CAPS), modernHeaders('tools/call', 'ask-many'));
  assert.equal(r.status, 200, r.text);
  const round = (r.json as { result: Round }).result;
  assert.equal(round.resultType, 'input_required', r.text);
  return round;
}

/** The client's retry of `round` on `origin` (another replica than the holder's). */
function retry(origin: string, round: Round): Promise<RawResponse> {
  const key = Object.keys(round.inputRequests)[0];
  const params = { ...ASK, requestState: round.requestState, inputResponses: { [key]: { action: 'accept', content: { n: 'x' } } } };
  return post(`${origin}/asking/mcp`, modernBody(2, 'tools/call', params, CAPS), modernHeaders('tools/call', 'ask-many'));
}

/** A CLI replica's config: `asking` over 2026-07-28 with the short grace (`upstreams` to change it; `extra` top-level keys, an aggregate mount). */
function replicaConfig(upstreams: Record<string, unknown> = ASKING, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, dialects: { modern: true }, limits: LIMITS, cluster: {}, upstreams, ...extra });
}

/**
 * A CLI replica serving {@link replicaConfig}; `configFile` is where it reads it (for a reload),
 * `upstreams` its upstream `asking` (the child appends each `notifications/cancelled` it gets to
 * `cancelledFile`), and `cancelled()` the reasons it was given so far.
 */
async function cliReplica(
  t: Parameters<typeof spawnReplica>[0] & { after(fn: () => void): void },
  id: string,
  redis: string,
  extra: Record<string, unknown> = {},
): Promise<ReplicaProcess & { configFile: string; upstreams: typeof ASKING; cancelled: () => string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-drain-fwd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'switchyard.json');
  const cancelledFile = path.join(dir, 'cancelled.jsonl');
  const upstreams = { asking: { ...ASKING.asking, env: { ...ASKING.asking.env, CANCELLED_FILE: cancelledFile } } };
  writeFileSync(configFile, replicaConfig(upstreams, extra));
  const cancelled = () => cancelledReasons(cancelledFile);
  return { ...(await spawnReplica(t, { id, configFile, redis })), configFile, upstreams, cancelled };
}

/** An in-process replica serving `asking` likewise (`extra` top-level keys, an aggregate mount). */
function libraryReplica(t: Parameters<typeof startReplica>[0], id: string, redis: string, extra: Record<string, unknown> = {}): Promise<TestReplica> {
  return startReplica(t, { id, redis, config: { dialects: { modern: true }, limits: LIMITS, upstreams: ASKING, ...extra } });
}

/**
 * A CLI replica r1 holding a call, and its retry sent to an in-process replica r2, forwarded to
 * r1 and resumed there, where the upstream runs on (`pending`: the retry's answer to come).
 */
async function retryRunningOnHolder(t: TestContext, extra: Record<string, unknown> = {}) {
  const redis = await startRedis(t);
  const r1 = await cliReplica(t, 'r1', redis.url, extra);
  const r2 = await libraryReplica(t, 'r2', redis.url, extra);
  const round = await hold(r1.origin);
  const pending = retry(r2.origin, round);
  await until(() => r2.gw.executor.inFlight === 1, 'the retry to run on r2');
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { r1, r2, pending };
}

test(
  'SIGTERM on the replica holding a call: a retry forwarded to it and resumed there is cut when its grace ends, with the local cut error',
  { timeout: 60_000 },
  async (t) => {
    const redis = await startRedis(t);
    const r1 = await cliReplica(t, 'r1', redis.url);
    const r2 = await libraryReplica(t, 'r2', redis.url);
    const round = await hold(r1.origin);
    const exited = new Promise<number | null>((resolve) => r1.child.once('exit', (code) => resolve(code)));
    r1.child.kill('SIGTERM');
    await until(() => r1.records.some((r) => r.msg === 'shutting down'), 'r1 to begin its drain');

    // Admitted within the grace and resumed on r1, where the upstream runs on past the grace.
    const startedAt = performance.now();
    const r = await retry(r2.origin, round);
    const tookMs = performance.now() - startedAt;
    assert.equal(r.status, 503, r.text);
    assert.equal(r.headers['retry-after'], '1');
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: CUT });
    // Not the upstream's own end nor a forward timeout (each one is RUNS_ON_MS or more away).
    assert.ok(tookMs < RUNS_ON_MS / 2, `answered after ${Math.round(tookMs)} ms`);
    assert.equal(await exited, 0);
    const cut = r1.records.filter((x) => x.msg === 'held call resumed for another replica cut');
    assert.deepEqual(
      cut.map((x) => [x.level, x.from, x.mount, x.reason]),
      [[30, 'r2', 'asking', CUT.message]],
    );
    // The upstream is told why, as it is of a call still held at the grace end (HeldCalls.clear);
    // before, it was told 'client cancelled'.
    assert.deepEqual(r1.cancelled(), ['shutting down']);
  },
);

test(
  'a replica that drains while its retry waits on the replica holding the call cuts it when its grace ends, and the holder is told',
  { timeout: 60_000 },
  async (t) => {
    const { r1, r2, pending } = await retryRunningOnHolder(t);
    const closed = r2.gw.close({ signal: 'SIGTERM' });
    const r = await pending;
    assert.equal(r.status, 503, r.text);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: CUT });
    await closed;
    // r1 was told (call.cancel) and tells its upstream as of any cancellation by the client.
    await until(() => r1.cancelled().length > 0, 'the upstream to be told');
    assert.deepEqual(r1.cancelled(), ['client cancelled']);
    // r1 was told (call.cancel), so it runs nothing for r2 any more: its drain finds nothing in flight.
    const exited = new Promise<number | null>((resolve) => r1.child.once('exit', (code) => resolve(code)));
    r1.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.deepEqual(
      r1.records.filter((x) => x.msg === 'shutting down').map((x) => [x.inFlight, x.held]),
      [[0, 0]],
    );
  },
);

test(
  'a reload replacing the upstream of a call resumed for another replica: cut after the grace with the reload cut error, not stopped under it',
  { timeout: 60_000 },
  async (t) => {
    const { r1, pending } = await retryRunningOnHolder(t);
    // Another env: the upstream is replaced, its old instance retired.
    writeFileSync(r1.configFile, replicaConfig({ asking: { ...r1.upstreams.asking, env: { ...r1.upstreams.asking.env, CHANGED: '1' } } }));
    r1.child.kill('SIGHUP');
    const r = await pending;
    // In-band, as a call the reload cuts on r1's own mount gets (held-call-drain-reload); before,
    // the old instance stopped at once under the resumed call: 'Upstream unavailable: shutting down'.
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, {
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32000, message: 'Upstream unavailable: mount asking was removed or replaced by a config reload; request aborted' },
    });
    await until(() => r1.records.some((x) => x.msg === 'held call resumed for another replica cut'), 'the cut line');
    // The retired instance is told the reload's reason, as for a call held on it
    // (HeldCalls.cancelOwned); before, 'client cancelled'.
    await until(() => r1.cancelled().length > 0, 'the upstream to be told');
    assert.deepEqual(r1.cancelled(), ['Upstream unavailable: mount asking was removed or replaced by a config reload; request aborted']);
  },
);

// Found in review of the held-call wording: with the aggregate mount on, a retry resumed for
// another replica's client and cut at a reload said `upstream asking of the aggregate mount`
// whatever mount it came through, while a call held there names its own (HeldCall.mount,
// held-call-cut-names-its-mount). Now the resumed retry names the mount it came through too.
test(
  'with the aggregate mount on, a retry resumed for another replica through the upstream’s own mount is cut at a reload naming that mount',
  { timeout: 60_000 },
  async (t) => {
    const extra = { aggregate: { path: '/all' } };
    const { r1, pending } = await retryRunningOnHolder(t, extra);
    writeFileSync(r1.configFile, replicaConfig({ asking: { ...r1.upstreams.asking, env: { ...r1.upstreams.asking.env, CHANGED: '1' } } }, extra));
    r1.child.kill('SIGHUP');
    const r = await pending;
    const cut = 'Upstream unavailable: mount asking was removed or replaced by a config reload; request aborted';
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: cut } });
    await until(() => r1.records.some((x) => x.msg === 'held call resumed for another replica cut'), 'the cut line');
    assert.deepEqual(
      r1.records.filter((x) => x.msg === 'held call resumed for another replica cut').map((x) => [x.from, x.mount, x.reason]),
      [['r2', 'asking', cut]],
    );
    await until(() => r1.cancelled().length > 0, 'the upstream to be told');
    assert.deepEqual(r1.cancelled(), [cut]);
  },
);
