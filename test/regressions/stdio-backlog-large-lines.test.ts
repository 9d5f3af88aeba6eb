// A stdio child that stops reading is sent at most about `maxUpstreamMessageBytes` of large
// requests before new ones are refused. Found by hostile testing: a request holding a long string
// is written in pieces (`serializeBody`), and the stdin writer counted each such line as 256 KiB
// whatever its size, so with a 2 MiB bound ten 1 MiB requests (and so 10 MiB) and more waited for
// a child that read nothing (64 for the default 16 MiB bound). Each now counts at least its long strings'
// length (`JsonPieces.units`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

const DEAF = `"${process.execPath}" "${path.join(REPO_ROOT, 'test/fixtures/deaf-server.mjs')}"`;

test('a stdio child that stops reading: requests of 1 MiB count their size against maxUpstreamMessageBytes', async (t) => {
  const bound = 2 * 1024 * 1024;
  // upstreamBreakerFailures past N: the child is silent too (see stdio-backlog.test.ts).
  const gw = await gateway(t, {
    stdio: DEAF,
    limits: { maxUpstreamMessageBytes: bound, maxBodyBytes: 4 * 1024 * 1024, requestTimeoutMs: 3_000, upstreamBreakerFailures: 100 },
  });
  const message = 'x'.repeat(1024 * 1024);
  const N = 10;
  const headers = { ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };
  const call = (id: number) => post(gw.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }, headers);
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
  assert.equal(refused.length + timedOut.length, N, JSON.stringify(answers));
  // The pipe (a socket pair) and the child's read buffer take about two; the bound (2 MiB) two more at most.
  assert.ok(timedOut.length <= 5, `${timedOut.length} requests of 1 MiB were written or queued: ${JSON.stringify(answers)}`);
  assert.deepEqual(
    refused.map((a) => a.id),
    answers.slice(N - refused.length).map((a) => a.id),
  );
});
