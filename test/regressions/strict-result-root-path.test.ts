// Found by h-trial4: a response whose `result` itself is wrong (an upstream answering a string,
// or null) was logged by --strict with path `/result/`, a JSON Pointer to a member named "" of
// the result, not to the result. The result's own checks were prefixed `/result` and their root
// path is `/`, so the two joined into `/result/`; the root of the result is `/result`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';

const MALFORMED = path.join(REPO_ROOT, 'test/fixtures/malformed-server.mjs');

test('--strict: a result that is not an object is logged at path /result, not /result/', async (t) => {
  const gw = await gateway(t, { strict: 'log', stdio: `"${process.execPath}" "${MALFORMED}"` });
  const h = await initSession(gw.url, '2025-11-25');
  const r = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'string-result', arguments: {} } }, h);
  assert.equal(r.status, 200, r.text);
  const found = gw.records
    .filter((x) => x.msg === 'strict: schema violation')
    .map((x) => x.strict as { direction: string; path: string; message: string })
    .filter((v) => v.direction === 'from-upstream' && v.message.startsWith('CallToolResult'));
  assert.ok(found.length > 0, 'the result is said');
  assert.deepEqual(
    found.map((v) => v.path),
    found.map(() => '/result'),
  );
});
