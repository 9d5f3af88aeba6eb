// Golden tests of the 2024-11-05 HTTP+SSE client side, with no sockets: the handshake it offers,
// no session headers, and where an `endpoint` event may send our POSTs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpSseClient } from '../../../dialects/2024-11-05/client.js';
import { sessionClient } from '../../../dialects/2025-03-26/client.js';
import { schemaOf } from '../../helpers/schemas.js';

const c = createHttpSseClient(sessionClient);
/** As sent: a JSON-RPC request around `{ method, params }`. */
const rpc = (m: object) => ({ jsonrpc: '2.0', id: 1, ...m });
const GW = { name: 'switchyard', version: '9.9.9' };

test('initialize offers 2024-11-05 and validates against that revision (2024-11-05 basic/lifecycle)', () => {
  const m = c.initialize({ capabilities: c.sharedCapabilities, clientInfo: GW });
  assert.deepEqual(m, { method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: { elicitation: {}, sampling: {} }, clientInfo: GW } });
  schemaOf('2024-11-05')('InitializeRequest', rpc({ method: 'initialize', params: { ...m.params, capabilities: { sampling: {} } } }));
  assert.deepEqual(c.initialize({ revision: '2025-11-25', capabilities: {}, clientInfo: GW }).params.protocolVersion, '2025-11-25');
  // SDK servers over SSE may settle on a 2025 revision: accepted.
  assert.equal(c.negotiated({ protocolVersion: '2025-11-25' }), '2025-11-25');
});

test('no session header: the endpoint URL names the session (2024-11-05 basic/transports, HTTP with SSE)', () => {
  assert.deepEqual(c.sessionHeaders({ id: 'abc', revision: '2024-11-05' }), {});
});

test('the endpoint event is resolved against the stream URL; another origin is refused (2024-11-05 basic/transports)', () => {
  assert.deepEqual(c.endpoint('/messages?sessionId=abc', 'http://127.0.0.1:7/sse'), { url: 'http://127.0.0.1:7/messages?sessionId=abc' });
  assert.deepEqual(c.endpoint('messages?sessionId=abc', 'http://127.0.0.1:7/a/sse'), { url: 'http://127.0.0.1:7/a/messages?sessionId=abc' });
  assert.deepEqual(c.endpoint('http://127.0.0.1:7/m', 'http://127.0.0.1:7/sse'), { url: 'http://127.0.0.1:7/m' });
  assert.deepEqual(c.endpoint('http://127.0.0.9:9/messages', 'http://127.0.0.1:7/sse'), {
    refused: 'endpoint http://127.0.0.9:9/messages is on another origin: refused',
  });
  assert.deepEqual(c.endpoint('http://[', 'http://127.0.0.1:7/sse'), { refused: 'endpoint "http://[" is not a URL' });
});
