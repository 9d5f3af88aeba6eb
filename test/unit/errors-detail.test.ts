// SwitchyardError.detail: what the message says after the catalogue's own words.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';

test('detail is the text after the catalogue message, undefined without one or when the message was replaced', () => {
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'child exited during start (3)' }).detail, 'child exited during start (3)');
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE').detail, undefined);
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { message: 'something else entirely' }).detail, undefined);
});

test("operatorDetail is the operator's detail as given, so a wrapper keeps it without parsing operatorMessage", () => {
  const said = new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', {
    detail: 'initialize: a response with both',
    operatorDetail: 'initialize: a response with both; its message "bad key"',
  });
  assert.equal(said.operatorDetail, 'initialize: a response with both; its message "bad key"');
  assert.equal(said.operatorMessage, `${said.entry.message}: initialize: a response with both; its message "bad key"`);
  // The same words as the detail: no operator message, but the field still says what was given.
  const same = new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'd', operatorDetail: 'd' });
  assert.deepEqual([same.operatorDetail, same.operatorMessage], ['d', undefined]);
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'd' }).operatorDetail, undefined);
  assert.equal(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { operatorMessage: 'whole' }).operatorDetail, undefined);
});
