// Regression (found by h-secrets): when a host application's hook or identity() threw on an MCP
// route, the library logged the request's target whole (`url: "/mcp?access_token=…"`). A query is
// where a client puts a token it should not (RFC 6750 §2.3) and where an HTTP+SSE session's id
// travels (`/messages?sessionId=…`). The line now gives the path and `?…`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

const TOKEN = 'PLANTED_QUERY_TOKEN_a91c';

test('a host hook or identity() that throws on a request with a query: the log line names the path, not the query', async (t) => {
  const sy = switchyard(t);
  const app = Fastify();
  t.after(() => app.close());
  app.addHook('onRequest', async (req) => {
    if (req.headers['x-fail'] === 'hook') throw new Error('host hook bug');
  });
  await app.register(sy.plugin, {
    identity: (req) => {
      if (req.headers['x-fail'] === 'identity') throw new Error('host identity bug');
      return null;
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp?access_token=${TOKEN}`;
  const body = JSON.stringify(modernBody(1, 'tools/list'));
  for (const fail of ['hook', 'identity']) {
    const res = await request(url, { method: 'POST', headers: { ...modernHeaders('tools/list'), 'x-fail': fail }, body });
    assert.equal(res.statusCode, 500);
    await res.body.text();
  }
  assert.deepEqual(
    sy.records.filter((r) => (r.level as number) >= 50).map((r) => [r.msg, r.url]),
    [
      ['a hook of the host application threw', '/mcp?…'],
      ['the identity() of the host application threw', '/mcp?…'],
    ],
  );
  assert.doesNotMatch(JSON.stringify(sy.records), new RegExp(TOKEN));
});
