// Regression: the request context, the HTTP exchange, the reply sink and the 2025 session's were
// object literals with getters, which V8 (Node 20) builds in dictionary mode: every read of them
// was a hash lookup, and the 2026-07-28 demo call cost about a third more server CPU than now
// (docs/performance.md, "Objects in dictionary mode"). The fixture asks V8 itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../helpers/gateway.js';

const run = promisify(execFile);

test('every per-request object of the 2026-07-28 and 2025 paths has fast properties', async () => {
  const fixture = path.join(REPO_ROOT, 'dist', 'test', 'fixtures', 'fast-objects.js');
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', fixture], { timeout: 60_000 });
  assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1)!), {
    // The probe can say false: a literal with a getter.
    control: false,
    exchange: true,
    'reply sink': true,
    'context 2026-07-28': true,
    'context 2025-03-26': true,
    'request end message': true,
    'upstream call end message': true,
  });
});
