// Error codes that differ per era are mapped on the way to each client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PeerRpcError, SwitchyardError } from '../../src/core/errors.js';
import { encodeError as legacyRpcError } from '../../dialects/2025-03-26/codec.js';
import { encodeError as modernRpcError } from '../../dialects/2026-07-28/codec.js';

test('resource not found: -32602 toward 2026-07-28 clients, -32002 toward older ones', () => {
  const ours = new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: 'x://a', data: { uri: 'x://a' } });
  assert.deepEqual(modernRpcError(ours), { code: -32602, message: 'Resource not found: x://a', data: { uri: 'x://a' } });
  assert.deepEqual(legacyRpcError(ours), { code: -32002, message: 'Resource not found: x://a', data: { uri: 'x://a' } });
  // From an older upstream (-32002) to a 2026 client: -32602, message and data kept.
  assert.deepEqual(modernRpcError(new PeerRpcError({ code: -32002, message: 'gone', data: { uri: 'x://b' } })), {
    code: -32602,
    message: 'gone',
    data: { uri: 'x://b' },
  });
  // From a 2026 upstream (-32602 with data.uri) to an older client: -32002.
  assert.deepEqual(legacyRpcError(new PeerRpcError({ code: -32602, message: 'gone', data: { uri: 'x://c' } })), {
    code: -32002,
    message: 'gone',
    data: { uri: 'x://c' },
  });
  // Other -32602 errors (no uri) stay -32602.
  assert.deepEqual(legacyRpcError(new PeerRpcError({ code: -32602, message: 'bad args' })), { code: -32602, message: 'bad args' });
});

test('-32021 never reaches clients before 2026-07-28', () => {
  const e = new SwitchyardError('SWY_ERR_MODERN_CAPABILITY', { data: { requiredCapabilities: { elicitation: {}, sampling: {} } } });
  assert.deepEqual(legacyRpcError(e), {
    code: -32602,
    message: "Client cannot answer the server's input request: client did not declare elicitation, sampling",
  });
  assert.equal(modernRpcError(e).code, -32021);
});
