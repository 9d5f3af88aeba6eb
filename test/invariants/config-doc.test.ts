// docs/config.md lists every limit with its default.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { REPO_ROOT } from '../helpers/gateway.js';

test('docs/config.md has one row per limit with the default from src/core/limits.ts', () => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/config.md'), 'utf8');
  const rows = new Map<string, string>();
  for (const m of doc.matchAll(/^\| `([a-zA-Z]+)` \| (\d+) \|/gm)) rows.set(m[1], m[2]);
  assert.deepEqual([...rows.keys()].sort(), Object.keys(DEFAULT_LIMITS).sort());
  for (const [k, v] of Object.entries(DEFAULT_LIMITS)) assert.equal(rows.get(k), String(v), k);
});
