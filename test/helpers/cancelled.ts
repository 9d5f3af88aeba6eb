// Test helper: what reasons an upstream fixture was given in its notifications/cancelled (test/fixtures/eliciting-server.mjs, CANCELLED_FILE).

import { existsSync, readFileSync } from 'node:fs';

/**
 * The `reason` of each `notifications/cancelled` the eliciting fixture appended to `file` (one
 * JSON line of params each, in the order it got them); [] while it got none.
 */
export function cancelledReasons(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { reason: string }).reason);
}
