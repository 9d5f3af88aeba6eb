// `switchyard probe` against an HTTP+SSE server that answers initialize in the POST's own answer
// (200 with the JSON-RPC reply) instead of as a `message` event on the stream: the reply is taken,
// as the gateway's connector takes it, but the step says where it came from and the verdict warns
// of the broken rule. Found by a trial: the step read "reply read from the stream".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { probeSseStub } from '../helpers/stub-http.js';

const eras = await eraClients();

test('an initialize reply in the POST answer is read, named as such and warned about', async (t) => {
  const s = await probeSseStub(
    t,
    (m) => ({ jsonrpc: '2.0', id: m?.id, result: { protocolVersion: '2024-11-05', capabilities: {}, serverInfo: { name: 'p', version: '1' } } }),
    { inPost: true },
  );
  const v = await probeUrl(s.url, eras, { timeoutMs: 2000 });
  assert.deepEqual([v.ok, v.era, v.transport], [true, '2024-11-05', 'http+sse']);
  assert.equal(v.steps[v.steps.length - 1].note, "reply read from the POST's answer (HTTP 200), not from the stream (tolerated)");
  assert.deepEqual(v.warnings, ["the endpoint answered initialize in the POST's own answer (HTTP 200): 2024-11-05 has the server send replies on the stream"]);
});
