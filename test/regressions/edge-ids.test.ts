// Regression: `{"id": 1.0000000000000001}` and `{"id": -1e-400}` were taken for the ids 1 and 0
// (JSON.parse rounds them); any fraction or exponent in an id or progressToken literal is now
// refused at the scanner, whatever JSON.parse makes of the number.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { classify, idOf, parseBody } from '../../src/core/message.js';
import { gateway } from '../helpers/gateway.js';
import { modernHeaders, modernMeta, post } from '../helpers/http.js';

const limits = DEFAULT_LIMITS;

/** The classification error of one message body, or its kind when it is accepted. */
function verdict(text: string): { code: string; message: string; id: unknown } | string {
  const { value } = parseBody(text, limits);
  try {
    return classify(value, limits);
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return { code: err.code, message: err.message, id: err.code === 'SWY_ERR_REQ_BAD_ID' ? null : idOf(value, limits) };
  }
}

const BAD_ID = {
  code: 'SWY_ERR_REQ_BAD_ID',
  message: 'Invalid Request: id must be a string or an integer in the int64 range: a string id is at most 256 bytes',
  id: null,
};
const badToken = (id: unknown) => ({
  code: 'SWY_ERR_REQ_BAD_PROGRESS_TOKEN',
  message: 'Invalid params: progressToken must be a string or an integer in the int64 range: a string token is at most 256 bytes',
  id,
});

test('an id literal with a fraction or an exponent is a bad id (id null), even when JSON.parse makes an integer of it', () => {
  for (const lit of ['1.0000000000000001', '-1e-400', '1.0', '1.5', '0.0', '-0.0', '1e2', '1E2', '1e+2', '1e0', '2E-0', '100e-2', '9007199254740993.0']) {
    assert.deepEqual(verdict(`{"jsonrpc":"2.0","id":${lit},"method":"ping"}`), BAD_ID, lit);
    assert.deepEqual(verdict(`{"jsonrpc":"2.0","id":${lit},"result":{}}`), BAD_ID, `response ${lit}`);
    assert.deepEqual(verdict(`{ "jsonrpc" : "2.0" , "method":"ping", "id" :\t${lit} }`), BAD_ID, `spaced ${lit}`);
  }
  // A key written with escapes is the same key.
  assert.deepEqual(verdict('{"jsonrpc":"2.0","i\\u0064":1.0,"method":"ping"}'), BAD_ID);
  assert.deepEqual(verdict('{"jsonrpc":"2.0","\\u0069\\u0064":1e2,"method":"ping"}'), BAD_ID);
  // Duplicate keys: any non-integer literal for the id refuses the message.
  assert.deepEqual(verdict('{"jsonrpc":"2.0","id":1.0,"id":1,"method":"ping"}'), BAD_ID);
});

test('integer literals stay valid ids, beyond 2^53 too; -0 is the integer 0', () => {
  assert.equal(verdict('{"jsonrpc":"2.0","id":1,"method":"ping"}'), 'request');
  assert.equal(verdict('{"jsonrpc":"2.0","id":0,"method":"ping"}'), 'request');
  assert.equal(verdict('{"jsonrpc":"2.0","id":-7,"result":{}}'), 'response');
  const neg0 = parseBody('{"jsonrpc":"2.0","id":-0,"method":"ping"}', limits).value as { id: number };
  assert.equal(classify(neg0, limits), 'request');
  assert.equal(Object.is(neg0.id, -0), true);
  const big = parseBody('{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}', limits).value as { id: unknown };
  assert.equal(big.id, 9223372036854775807n);
  assert.deepEqual(verdict('{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}'), BAD_ID);
});

test('a progressToken literal with a fraction or exponent is -32602 with the request id', () => {
  for (const lit of ['1.0', '1.0000000000000001', '-1e-400', '1e2']) {
    assert.deepEqual(verdict(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":${lit}}}}`), badToken(7), lit);
    assert.deepEqual(
      verdict(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"_meta":{"a":{"b":[1]},"progressToken":${lit}},"name":"x"}}`),
      badToken('a'),
      lit,
    );
  }
  assert.deepEqual(verdict('{"jsonrpc":"2.0","id":7,"method":"x","params":{"\\u005fmeta":{"progressTok\\u0065n":2e0}}}'), badToken(7));
  assert.equal(verdict('{"jsonrpc":"2.0","id":7,"method":"x","params":{"_meta":{"progressToken":2}}}'), 'request');
});

test('members named id or progressToken elsewhere keep their fractional values', () => {
  const text =
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"id":1.5,"progressToken":1.0,"_meta":{"progressToken":2.5}},' +
    '"x":{"_meta":{"progressToken":1e2}},"_meta":{"nested":{"progressToken":1.0}}},"result2":{"id":1.0}}';
  const { value } = parseBody(text, limits);
  assert.equal(classify(value, limits), 'request');
  assert.deepEqual(value, {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name: 'x',
      arguments: { id: 1.5, progressToken: 1, _meta: { progressToken: 2.5 } },
      x: { _meta: { progressToken: 100 } },
      _meta: { nested: { progressToken: 1 } },
    },
    result2: { id: 1 },
  });
});

test('in a batch, only the message with the bad literal is refused', () => {
  const { value, batch } = parseBody(
    '[{"jsonrpc":"2.0","id":1.0,"method":"ping"},7,[{"id":1.0}],{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{"progressToken":1e1}}}]',
    limits,
  );
  assert.equal(batch, true);
  const items = value as unknown[];
  assert.throws(
    () => classify(items[0], limits),
    (e: unknown) => e instanceof SwitchyardError && e.code === 'SWY_ERR_REQ_BAD_ID',
  );
  assert.deepEqual(items[2], [{ id: 1 }]);
  assert.equal(classify(items[3], limits), 'request');
  assert.throws(
    () => classify(items[4], limits),
    (e: unknown) => e instanceof SwitchyardError && e.code === 'SWY_ERR_REQ_BAD_PROGRESS_TOKEN',
  );
  assert.equal(idOf(items[4], limits), 3);
});

test('over HTTP: a fractional id is 400 with id null, a fractional progressToken 400 with the request id', async (t) => {
  const gw = await gateway(t);
  const meta = JSON.stringify(modernMeta());
  const ping = `{"jsonrpc":"2.0","id":1.0000000000000001,"method":"ping","params":{"_meta":${meta}}}`;
  const r1 = await post(gw.url, ping, modernHeaders('ping'));
  assert.equal(r1.status, 400);
  assert.deepEqual(r1.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: BAD_ID.message } });
  const tiny = `{"jsonrpc":"2.0","id":-1e-400,"method":"ping","params":{"_meta":${meta}}}`;
  const r2 = await post(gw.url, tiny, modernHeaders('ping'));
  assert.equal(r2.status, 400);
  assert.deepEqual(r2.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: BAD_ID.message } });
  const withToken = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},"_meta":${meta.slice(0, -1)},"progressToken":1.0}}}`;
  const r3 = await post(gw.url, withToken, modernHeaders('tools/call', 'echo'));
  assert.equal(r3.status, 400);
  assert.deepEqual(r3.json, { jsonrpc: '2.0', id: 7, error: { code: -32602, message: badToken(7).message } });
});

test('property: only the message-level id and params._meta.progressToken literals are judged, wherever else such keys occur', () => {
  const key = fc.constantFrom('id', 'params', '_meta', 'progressToken', 'x', 'jsonrpc');
  const leaf = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null));
  const obj = fc.object({ key, values: [leaf], maxDepth: 4, maxKeys: 4 });
  const idLit = fc.oneof(
    fc.integer().map(String),
    fc.constantFrom('1.0', '1e2', '-1e-400', '1.0000000000000001', '0.5', '9007199254740993', '-9223372036854775808'),
  );
  /** What parseBody must make of a number literal at a judged position. */
  const judged = (lit: string): unknown => (/[.eE]/.test(lit) ? NaN : Number.isSafeInteger(Number(lit)) ? Number(lit) : BigInt(lit));
  fc.assert(
    fc.property(idLit, obj, fc.boolean(), (lit, params, asBatch) => {
      const one = `{"jsonrpc":"2.0","method":"m","params":${JSON.stringify(params)},"id":${lit}}`;
      const text = asBatch ? `[${one},{"jsonrpc":"2.0","method":"n"}]` : one;
      const want = JSON.parse(text) as unknown;
      const msg = (Array.isArray(want) ? want[0] : want) as { id: unknown; params: { _meta?: { progressToken?: unknown } } };
      msg.id = judged(lit);
      const meta = msg.params._meta;
      if (meta && typeof meta === 'object' && !Array.isArray(meta) && typeof meta.progressToken === 'number') {
        meta.progressToken = judged(JSON.stringify((params as { _meta: { progressToken: number } })._meta.progressToken));
      }
      assert.deepEqual(parseBody(text, limits).value, want);
    }),
    { numRuns: 3_000 },
  );
});
