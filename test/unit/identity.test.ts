// The principal key that binds sessions and held calls: stable per principal, distinct across
// principals and from the anonymous caller, whether or not it was asked before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { principalKey, type Identity } from '../../src/core/identity.js';

const identity = (issuer: string, subject: string): Identity =>
  Object.freeze({ issuer, subject, scopes: Object.freeze([]), claims: Object.freeze({}), source: 'jwt' as const });

const expected = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

test('principalKey: SHA-256 over issuer and subject (anonymous: its own), the same on every ask', () => {
  const alice = identity('https://as.example', 'alice');
  for (let round = 0; round < 3; round++) {
    assert.equal(principalKey(alice), expected('https://as.example\0alice'));
    assert.equal(principalKey(null), expected('anonymous'));
    // Another object for the same principal: the same key.
    assert.equal(principalKey(identity('https://as.example', 'alice')), expected('https://as.example\0alice'));
  }
  assert.notEqual(principalKey(identity('https://as.example', 'bob')), principalKey(alice));
  assert.notEqual(principalKey(identity('https://other.example', 'alice')), principalKey(alice));
  assert.equal(principalKey(alice).length, 22);
});
