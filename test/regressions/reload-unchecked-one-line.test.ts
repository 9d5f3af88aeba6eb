// A reload that changes a mount's `auth` checks every open stream's credential again; while the
// authorization server cannot be asked, each undecided check wrote "open stream kept: its
// credential could not be checked" at warn: one line per open stream, a thousand for a thousand
// listens. A reload's re-check now writes one such line once its checks settled, naming how many
// streams it kept unchecked (`unchecked`) with the first refusal's code (docs/security.md,
// "Revoking a key (or changing `auth`)").

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gatewayFromConfig, introspectionConfig, reloadFromConfig } from '../helpers/identity.js';
import { openTokenListens } from '../helpers/http.js';
import { listenForTest } from '../helpers/stub-http.js';

const UNCHECKED = 'open stream kept: its credential could not be checked';
/** Listens open at once, each with its own opaque token. */
const N = 6;

test('a reload while introspection answers 500 writes one unchecked line naming the six listens it kept, and one more per further reload', async (t) => {
  const state = { down: false, audience: '', posts: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.posts++;
      if (state.down) return void res.writeHead(500).end();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ active: true, sub: 'alice', aud: state.audience, exp: Math.floor(Date.now() / 1000) + 600 }));
    });
  });
  const endpoint = `${await listenForTest(t, server)}/introspect`;
  const configOf = (clockToleranceSec: number) => introspectionConfig(endpoint, clockToleranceSec, { cacheMaxMs: 0 });
  const gw = await gatewayFromConfig(t, configOf(60));
  const url = gw.urls[0];
  state.audience = url;
  const listens = await openTokenListens(t, url, N);
  state.down = true;
  const posts = state.posts;
  const lines = () => gw.records.filter((r) => r.msg === UNCHECKED);
  const reload = (tolerance: number) => reloadFromConfig(gw, configOf(tolerance));

  // The reload resolves once every check settled: each credential was asked about, none decided.
  await reload(30);
  assert.equal(state.posts - posts, N);
  assert.deepEqual(
    lines().map((r) => [r.level, r.mount, r.cause, r.code, r.unchecked]),
    [[40, 'demo', 'reload', 'SWY_ERR_AUTH_ISSUER_UNAVAILABLE', N]],
  );
  // The streams are kept.
  for (const sse of listens) assert.equal(await Promise.race([sse.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 50))]), 'open');

  // Another reload that changes `auth`: one more line, counting them again.
  await reload(20);
  assert.deepEqual(
    lines().map((r) => [r.cause, r.unchecked]),
    [
      ['reload', N],
      ['reload', N],
    ],
  );
});
