// Found by a client-author trial of `switchyard probe` (helper h-probe, 2026-12-05): a step that
// got no complete answer in time (a server that never answers, or sends headers and then nothing
// more) was printed as `error: The operation was aborted due to timeout`, the text of
// AbortSignal.timeout, naming neither the time nor what was missing; the gateway's `upstream down`
// line carried the same text for such an upstream. It now says `no complete answer within N ms`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { eraClients } from '../../src/gateway.js';
import { probeUrl } from '../../src/upstreams/probe.js';
import { stubHttp } from '../helpers/stub-http.js';

const eras = await eraClients();

for (const [what, answer] of [
  ['never answers', () => {}],
  ['sends its headers, then nothing', (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).write('{"jsonrpc":')],
] as const) {
  test(`a server that ${what}: the step says no complete answer came within the step's time`, async (t) => {
    const { url } = await stubHttp(t, (_req, res) => answer(res));
    const v = await probeUrl(url, eras, { timeoutMs: 300, tries: 1 });
    assert.equal(v.ok, false);
    assert.equal(v.steps[0].error, 'no complete answer within 300 ms');
    assert.equal(v.reason, 'no usable answer to server/discover: no complete answer within 300 ms');
    assert.equal(v.networkError, 'no complete answer within 300 ms');
  });
}
