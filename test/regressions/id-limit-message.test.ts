// Regression (found by a tester): with `--limit maxIdBytes=8` a request whose id is the 11-byte
// string "abcdefghijk" was refused -32600 with "id must be a string of at most 256 bytes …": the
// catalogue's text named the default, not the bound in force, and so did the progressToken
// refusal (-32602). Both now end with the configured bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('with --limit maxIdBytes=8, the id and progressToken refusals name 8 bytes; 8 bytes pass, 9 do not', async (t) => {
  const gw = await startCli(t, ['--no-admin', '--limit', 'maxIdBytes=8']);
  const h = modernHeaders('tools/list');

  const id = await post(gw.url, modernBody('abcdefghijk', 'tools/list'), h);
  assert.equal(id.status, 400);
  assert.deepEqual(id.json, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Invalid Request: id must be a string or an integer in the int64 range: a string id is at most 8 bytes' },
  });
  assert.equal((await post(gw.url, modernBody('abcdefgh', 'tools/list'), h)).status, 200);
  assert.equal((await post(gw.url, modernBody('abcdefghi', 'tools/list'), h)).status, 400);

  const token = await post(gw.url, modernBody(7, 'tools/list', { _meta: { progressToken: 'abcdefghi' } }), h);
  assert.equal(token.status, 400);
  assert.deepEqual(token.json, {
    jsonrpc: '2.0',
    id: 7,
    error: { code: -32602, message: 'Invalid params: progressToken must be a string or an integer in the int64 range: a string token is at most 8 bytes' },
  });
  assert.equal((await post(gw.url, modernBody(8, 'tools/list', { _meta: { progressToken: 'abcdefgh' } }), h)).status, 200);
});
