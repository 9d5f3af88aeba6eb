// Found by two new-user trials (2026-12): calls the gateway holds for a 2026-07-28 client's retry
// (an initialize-era upstream's elicitation/create, become an `input_required` round) were neither
// drain- nor reload-aware. A SIGTERM drain counted none of them (`inFlight: 0`), waited for none
// and refused the retry of a call held a moment before the signal; a reload that replaced the
// upstream left the call bound to the old instance, so the retry got -32000 `Upstream
// unavailable: shutting down` from a gateway that was not shutting down. Now the drain counts held
// calls in `inFlight` (and alone in `held`), admits the retries of calls held here until
// `shutdownGraceMs` ends (any other new request is refused, 503, as before) and waits for them;
// a reload that retires the upstream cancels the calls held on it, and a retry gets the reload's
// own error, as a call it cuts does. The embedded demo's `ask` seals its own requestState and holds
// nothing: its retry is a new request (refused by a drain, asked again by a replaced demo). The
// library's `ready()` refused every request once close() began, the held call's retry included:
// it now lets a started gateway's executors decide while the drain runs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cancelledReasons } from '../helpers/cancelled.js';
import { startCli, type RunningCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post, type RawResponse } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const ELICITING = path.join(REPO_ROOT, 'test/fixtures/eliciting-server.mjs');
const CAPS = { elicitation: {} };
const ASK = { name: 'ask-many', arguments: { count: 1, tag: 'held' } };
const CUT = 'Upstream unavailable: mount asking was removed or replaced by a config reload; request aborted';

type Round = { resultType: string; inputRequests: Record<string, unknown>; requestState: string };

/** A config with the eliciting child as upstream `asking` (`env` changes it for a reload) and the embedded demo as `demo`. */
function configOf(graceMs: number, o: { env?: Record<string, string>; asking?: boolean; demoTimeoutMs?: number } = {}): string {
  const upstreams: Record<string, unknown> = {};
  if (o.asking !== false) upstreams.asking = { transport: 'stdio', command: process.execPath, args: [ELICITING], env: o.env ?? {} };
  upstreams.demo = { transport: 'embedded', ...(o.demoTimeoutMs ? { limits: { requestTimeoutMs: o.demoTimeoutMs } } : {}) };
  return JSON.stringify({ limits: { shutdownGraceMs: graceMs }, upstreams });
}

async function startWith(t: Parameters<typeof startCli>[0], config: string): Promise<{ gw: RunningCli; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-held-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'gw.json');
  writeFileSync(file, config);
  return { gw: await startCli(t, ['--config', file, '--no-admin']), file };
}

/** The first call: the child asks for input, the gateway holds the call and hands out a round. */
async function hold(gw: RunningCli): Promise<Round> {
  const r = await post(`${gw.origin}/asking/mcp`, modernBody(1, 'tools/call', ASK, CAPS), modernHeaders('tools/call', 'ask-many'));
  assert.equal(r.status, 200, r.text);
  const round = (r.json as { result: Round }).result;
  assert.equal(round.resultType, 'input_required');
  return round;
}

/** The client's retry of `round`, answering its one input request. */
function retry(gw: RunningCli, round: Round, id: number): Promise<RawResponse> {
  const key = Object.keys(round.inputRequests)[0];
  const params = { ...ASK, requestState: round.requestState, inputResponses: { [key]: { action: 'accept', content: { n: 'x' } } } };
  return post(`${gw.origin}/asking/mcp`, modernBody(id, 'tools/call', params, CAPS), modernHeaders('tools/call', 'ask-many'));
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond());
}

test('SIGTERM with a call held: counted in flight, its retry within the grace is served, a new call is refused, then exit 0', async (t) => {
  // A grace far longer than the test: the gateway ends once the held call has finished, not at the grace.
  const { gw } = await startWith(t, configOf(60_000));
  const round = await hold(gw);
  gw.child.kill('SIGTERM');
  await until(() => gw.records().some((r) => r.msg === 'shutting down'));
  assert.deepEqual(
    gw
      .records()
      .filter((r) => r.msg === 'shutting down')
      .map((r) => [r.signal, r.inFlight, r.held]),
    [['SIGTERM', 1, 1]],
  );

  const fresh = await post(`${gw.origin}/asking/mcp`, modernBody(3, 'tools/call', ASK, CAPS), modernHeaders('tools/call', 'ask-many'));
  assert.equal(fresh.status, 503);
  assert.deepEqual(fresh.json, { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'Server is shutting down' } });

  const r = await retry(gw, round, 2);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: '1 of 1 accepted' }]);
  assert.equal(await gw.exited, 0);
});

test("SIGTERM with a call held after the upstream's tool list changed: the retry's x-mcp-header list read is admitted with it", async (t) => {
  // The retry of a 2026-07-28 tools/call re-reads the tool list for its Mcp-Param-* check when the
  // annotations it read are stale (a tools/list_changed here; 60 s old likewise). That read runs on
  // the retry's behalf, and the drain refused it as a new request: the retry got 503.
  const { gw } = await startWith(t, configOf(60_000, { env: { LIST_CHANGED: '1' } }));
  const round = await hold(gw);
  // The child sends its list_changed right after the elicitation: let the gateway take it in.
  await new Promise((r) => setTimeout(r, 300));
  gw.child.kill('SIGTERM');
  await until(() => gw.records().some((r) => r.msg === 'shutting down'));
  const r = await retry(gw, round, 2);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: '1 of 1 accepted' }]);
  assert.equal(await gw.exited, 0);
});

test('SIGTERM with a call held and no retry: the grace ends, the call is cancelled, exit 0', async (t) => {
  const { gw } = await startWith(t, configOf(400));
  await hold(gw);
  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0);
  assert.deepEqual(
    gw
      .records()
      .filter((r) => r.msg === 'shutting down')
      .map((r) => [r.inFlight, r.held]),
    [[1, 1]],
  );
  const lines = gw.records().map((r) => r.msg);
  assert.ok(lines.indexOf('shutting down') < lines.indexOf('stopped'));
});

test('a reload that replaces the upstream a call is held on: the retry gets the reload error, not "shutting down"', async (t) => {
  const { gw, file } = await startWith(t, configOf(300));
  const round = await hold(gw);
  writeFileSync(file, configOf(300, { env: { CHANGED: '1' } }));
  gw.child.kill('SIGHUP');
  await until(() => gw.records().some((r) => r.msg === 'config reloaded'));
  assert.deepEqual(gw.records().find((r) => r.msg === 'config reloaded')?.changed, ['asking']);

  const r = await retry(gw, round, 2);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: CUT } });
  // The new instance serves: a call started over is held there, and its retry completes.
  const again = await hold(gw);
  const done = await retry(gw, again, 4);
  assert.deepEqual((done.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: '1 of 1 accepted' }]);
  assert.ok(!gw.records().some((r) => r.msg === 'shutting down' || r.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN'));
});

/** A file the eliciting child appends each `notifications/cancelled` to, and the reasons read back from it. */
function cancelledLog(t: { after(fn: () => void): void }): { file: string; reasons: () => string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-cancelled-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'cancelled.jsonl');
  return { file, reasons: () => cancelledReasons(file) };
}

// Found while folding the three drains into one (src/core/drain.ts): a call cut when a drain's
// grace ended, or by a reload, was cancelled upstream with reason 'client cancelled', while a
// call still held at that moment is told 'shutting down' (HeldCalls.clear) or the reload's error
// (HeldCalls.cancelOwned). Now the upstream is told the same for both.
test("SIGTERM while a resumed call runs past the grace: the client gets the cut, the upstream is told 'shutting down'", async (t) => {
  const log = cancelledLog(t);
  const { gw } = await startWith(t, configOf(400, { env: { ANSWER_AFTER_MS: '60000', CANCELLED_FILE: log.file } }));
  const round = await hold(gw);
  const pending = retry(gw, round, 2);
  await new Promise((r) => setTimeout(r, 300));
  gw.child.kill('SIGTERM');
  const r = await pending;
  // 2026-07-28 makes shutting down HTTP-level (docs/errors.md), a cut after the grace included.
  assert.equal(r.status, 503, r.text);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Server is shutting down: request aborted' } });
  assert.equal(await gw.exited, 0);
  assert.deepEqual(log.reasons(), ['shutting down']);
});

test('a reload that replaces the upstream a resumed call runs on: cut after the grace, the upstream is told the reload error', async (t) => {
  const log = cancelledLog(t);
  const env = { ANSWER_AFTER_MS: '60000', CANCELLED_FILE: log.file };
  const { gw, file } = await startWith(t, configOf(300, { env }));
  const round = await hold(gw);
  const pending = retry(gw, round, 2);
  await new Promise((r) => setTimeout(r, 300));
  writeFileSync(file, configOf(300, { env: { ...env, CHANGED: '1' } }));
  gw.child.kill('SIGHUP');
  const r = await pending;
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { jsonrpc: '2.0', id: 2, error: { code: -32000, message: CUT } });
  await until(() => log.reasons().length > 0);
  assert.deepEqual(log.reasons(), [CUT]);
});

test('a reload that removes the upstream a call is held on: its path is gone (404), the gateway serves on', async (t) => {
  const { gw, file } = await startWith(t, configOf(300));
  const round = await hold(gw);
  writeFileSync(file, configOf(300, { asking: false }));
  gw.child.kill('SIGHUP');
  await until(() => gw.records().some((r) => r.msg === 'config reloaded'));
  const r = await retry(gw, round, 2);
  assert.equal(r.status, 404);
  const echo = await post(
    `${gw.origin}/demo/mcp`,
    modernBody(5, 'tools/call', { name: 'echo', arguments: { message: 'on' } }),
    modernHeaders('tools/call', 'echo'),
  );
  assert.equal((echo.json as { result: { content: Array<{ text: string }> } }).result.content[0].text, 'Echo: on');
});

/** Answers the demo's `ask` round `state` at `gw` with the name Ada. */
function answerDemo(gw: RunningCli, state: string, id: number): Promise<RawResponse> {
  return post(
    `${gw.origin}/demo/mcp`,
    modernBody(
      id,
      'tools/call',
      { name: 'ask', arguments: {}, requestState: state, inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } },
      CAPS,
    ),
    modernHeaders('tools/call', 'ask'),
  );
}

/** The demo's own `ask` round (its requestState is the demo's, passed through; nothing is held). */
async function demoAsk(gw: RunningCli): Promise<{ state: string; answer: (id: number) => Promise<RawResponse> }> {
  const r = await post(`${gw.origin}/demo/mcp`, modernBody(1, 'tools/call', { name: 'ask', arguments: {} }, CAPS), modernHeaders('tools/call', 'ask'));
  const round = (r.json as { result: Round }).result;
  assert.equal(round.resultType, 'input_required');
  assert.ok(!round.requestState.startsWith('swy'));
  return { state: round.requestState, answer: (id: number) => answerDemo(gw, round.requestState, id) };
}

test("the demo's ask across a restart: served with requestStateKey set, a new round without it", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-demo-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const results: string[] = [];
  for (const key of ['a-request-state-key-of-forty-characters!', undefined]) {
    const file = path.join(dir, 'gw.json');
    writeFileSync(file, JSON.stringify({ ...(key ? { requestStateKey: key } : {}), upstreams: { demo: { transport: 'embedded' } } }));
    const first = await startCli(t, ['--config', file, '--no-admin']);
    const { state } = await demoAsk(first);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    const second = await startCli(t, ['--config', file, '--no-admin']);
    const r = await answerDemo(second, state, 2);
    assert.equal(r.status, 200, r.text);
    const result = (r.json as { result: { resultType?: string; content?: Array<{ text: string }> } }).result;
    results.push(result.content?.[0]?.text ?? String(result.resultType));
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  }
  assert.deepEqual(results, ['Hello, Ada!', 'input_required']);
});

test("the demo's own ask (nothing held): a drain refuses its retry as a new request (retry elsewhere), a replaced demo serves it", async (t) => {
  const { gw, file } = await startWith(t, configOf(60_000, { asking: false }));
  const first = await demoAsk(gw);
  writeFileSync(file, configOf(60_000, { asking: false, demoTimeoutMs: 120_000 }));
  gw.child.kill('SIGHUP');
  await until(() => gw.records().some((r) => r.msg === 'config reloaded'));
  assert.deepEqual(gw.records().find((r) => r.msg === 'config reloaded')?.changed, ['demo']);
  // The new instance opens the old state: without `cluster` the demo's key is derived from one
  // secret per process (it was random per instance, and the replaced demo asked again).
  const served = await first.answer(2);
  assert.equal(served.status, 200, served.text);
  assert.deepEqual((served.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Hello, Ada!' }]);

  const second = await demoAsk(gw);
  // A slow call keeps the drain (and the listener) open meanwhile: the ask itself holds nothing.
  const slow = post(
    `${gw.origin}/demo/mcp`,
    modernBody(9, 'tools/call', { name: 'slow', arguments: { steps: 5, stepMs: 200 } }),
    modernHeaders('tools/call', 'slow'),
  );
  await new Promise((r) => setTimeout(r, 100));
  gw.child.kill('SIGTERM');
  await until(() => gw.records().some((r) => r.msg === 'shutting down'));
  const refused = await second.answer(3);
  assert.equal(refused.status, 503);
  assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'Server is shutting down' } });
  assert.equal((await slow).status, 200);
  assert.deepEqual(
    gw
      .records()
      .filter((r) => r.msg === 'shutting down')
      .map((r) => [r.inFlight, r.held]),
    [[1, 0]],
  );
  assert.equal(await gw.exited, 0);
});

test('the library (fetch handler): close() with a call held waits for it, serves its retry and refuses a new call meanwhile', async (t) => {
  const sy = switchyard(t, {
    limits: { shutdownGraceMs: 60_000 },
    upstreams: { asking: { transport: 'stdio', command: process.execPath, args: [ELICITING] } },
  });
  const call = (id: number, params: Record<string, unknown>) =>
    sy.fetch(
      new Request('http://127.0.0.1/asking/mcp', {
        method: 'POST',
        headers: modernHeaders('tools/call', 'ask-many'),
        body: JSON.stringify(modernBody(id, 'tools/call', params, CAPS)),
      }),
    );
  const first = await call(1, ASK);
  const round = ((await first.json()) as { result: Round }).result;
  assert.equal(round.resultType, 'input_required');
  let closed = false;
  const closing = sy.close().then(() => (closed = true));
  await until(() => sy.records.some((r) => r.msg === 'shutting down'));
  assert.deepEqual(
    sy.records.filter((r) => r.msg === 'shutting down').map((r) => [r.inFlight, r.held]),
    [[1, 1]],
  );

  const fresh = await call(3, ASK);
  assert.equal(fresh.status, 503);
  assert.deepEqual(await fresh.json(), { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'Server is shutting down' } });
  assert.equal(closed, false);

  const key = Object.keys(round.inputRequests)[0];
  const params = { ...ASK, requestState: round.requestState, inputResponses: { [key]: { action: 'accept', content: { n: 'x' } } } };
  const r = await call(2, params);
  assert.equal(r.status, 200);
  assert.deepEqual(((await r.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: '1 of 1 accepted' }]);
  await closing;
});
