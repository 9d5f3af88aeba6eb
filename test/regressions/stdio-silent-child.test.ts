// Regression from an operations review: a stdio child that stays alive and keeps reading its
// stdin but never answers again ("deaf") stayed `up` in /readyz, /status.json and
// switchyard_upstream_state while every call to it ran into its deadline, for as long as it
// lived: the circuit breaker ran for HTTP upstreams only, and nothing else noticed a silent
// child (it neither exits nor writes a broken line). Then `upstreamBreakerFailures` calls in a
// row that reached their deadline with no output got it killed, which with the default deadline
// took 25 minutes for a client calling one at a time, and killed a child whose one tool hung.
// Now a call that reaches its deadline in silence sends the child a ping; no line within
// `upstreamRequestTimeoutMs` and it is killed and restarted, marked down meanwhile.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway, find, getText } from '../helpers/ops.js';
import { until } from '../helpers/replicas.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/silent-server.mjs');

interface Answer {
  result?: { content?: Array<{ text?: string }> };
  error?: { code: number; message: string };
}

async function echo(url: string, id: number, message: string): Promise<Answer> {
  const r = await post(url, modernBody(id, 'tools/call', { name: 'echo', arguments: { message } }), modernHeaders('tools/call', 'echo'));
  return r.json as Answer;
}

const DEADLINE = { code: -32000, message: 'Request timed out: 400 ms' };

test('a stdio child that lets a call reach its deadline and then a ping go unanswered is killed, shown down, and restarted', async (t) => {
  const gw = await configGateway(
    t,
    {
      admin: { port: 0 },
      // A restart backoff long enough to read the down state before the new child serves; a
      // deadline of 1 s, since this test's first call must be answered within it (at 400 ms a
      // loaded machine had it time out, with other work running beside the suite).
      limits: { requestTimeoutMs: 1_000, upstreamRequestTimeoutMs: 300, upstreamBackoffMinMs: 4_000, upstreamBackoffMaxMs: 4_000 },
      upstreams: { quiet: { command: process.execPath, args: [FIXTURE, '--answer', '1'] } },
    },
    { operations: true },
  );
  const admin = gw.admin!.address().url;
  const health = gw.supervised.get('quiet')!;
  const first = await echo(gw.url, 1, 'one');
  const firstPid = /from (\d+)$/.exec(String(first.result?.content?.[0]?.text))![1];

  const states: string[] = [];
  health.onChange((s) => states.push(s));
  // One silent deadline is enough (upstreamBreakerFailures, 5 by default, no longer counts them):
  // the ping it sends goes unanswered, and the child is killed and the upstream down until it serves again.
  assert.deepEqual((await echo(gw.url, 2, 'two')).error, { code: -32000, message: 'Request timed out: 1000 ms' });
  assert.equal(health.state, 'up');
  await until(() => states.includes('down'), 'the upstream marked down', 5_000);
  const reason = 'a call reached its deadline with no output from the child, and a ping got no answer within 300 ms';
  assert.ok(gw.records.some((r) => r.msg === 'upstream killed' && r.reason === reason));
  const lastError = `Upstream protocol error: ${reason}; the child was stopped and is restarted`;
  const status = (await getText(`${admin}status.json`)).json as { upstreams: Array<{ name: string; state: string; lastError?: string }> };
  assert.deepEqual(
    status.upstreams.map((u) => [u.name, u.state, u.lastError]),
    [['quiet', 'down', lastError]],
  );
  const ready = await getText(`${admin}readyz`);
  assert.deepEqual([ready.status, ready.json], [503, { ready: false, reasons: [`upstream quiet is down: ${lastError}`] }]);
  const metrics = (await getText(`${admin}metrics`)).text;
  assert.deepEqual(
    find(metrics, 'switchyard_upstream_state', { upstream: 'quiet' })
      .map((s) => [s.labels.state, s.value])
      .sort(),
    [
      ['down', 1],
      ['starting', 0],
      ['up', 0],
    ],
  );

  // The restarted child answers again.
  await until(() => health.state === 'up', 'the restarted child serving', 15_000);
  assert.deepEqual(states, ['down', 'up']);
  const again = await echo(gw.url, 4, 'four');
  const againPid = /from (\d+)$/.exec(String(again.result?.content?.[0]?.text))![1];
  assert.notEqual(againPid, firstPid);
  assert.equal(again.result?.content?.[0]?.text, `echo: four from ${againPid}`);
});

test('a child that writes anything after a silent deadline is not restarted: a notification is a sign of life', async (t) => {
  const gw = await configGateway(t, {
    limits: { requestTimeoutMs: 400, upstreamRequestTimeoutMs: 300, upstreamBreakerFailures: 2 },
    upstreams: { chatty: { command: process.execPath, args: [FIXTURE, '--answer', '0', '--chatty'] } },
  });
  const health = gw.supervised.get('chatty')!;
  const states: string[] = [];
  health.onChange((s) => states.push(s));
  for (let id = 1; id <= 4; id++) assert.deepEqual((await echo(gw.url, id, 'x')).error, DEADLINE);
  assert.equal(health.state, 'up');
  assert.deepEqual(states, []);
  assert.equal(
    gw.records.some((r) => r.msg === 'upstream killed'),
    false,
  );
});

test('a child that answers the ping while one tool hangs is left alone: its calls reach their deadlines, its other work goes on', async (t) => {
  const gw = await configGateway(t, {
    limits: { requestTimeoutMs: 400, upstreamRequestTimeoutMs: 300, upstreamBreakerFailures: 2 },
    upstreams: { hung: { command: process.execPath, args: [FIXTURE, '--answer', '0', '--answer-ping'] } },
  });
  const health = gw.supervised.get('hung')!;
  const states: string[] = [];
  health.onChange((s) => states.push(s));
  for (let id = 1; id <= 4; id++) {
    assert.deepEqual((await echo(gw.url, id, 'x')).error, DEADLINE);
    // Time for the ping each silent deadline sends to be answered.
    await new Promise((r) => setTimeout(r, 100));
  }
  const list = await post(gw.url, modernBody(9, 'tools/list'), modernHeaders('tools/list'));
  assert.deepEqual(
    (list.json as { result?: { tools?: Array<{ name: string }> } }).result?.tools?.map((x) => x.name),
    ['echo'],
  );
  assert.equal(health.state, 'up');
  assert.deepEqual(states, []);
  assert.equal(
    gw.records.some((r) => r.msg === 'upstream killed'),
    false,
  );
});

test('a child still writing a long line when a call reaches its deadline is not killed: its bytes are a sign of life (h-break)', async (t) => {
  // The line takes 1.5 s; the call's deadline is 400 ms and the ping's wait 300 ms, so no complete
  // line comes within either, but output does all along. It was killed mid-line.
  const gw = await configGateway(t, {
    limits: { requestTimeoutMs: 400, upstreamRequestTimeoutMs: 300 },
    upstreams: { slow: { command: process.execPath, args: [FIXTURE, '--answer', '0', '--answer-ping', '--slow-line', '1500'] } },
  });
  const health = gw.supervised.get('slow')!;
  const states: string[] = [];
  health.onChange((s) => states.push(s));
  assert.deepEqual((await echo(gw.url, 1, 'big')).error, DEADLINE);
  // Past the line's end and the ping's answer behind it.
  await new Promise((r) => setTimeout(r, 1_600));
  assert.deepEqual(states, []);
  assert.equal(
    gw.records.some((r) => r.msg === 'upstream killed'),
    false,
  );
  const list = await post(gw.url, modernBody(9, 'tools/list'), modernHeaders('tools/list'));
  assert.equal((list.json as { result?: unknown }).result !== undefined, true);
});

test('a child that stopped reading its stdin, so that the ping cannot even be written, is killed after the same wait, and the log says so', async (t) => {
  const gw = await configGateway(t, {
    // A low bound of unread bytes: the call's own large message stays in the pipe, and the ping is refused before it is written.
    limits: { requestTimeoutMs: 400, upstreamRequestTimeoutMs: 300, maxUpstreamMessageBytes: 4096, upstreamBackoffMinMs: 4_000, upstreamBackoffMaxMs: 4_000 },
    upstreams: { deaf: { command: process.execPath, args: [FIXTURE, '--answer', '0', '--deaf'] } },
  });
  const health = gw.supervised.get('deaf')!;
  const states: string[] = [];
  health.onChange((s) => states.push(s));
  // The first call makes the child stop reading; the second, sent meanwhile, is 1.5 MB, more than
  // the pipe holds, so that when the first reaches its deadline the ping cannot be written.
  const first = echo(gw.url, 1, 'x');
  await new Promise((r) => setTimeout(r, 100));
  const second = echo(gw.url, 2, 'y'.repeat(1_500_000));
  assert.deepEqual((await first).error, DEADLINE);
  assert.deepEqual((await second).error, DEADLINE);
  await until(() => states.includes('down'), 'the upstream marked down', 5_000);
  const killed = gw.records.filter((r) => r.msg === 'upstream killed').map((r) => String(r.reason));
  assert.equal(killed.length, 1, killed.join('\n'));
  assert.match(
    killed[0],
    /^a call reached its deadline with no output from the child, and it wrote nothing in the 300 ms after \(the ping was not sent: Upstream overloaded: the child has not read \d+ bytes written to its stdin\)$/,
  );
});
