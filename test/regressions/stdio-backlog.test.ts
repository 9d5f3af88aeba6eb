// Found while reading the stdio writer (2026-12-04): a child that stopped reading its stdin made
// the gateway keep every later request's bytes (the pipe holds 64 KiB; Node's writer buffered
// the rest, without a bound, for as long as the child lived). Requests are now refused with
// SWY_ERR_UPSTREAM_OVERLOADED once the child has not read `maxUpstreamMessageBytes`.
//
// Found by hostile testing (h-break): a request holding a long string is written in pieces
// (`serializeBody`), and the stdin writer counted each such line as 256 KiB whatever its size, so
// with a 2 MiB bound ten 1 MiB requests (10 MiB) and more waited for a child that read nothing (64
// for the default 16 MiB bound). Each now counts at least its long strings' length
// (`JsonPieces.units`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Limits } from '../../src/core/limits.js';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

const DEAF = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/deaf-server.mjs')}"`;

interface Answer {
  id: number;
  code?: number;
  message?: string;
}

/**
 * Sends `n` echo calls of `messageBytes` each to a gateway in front of a child that never reads,
 * 100 ms apart (each written before the next arrives), and asserts that every one was answered:
 * the first ones at their 3 s deadline, the later ones refused at once, and the refused ones are
 * exactly the later ones. Resolves with how many of each.
 */
async function sendToDeafChild(
  t: { after(fn: () => void | Promise<void>): void },
  limits: Partial<Limits>,
  messageBytes: number,
  n: number,
): Promise<{ refused: number; timedOut: number; answers: Answer[] }> {
  // upstreamBreakerFailures past n: this child is silent too, and at the default its fifth
  // deadline would restart it (test/regressions/stdio-silent-child.test.ts), cutting the calls
  // still waiting; here only the backlog bound is looked at.
  const gw = await gateway(t, { stdio: DEAF, limits: { ...limits, requestTimeoutMs: 3_000, upstreamBreakerFailures: 100 } });
  const message = 'x'.repeat(messageBytes);
  // A 2025 session: its tools/call goes straight to the child (a 2026-07-28 one would first wait
  // for the tools/list that reads its x-mcp-header annotations, which this child never answers).
  const headers = { ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };
  const call = (id: number) => post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }, headers);
  const answers: Answer[] = [];
  const running: Array<Promise<void>> = [];
  for (let id = 1; id <= n; id++) {
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
  assert.equal(refused.length + timedOut.length, n, JSON.stringify(answers));
  // The refused ones are exactly the later ones.
  assert.deepEqual(
    refused.map((a) => a.id),
    answers.slice(n - refused.length).map((a) => a.id),
  );
  return { refused: refused.length, timedOut: timedOut.length, answers };
}

test('a stdio child that stops reading: once it has not read maxUpstreamMessageBytes, new requests get SWY_ERR_UPSTREAM_OVERLOADED at once', async (t) => {
  // Sent one after another: the first ones fill the pipe and the child's own read buffer, the next
  // ones the bound (256 KiB); after that each is refused.
  const { refused, timedOut, answers } = await sendToDeafChild(t, { maxUpstreamMessageBytes: 256 * 1024 }, 100 * 1024, 12);
  assert.ok(refused >= 4, JSON.stringify(answers));
  assert.ok(timedOut >= 3, JSON.stringify(answers));
});

test('a stdio child that stops reading: requests of 1 MiB count their size against maxUpstreamMessageBytes', async (t) => {
  const { timedOut, answers } = await sendToDeafChild(t, { maxUpstreamMessageBytes: 2 * 1024 * 1024, maxBodyBytes: 4 * 1024 * 1024 }, 1024 * 1024, 10);
  // The pipe (a socket pair) and the child's read buffer take about two; the bound (2 MiB) two more at most.
  assert.ok(timedOut <= 5, `${timedOut} requests of 1 MiB were written or queued: ${JSON.stringify(answers)}`);
});
