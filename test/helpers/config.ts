// Test helper: what config validation says of a value.

import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { validateConfig, type ConfigIssue } from '../../src/config/load.js';

/** The issues `validateConfig` reports for `value` (source `test`, no environment), [] when it validates. */
export function configIssuesOf(value: unknown): ConfigIssue[] {
  try {
    validateConfig(value, 'test', { env: {} });
    return [];
  } catch (err) {
    assert.ok(err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID', String(err));
    return err.data?.errors as ConfigIssue[];
  }
}
