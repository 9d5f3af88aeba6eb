// Found while reading the stdio writer (2026-12-04): a child that stopped reading its stdin made
// the gateway keep every later request's bytes (the pipe holds 64 KiB; Node's writer buffered
// the rest, without a bound, for as long as the child lived). Requests are now refused with
// SWY_ERR_UPSTREAM_OVERLOADED once the child has not read `maxUpstreamMessageBytes`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

const DEAF = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/deaf-server.mjs')}"`;

test('a stdio child that stops reading: once it has not read maxUpstreamMessageBytes, new requests get SWY_ERR_UPSTREAM_OVERLOADED at once', async (t) => {
  const bound = 256 * 1024;
  // upstreamBreakerFailures past N: this child is silent too, and at the default its fifth
  // deadline would restart it (test/regressions/stdio-silent-child.test.ts), cutting the calls
  // still waiting; here only the backlog bound is looked at.
  const gw = await gateway(t, { stdio: DEAF, limits: { maxUpstreamMessageBytes: bound, requestTimeoutMs: 3_000, upstreamBreakerFailures: 100 } });
  const message = 'x'.repeat(100 * 1024);
  const N = 12;
  // A 2025 session: its tools/call goes straight to the child (a 2026-07-28 one would first wait
  // for the tools/list that reads its x-mcp-header annotations, which this child never answers).
  const headers = { ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };
  const call = (id: number) => post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }, headers);
  // Sent one after another, each once the previous one is written: the first ones fill the pipe
  // and the child's own read buffer, the next ones the bound (256 KiB); after that each is refused.
  const answers: Array<{ id: number; code?: number; message?: string }> = [];
  const running: Array<Promise<void>> = [];
  for (let id = 1; id <= N; id++) {
    const p = call(id).then((r) => {
      const body = r.json as { error?: { code: number; message: string } };
      answers.push({ id, code: body.error?.code, message: body.error?.message });
    });
    running.push(p);
    // Let the gateway write this one before the next arrives.
    await new Promise((r) => setTimeout(r, 100));
  }
  await Promise.all(running);
  answers.sort((a, b) => a.id - b.id);
  const refused = answers.filter(
    (a) => a.code === -32000 && /^Upstream overloaded: the child has not read \d+ bytes written to its stdin$/.test(a.message ?? ''),
  );
  const timedOut = answers.filter((a) => a.code === -32000 && a.message === 'Request timed out: 3000 ms');
  // Every call was answered: the first ones at their deadline, the later ones refused at once.
  assert.equal(refused.length + timedOut.length, N, JSON.stringify(answers));
  assert.ok(refused.length >= 4, JSON.stringify(answers));
  assert.ok(timedOut.length >= 3, JSON.stringify(answers));
  // The refused ones are exactly the later ones.
  assert.deepEqual(
    refused.map((a) => a.id),
    answers.slice(N - refused.length).map((a) => a.id),
  );
});
