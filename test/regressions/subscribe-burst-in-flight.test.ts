// Regression from a hostile-client trial: a stdio child's subscriptions were made all at once, one
// `resources/subscribe` per URI as soon as a subscriber wanted it. One 2026-07-28 client's
// `subscriptions/listen` of 1,024 URIs (four of them: 4,096, the default maxInFlightPerUpstream)
// filled the child's in-flight bound with the gateway's own requests, and every other client's
// call was refused `Upstream overloaded` until the child had answered them all. They are now made
// one at a time (docs/upstreams.md, "Subscriptions on a stdio child").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { listenResources, modernBody, modernHeaders, post } from '../helpers/http.js';
import { configGateway } from '../helpers/ops.js';

// Declares resources.subscribe and never answers resources/subscribe; tool `twice` answers `first` (and a second time).
const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/rpc-breaking-server.mjs');

test('a listen of more URIs than the child’s in-flight bound leaves room for another client’s call', async (t) => {
  const gw = await configGateway(t, {
    admin: false,
    upstreams: { kid: { command: process.execPath, args: [FIXTURE], limits: { maxInFlightPerUpstream: 4 } } },
  });
  const url = gw.mounts.find((m) => m.name === 'kid')!.url;
  const uris = Array.from({ length: 10 }, (_, i) => `demo://burst/${i}`);
  await listenResources(t, url, uris);

  // The child answers none of the subscriptions; another client's calls still reach it.
  for (const id of [1, 2]) {
    const r = await post(url, modernBody(id, 'tools/call', { name: 'twice', arguments: { more: 0 } }), modernHeaders('tools/call', 'twice'));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual((r.json as { result?: { content?: unknown } }).result?.content, [{ type: 'text', text: 'first' }], r.text);
  }
});
