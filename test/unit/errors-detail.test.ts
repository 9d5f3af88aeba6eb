// SwitchyardError.detail: what the message says after the catalogue's own words.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';

test('detail is the text after the catalogue message, undefined without one or when the message was replaced', () => {
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'child exited during start (3)' }).detail, 'child exited during start (3)');
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE').detail, undefined);
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { message: 'something else entirely' }).detail, undefined);
});
