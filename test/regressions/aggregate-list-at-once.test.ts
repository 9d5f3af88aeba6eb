// The aggregate asks its members for a list at once. Found reading the code (the last note left
// the aggregate's fan-outs open): `gather` asked one member after another, so an aggregate list
// took the sum of its members' times, and one slow member (within its own requestTimeoutMs) held
// back every list of the mount. Member `a` below answers only once `b` has been asked too (or
// after 5 s, as `alone`): asked in turn, `a` would wait out its 5 s before `b` was asked.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { recordingLogger, REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const BARRIER = path.join(REPO_ROOT, 'test/fixtures/barrier-server.mjs');

test('an aggregate tools/list asks every member at once, and lists their tools in config order', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-barrier-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      admin: false,
      upstreams: {
        a: { command: process.execPath, args: [BARRIER, dir, 'a', 'b'] },
        b: { command: process.execPath, args: [BARRIER, dir, 'b'] },
      },
      aggregate: { upstreams: ['a', 'b'], path: '/all/mcp' },
    },
    'test',
    { expandEnv: false },
  );
  const gw = await startGatewayFromConfig(config, recordingLogger([]));
  t.after(() => gw.close());
  const url = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const r = await post(url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.equal(r.status, 200, r.text);
  const names = (r.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name);
  assert.deepEqual(names, ['a__saw_b', 'b__listed']);
});
