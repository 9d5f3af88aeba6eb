// The shape checks of an upstream's answer (src/core/upstream-answers.ts): what passes, what is
// SWY_ERR_UPSTREAM_PROTOCOL, and that the detail stays short whatever the upstream sent (a 5 MB
// string is cut before it is quoted; a bigint, which JSON.stringify throws on, is written).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PeerRpcError, SwitchyardError } from '../../src/core/errors.js';
import { upstreamError, upstreamResult } from '../../src/core/upstream-answers.js';

const detailOf = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    assert.equal(err.code, 'SWY_ERR_UPSTREAM_PROTOCOL');
    return err.message;
  }
  return 'passed';
};

test('results: objects pass; anything else, and lists whose items are not named objects, are protocol errors with a short detail', () => {
  const ok = { content: [] };
  assert.equal(upstreamResult('tools/call', ok), ok);
  assert.equal(
    detailOf(() => upstreamResult('tools/list', { tools: [{ name: 'a' }], nextCursor: 'x' })),
    'passed',
  );
  assert.equal(
    detailOf(() => upstreamResult('resources/templates/list', { resourceTemplates: [{ uriTemplate: 'a/{b}' }] })),
    'passed',
  );
  assert.equal(
    detailOf(() => upstreamResult('tools/call', 'not an object')),
    'Upstream protocol error: tools/call: a result that is not an object: "not an object"',
  );
  assert.equal(
    detailOf(() => upstreamResult('tools/call', null)),
    'Upstream protocol error: tools/call: a result that is not an object: null',
  );
  assert.equal(
    detailOf(() => upstreamResult('tools/call', undefined)),
    'Upstream protocol error: tools/call: a result that is not an object: nothing',
  );
  assert.equal(
    detailOf(() => upstreamResult('tools/call', [1, 2])),
    'Upstream protocol error: tools/call: a result that is not an object: an array of 2',
  );
  assert.equal(
    detailOf(() => upstreamResult('tools/call', 2n ** 70n)),
    'Upstream protocol error: tools/call: a result that is not an object: 1180591620717411303424',
  );
  const big = detailOf(() => upstreamResult('tools/call', 'x'.repeat(5_000_000)));
  assert.ok(big.length < 250, `${big.length} characters`);
  assert.ok(big.endsWith('…'));
  assert.equal(
    detailOf(() => upstreamResult('tools/list', { tools: 'x' })),
    'Upstream protocol error: tools/list: tools is not an array: "x"',
  );
  assert.equal(
    detailOf(() => upstreamResult('tools/list', {})),
    'Upstream protocol error: tools/list: tools is not an array: nothing',
  );
  assert.equal(
    detailOf(() => upstreamResult('prompts/list', { prompts: [{ name: 'a' }, { title: 'no name', n: 2n }] })),
    'Upstream protocol error: prompts/list: prompts[1] is not an object with a string name: an object',
  );
  assert.equal(
    detailOf(() => upstreamResult('resources/list', { resources: [null] })),
    'Upstream protocol error: resources/list: resources[0] is not an object with a string uri: null',
  );
});

test('errors: a JSON-RPC error object is the peer error; anything else is a protocol error', () => {
  const e = upstreamError({ code: -32602, message: 'bad', data: { x: 1 } });
  assert.ok(e instanceof PeerRpcError);
  assert.deepEqual(e.rpc, { code: -32602, message: 'bad', data: { x: 1 } });
  for (const [raw, shown] of [
    [{ code: 'notanumber', message: 42 }, 'an object'],
    [{ code: 1.5, message: 'x' }, 'an object'],
    [{ code: 2n ** 70n, message: 'x' }, 'an object'],
    ['boom', '"boom"'],
    [true, 'true'],
  ] as const) {
    const err = upstreamError(raw);
    assert.ok(err instanceof SwitchyardError, JSON.stringify(shown));
    assert.equal(err.message, `Upstream protocol error: an error that is not a JSON-RPC error object: ${shown}`);
  }
});
