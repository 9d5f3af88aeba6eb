// The transport-neutral 2026-07-28 vocabulary in src/core keeps step with the HTTP dialect's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MODERN_CACHEABLE, MODERN_META, MODERN_METHODS } from '../../src/core/modern-meta.js';
import { CACHEABLE, META, MODERN_REQUESTS } from '../../dialects/2026-07-28/methods.js';

test('src/core/modern-meta.ts and dialects/2026-07-28/methods.ts list the same methods and _meta keys', () => {
  assert.deepEqual([...MODERN_METHODS].sort(), [...MODERN_REQUESTS].sort());
  assert.deepEqual([...MODERN_CACHEABLE].sort(), [...CACHEABLE].sort());
  assert.deepEqual(MODERN_META, META);
});
