// Regression (known defect, reported by a colleague): an aggregate mount's list took one token of a
// rate limit per member and per page of a member's list, since the aggregate fans the list out and
// every member call passes that member's interceptor chain. With `burst: 2` and three members, a
// client's very first `tools/list` on the aggregate was refused 429. One client request now takes at
// most one token from each bucket it is charged to: the top-level limit once per aggregate request,
// a member's own limit once per aggregate request that reaches that member (however many pages).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modernCall } from '../helpers/identity.js';
import { configGateway, RAW_SERVER } from '../helpers/ops.js';
import type { RawResponse } from '../helpers/http.js';

const namesOf = (r: RawResponse): string[] => ((r.json as { result: { tools: Array<{ name: string }> } }).result.tools ?? []).map((t) => t.name);
const refusal = (r: RawResponse) => (r.json as { error: { code: number; data: { limit: string } } }).error;

test('an aggregate list of three members takes one token of a burst-2 limit: the first two lists answer, the third is refused 429', async (t) => {
  const gw = await configGateway(t, {
    rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 0.001, burst: 2 }],
    upstreams: { a: { transport: 'embedded' }, b: { transport: 'embedded' }, c: { transport: 'embedded' } },
    aggregate: {},
  });
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const first = await modernCall(agg, 1, 'tools/list', {});
  assert.equal(first.status, 200, JSON.stringify(first.json));
  const names = namesOf(first);
  for (const m of ['a', 'b', 'c']) assert.ok(names.includes(`${m}__echo`), `${m}__echo in ${names.join(' ')}`);
  assert.equal(names.length % 3, 0);
  // Another fan-out (each member's resources) is one request too.
  const second = await modernCall(agg, 2, 'resources/list', {});
  assert.equal(second.status, 200, JSON.stringify(second.json));
  // The bucket is empty now: the limit still counts the client's own requests.
  const third = await modernCall(agg, 3, 'tools/list', {});
  assert.equal(third.status, 429);
  const retryAfter = Number(third.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 1000, `Retry-After ${String(third.headers['retry-after'])}`);
  assert.equal(refusal(third).code, -32011);
  assert.equal(refusal(third).data.limit, 'all');
});

test("a member's own limit is charged once per aggregate request that reaches it, whatever its pages, and still refuses", async (t) => {
  const gw = await configGateway(t, {
    rateLimits: [{ name: 'all', per: 'principal', ratePerSec: 0.001, burst: 5 }],
    upstreams: {
      a: { transport: 'embedded' },
      b: { transport: 'embedded' },
      paged: {
        command: process.execPath,
        args: [RAW_SERVER, 'stdio', '--pages', '3'],
        rateLimits: [{ name: 'own', per: 'principal', ratePerSec: 0.001, burst: 1 }],
      },
    },
    aggregate: {},
  });
  const url = (name: string) => gw.mounts.find((m) => m.name === name)!.url;
  const agg = url('aggregate');
  // Three pages of `paged`, one token of its own bucket; one token of the top-level bucket for `a` and `b` together.
  const first = await modernCall(agg, 1, 'tools/list', {});
  assert.equal(first.status, 200, JSON.stringify(first.json));
  const names = namesOf(first);
  for (const tool of ['echo', 'greeting', 'utf8', 'trace', 'connections']) assert.ok(names.includes(`paged__${tool}`), `paged__${tool} in ${names.join(' ')}`);
  assert.ok(names.includes('a__echo') && names.includes('b__echo'));
  // The member's own bucket is empty: the next aggregate list is refused by it.
  const second = await modernCall(agg, 2, 'tools/list', {});
  assert.equal(second.status, 429);
  assert.ok(Number(second.headers['retry-after']) >= 1);
  assert.equal(refusal(second).data.limit, 'own');
  // The same bucket on the member's own mount.
  const own = await modernCall(url('paged'), 3, 'tools/list', {});
  assert.equal(own.status, 429);
  assert.equal(refusal(own).data.limit, 'own');
  // The top-level bucket took one token per aggregate request (two so far): `a`'s own mount still answers.
  const other = await modernCall(url('a'), 4, 'tools/list', {});
  assert.equal(other.status, 200, JSON.stringify(other.json));
  assert.ok(namesOf(other).includes('echo'));
});
