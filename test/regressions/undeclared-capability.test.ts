// Found by a trial (2026-12-04): a legacy stdio child's elicitation/create (or sampling) for a
// 2026-07-28 client that declared no such capability came back as an input_required round asking
// for it — which a server MUST NOT do (2026-07-28 basic/patterns/mrtr) — and the held call then
// stood for clientRequestTimeoutMs, during which every other client's elicitation through that
// child was refused as unroutable. The client now gets -32021 with requiredCapabilities at once
// (as from the embedded demo), and the child's call is given up.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { connect } from '../helpers/clients.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('a 2026-07-28 client without elicitation or sampling gets 400/-32021 naming the capability; another client’s elicitation is served right after', async (t) => {
  const gw = await gateway(t, { stdio: everythingStdioCommand() });
  for (const [tool, capability] of [
    ['trigger-elicitation-request', 'elicitation'],
    ['trigger-sampling-request', 'sampling'],
  ]) {
    const r = await post(
      gw.url,
      modernBody(1, 'tools/call', { name: tool, arguments: tool === 'trigger-sampling-request' ? { prompt: 'hi' } : {} }),
      modernHeaders('tools/call', tool),
    );
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.json, {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { [capability]: {} } } },
    });
  }
  // Nothing is held for the refused calls: a 2025 client that declared elicitation is asked at once.
  for (let i = 0; i < 100 && gw.executor.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
  const client = await connect('v1-streamable', gw.url, { name: 'Ada' });
  t.after(() => client.close());
  const asked = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
  assert.equal(asked.content?.[0]?.text, '✅ User provided the requested information!');
  assert.equal(client.elicitations.length, 1);
});

test('a 2026-07-28 client that declared elicitation still gets the input_required round', async (t) => {
  // The round's upstream call stays held, in flight: a short shutdown grace, so that the
  // teardown's close does not wait the default 5 s for a retry that never comes.
  const gw = await gateway(t, { stdio: everythingStdioCommand(), limits: { ...DEFAULT_LIMITS, shutdownGraceMs: 200 } });
  const r = await post(
    gw.url,
    modernBody(1, 'tools/call', { name: 'trigger-elicitation-request', arguments: {} }, { elicitation: {} }),
    modernHeaders('tools/call', 'trigger-elicitation-request'),
  );
  assert.equal(r.status, 200, r.text);
  const result = (r.json as { result: { resultType: string; inputRequests: Record<string, { method: string }> } }).result;
  assert.equal(result.resultType, 'input_required');
  assert.deepEqual(
    Object.values(result.inputRequests).map((x) => x.method),
    ['elicitation/create'],
  );
});
