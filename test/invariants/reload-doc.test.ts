// docs/operations.md ("Hot reload") names every key a reload cannot change in place: the list
// had fallen behind the code (trustProxy, publicBaseUrl, listCache and six listener-wide limits
// were reported as needing a restart, undocumented; found by h-docs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LISTENER_LIMITS, RESTART_KEYS } from '../../src/runtime.js';
import { REPO_ROOT } from '../helpers/gateway.js';

test('docs/operations.md lists exactly the restart keys and listener-wide limits of src/runtime.ts', () => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const m = /^- Keys a reload cannot change in place \(([\s\S]*?)\) are logged as needing a restart/m.exec(doc);
  assert.ok(m, 'the "Keys a reload cannot change in place" item');
  const named = new Set([...m[1].matchAll(/`([A-Za-z]+)`/g)].map((x) => x[1]));
  assert.deepEqual([...named].sort(), [...RESTART_KEYS, ...LISTENER_LIMITS].sort());
});
