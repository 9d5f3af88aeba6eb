// A user trial of the library: after `close()`, the Node handler answered fastify's own
// `503 {"error":"Service Unavailable",…}` (its closed app's return503OnClosing), not the JSON-RPC
// SWY_ERR_ADMISSION_SHUTTING_DOWN that the fetch handler and the plugin answer (docs/embedding.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const SHUTTING_DOWN = { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Server is shutting down' } };

for (const used of [true, false])
  test(`after close(), the Node handler answers 503 SWY_ERR_ADMISSION_SHUTTING_DOWN as JSON-RPC, as fetch does (${used ? 'after serving' : 'never used'})`, async (t) => {
    const sy = switchyard(t, {});
    const server = http.createServer((req, res) => void sy.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const body = JSON.stringify(modernBody(1, 'tools/list'));
    const post = async (path: string) => {
      const r = await request(`${base}${path}`, { method: 'POST', headers: modernHeaders('tools/list'), body });
      return [r.statusCode, r.headers['content-type'], await r.body.json()];
    };
    if (used) assert.equal((await post('/mcp'))[0], 200);
    await sy.close();

    // fetch reads the body of a gateway that was assembled before it refuses, so answers with the
    // request's id; the Node handler of a closed gateway refuses before the body (its app is
    // closed), and so does fetch of one never used: id null (docs/embedding.md).
    const f = await sy.fetch(modernRequest('tools/list'));
    assert.deepEqual([f.status, f.headers.get('content-type'), await f.json()], [503, 'application/json', { ...SHUTTING_DOWN, id: used ? 1 : null }]);
    for (let i = 0; i < 2; i++) assert.deepEqual(await post('/mcp'), [503, 'application/json', SHUTTING_DOWN]);
  });
