// Found by a trial as an embedding developer: a host interceptor that resolved with something
// other than an object made a malformed answer. In 2026-07-28 a string result was spread into the
// result (`{"0":"a","1":" ",…,"resultType":"complete"}`) and a number or null vanished into an
// empty success; in the 2025 eras the encoder threw a TypeError, answered -32603 "Internal error"
// and logged as Switchyard's own fault; an array went out as `"result":[1]`. Every revision's
// schema makes a result an object (`Result`, `"type": "object"`), so anything else is now refused
// the same way in every era: a JSON-RPC error with the request's id, -32603
// SWY_ERR_HOST_INTERCEPTOR_RESULT naming what it was, and one error line saying whose it is.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { Interceptor } from '../../src/index.js';
import { CLIENT_KINDS, connect } from '../helpers/clients.js';
import { switchyard } from '../helpers/library.js';

/** What the host's interceptor resolves a `tools/call` of echo with, by the message sent. */
const RETURNED: Record<string, unknown> = { string: 'a string', number: 42, boolean: true, null: null, array: [1], undefined: undefined };
const DETAIL: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  null: 'null',
  array: 'an array',
  undefined: 'undefined',
};
const MESSAGE = 'Internal error: an interceptor of the host application returned a result that is not a JSON object';

const rewrite: Interceptor = (next) => async (ctx) => {
  const result = await next(ctx);
  const message = (ctx.params.arguments as { message?: string } | undefined)?.message;
  return message !== undefined && message in RETURNED ? (RETURNED[message] as never) : result;
};

test('an interceptor result that is not an object is refused with -32603 SWY_ERR_HOST_INTERCEPTOR_RESULT, by every official client in every era', async (t) => {
  const sy = switchyard(t, { dialects: { legacySse: true } }, { interceptors: [rewrite] });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  for (const kind of CLIENT_KINDS) {
    const client = await connect(kind, kind === 'v1-sse-2024' ? `${base}/sse` : `${base}/mcp`);
    try {
      for (const what of Object.keys(RETURNED))
        await assert.rejects(
          client.callTool({ name: 'echo', arguments: { message: what } }),
          (err: { code?: unknown; message?: string }) => err.code === -32603 && err.message?.endsWith(`${MESSAGE}: ${DETAIL[what]}`) === true,
          `${what} by ${kind}`,
        );
      // An object passes as it was.
      assert.deepEqual((await client.callTool({ name: 'echo', arguments: { message: 'object' } })).content, [{ type: 'text', text: 'Echo: object' }]);
    } finally {
      await client.close();
    }
  }
  const said = sy.records.filter((r) => r.msg === 'an interceptor of the host application returned a result that is not a JSON object');
  assert.deepEqual(
    said.map((r) => [r.level, r.method, r.upstream, r.got]),
    [[50, 'tools/call', 'default', 'a string']],
    'the first one, once',
  );
  assert.equal(sy.records.filter((r) => (r.err as { type?: string } | undefined)?.type === 'TypeError').length, 0);
});
