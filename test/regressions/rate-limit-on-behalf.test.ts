// Regression (found by h-refuse2 while counting rate-limit refusals): a 2026-07-28 `tools/call`
// took two tokens of a rate limit that counts every request of a principal, its own and one for
// the `tools/list` the door runs on its behalf to read the tools' x-mcp-header annotations
// (stateless-2026-07-28, server/tools#x-mcp-header). With `burst: 2` the second call of a fresh
// gateway was refused 429. A request the gateway makes on a request's behalf (`onBehalf`) now
// takes no token; policy and curation still apply to it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernCall } from '../helpers/identity.js';
import { configGateway } from '../helpers/ops.js';

const echo = (message: string) => ({ name: 'echo', arguments: { message } });

test('a 2026-07-28 tools/call takes one token of a per-principal rate limit, not two: its annotation list takes none', async (t) => {
  const gw = await configGateway(t, {
    rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 0.001, burst: 2 }],
    upstreams: { demo: { transport: 'embedded' } },
  });
  const first = await modernCall(gw.url, 1, 'tools/call', echo('one'));
  assert.equal(first.status, 200);
  assert.deepEqual((first.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: one' }]);
  const second = await modernCall(gw.url, 2, 'tools/call', echo('two'));
  assert.equal(second.status, 200);
  assert.deepEqual((second.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: two' }]);
  // The bucket is empty now: the limit still holds for the client's own requests.
  const third = await modernCall(gw.url, 3, 'tools/call', echo('three'));
  assert.equal(third.status, 429);
  assert.equal((third.json as { error: { code: number } }).error.code, -32011);
});
