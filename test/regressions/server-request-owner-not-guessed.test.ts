// A stdio child is shared by every client, and a server request it writes (elicitation, sampling,
// roots) names no request. The routing table gave one to the sole call in flight that can take
// input (a tools/call, prompts/get or resources/read), though another client's request of
// another kind in flight (a completion/complete, a list) may have been the one the child asked
// for: Bob's completion asked a question and Alice was shown it. Found beside the log rule of
// log-owner-not-guessed; a server request now goes to a call only when that call is the one
// request in flight on the connection (docs/upstreams.md, the routing table).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { answerMessages, initSession, messagesUntilResponse, nextSseMessage, openSse, post } from '../helpers/http.js';

const SCRIPTED = path.join(REPO_ROOT, 'test/fixtures/scripted-server.mjs');
const FORM = { method: 'elicitation/create', params: { message: 'Card number?', requestedSchema: { type: 'object', properties: { n: { type: 'string' } } } } };

test('a stdio child’s question asked during Bob’s completion/complete does not reach Alice’s call; alone, a call still gets its own', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${SCRIPTED}"` });

  // Alice: a call that can take input, in flight for a while, asking nothing (its answer is read
  // whole at the end: JSON, or SSE had anything been sent to her).
  const alice = await initSession(gw.url, '2025-11-25', { elicitation: {} });
  const aliceCall = post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'script', arguments: { steps: [{ sleep: 1_500 }] } } }, alice);
  await new Promise((r) => setTimeout(r, 300));

  // Bob's completion makes the child ask a question while Alice's call is in flight.
  const bob = await initSession(gw.url, '2025-11-25', { elicitation: {} });
  const completing = post(
    gw.url,
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'completion/complete',
      params: { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'steps', value: JSON.stringify([{ ask: FORM }]) } },
    },
    bob,
  );
  // Alice's call was answered, and nothing else reached her.
  const answered = await aliceCall;
  assert.equal(answered.status, 200, answered.text);
  const toAlice = answerMessages(answered);
  assert.deepEqual(
    toAlice.map((m) => m.method ?? m.id),
    [1],
  );

  // With the question guessed to be Alice's, Bob's completion waits for her answer: read after hers.
  const complete = await completing;
  assert.equal(complete.status, 200, complete.text);
  const values = (complete.json as { result?: { completion?: { values?: string[] } } }).result?.completion?.values ?? [];
  const answers = JSON.parse(values[0] ?? '[]') as Array<{ error?: { code?: number } }>;
  assert.equal(answers.length, 1, complete.text);
  assert.equal(typeof answers[0].error?.code, 'number', `the child's question is refused, not answered by someone: ${complete.text}`);

  // The one call in flight still gets its own question.
  const own = await openSse(
    gw.url,
    'POST',
    alice,
    JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'script', arguments: { steps: [{ ask: FORM }] } } }),
  );
  t.after(() => own.close());
  const ask = await nextSseMessage(own, 20_000);
  assert.equal(ask.method, 'elicitation/create', JSON.stringify(ask));
  assert.equal((await post(gw.url, { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { n: '4111' } } }, alice)).status, 202);
  const done = (await messagesUntilResponse(own, 3)).at(-1) as { result?: { content?: Array<{ text?: string }> } };
  assert.deepEqual(JSON.parse(done.result?.content?.[0]?.text ?? 'null'), [{ result: { action: 'accept', content: { n: '4111' } } }]);
});
