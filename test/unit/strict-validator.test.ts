// The strict validator alone: a valid message passes the quick check, an invalid one reports every
// violation (the full validator runs only after the quick one refused). See schema/<rev>/schema.json.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStrictValidator } from '../../src/strict/validator.js';

const silent = { warn() {}, info() {}, error() {}, debug() {} } as never;

test('strict validator: a valid tools/call passes; one with two faults reports both paths', () => {
  const v = createStrictValidator({ mode: 'log', log: silent });
  const good = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } };
  for (let i = 0; i < 3; i++) assert.deepEqual(v.check('in', '2025-06-18', good, 'tools/call'), []);
  const bad = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7, arguments: 'not an object' } };
  const found = v.check('in', '2025-06-18', bad, 'tools/call');
  const paths = found.map((f) => f.path).sort();
  assert.deepEqual(paths, ['/params/arguments', '/params/name']);
  for (const f of found) assert.match(f.message, /^CallToolRequest: must be /);
  // The same valid message after a refused one: still nothing.
  assert.deepEqual(v.check('in', '2025-06-18', good, 'tools/call'), []);
});

test('strict validator: a result that breaks CallToolResult is reported under /result', () => {
  const v = createStrictValidator({ mode: 'log', log: silent });
  const ok = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x' }] } };
  assert.deepEqual(v.check('out', '2025-06-18', ok, 'tools/call'), []);
  const broken = { jsonrpc: '2.0', id: 1, result: { content: 'x' } };
  const found = v.check('out', '2025-06-18', broken, 'tools/call');
  assert.ok(
    found.some((f) => f.path === '/result/content' && f.message.startsWith('CallToolResult: ')),
    JSON.stringify(found),
  );
});
