// Regression (found by a trial): a drain on SIGTERM logged `shutting down` twice, once from the
// CLI's signal handler (with the signal) and once from the gateway's close (with the calls in
// flight). It is said once, with both. `--serve-stdio` did the same; its test is in
// test/integration/serve-stdio.test.ts ('SIGTERM stops reading …').

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';
import { messagesUntilResponse, modernBody, modernHeaders, openSse } from '../helpers/http.js';

test('SIGTERM with a call in flight: one `shutting down` line, naming the signal and the call in flight', async (t) => {
  const run = await startCli(t, ['--no-admin']);
  // A slow call with progress: its first progress event says it is in flight.
  const call = modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 3, stepMs: 200 }, _meta: { progressToken: 'p1' } });
  const sse = await openSse(run.url, 'POST', modernHeaders('tools/call', 'slow'), JSON.stringify(call));
  t.after(() => sse.close());
  assert.equal(JSON.parse((await sse.next()).data).method, 'notifications/progress');
  const code = run.stop('SIGTERM');
  // It finishes within the grace.
  const last = (await messagesUntilResponse(sse, 1)).at(-1) as { id: number; result: { content: unknown } };
  assert.deepEqual([last.id, last.result.content], [1, [{ type: 'text', text: 'Finished 3 steps.' }]]);
  assert.equal(await code, 0);
  assert.deepEqual(
    run
      .records()
      .filter((r) => r.msg === 'shutting down')
      .map((r) => [r.level, r.signal, r.inFlight]),
    [[30, 'SIGTERM', 1]],
  );
});
