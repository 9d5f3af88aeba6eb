// Static API keys: SHA-256 storage, lookup, and config refusals.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { createApiKeyStore, hashApiKey } from '../../src/auth/api-keys.js';

const KEY_A = 'k1_9J3xq0Vb5mN2pL8rT4wY6zA7cE1gH3jK';
const KEY_B = 'k2_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc';

test('hashApiKey is SHA-256 hex of the UTF-8 bytes', () => {
  assert.equal(hashApiKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('a configured key yields its identity; any other string yields null', () => {
  const store = createApiKeyStore([
    { name: 'ci', sha256: hashApiKey(KEY_A), scopes: ['mcp:read'] },
    // Upper-case hex is accepted as written by some tools.
    { name: 'ops', sha256: hashApiKey(KEY_B).toUpperCase() },
  ]);
  assert.equal(store.size, 2);
  assert.deepEqual(store.lookup(KEY_A), { issuer: 'switchyard:api-key', subject: 'ci', scopes: ['mcp:read'], claims: {}, source: 'api-key' });
  assert.deepEqual(store.lookup(KEY_B), { issuer: 'switchyard:api-key', subject: 'ops', scopes: [], claims: {}, source: 'api-key' });
  assert.equal(store.lookup(`${KEY_A}x`), null);
  assert.equal(store.lookup(''), null);
  assert.equal(store.lookup(hashApiKey(KEY_A)), null);
});

test('malformed hashes and duplicate names or hashes are config errors', () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err instanceof SwitchyardError ? `${err.code} ${err.message}` : String(err);
    }
    return 'no error';
  };
  assert.equal(
    code(() => createApiKeyStore([{ name: 'a', sha256: 'abc' }])),
    'SWY_ERR_CONFIG_INVALID Invalid configuration: auth/apiKeys/0: sha256 must be 64 hex digits',
  );
  assert.equal(
    code(() =>
      createApiKeyStore([
        { name: 'a', sha256: hashApiKey(KEY_A) },
        { name: 'a', sha256: hashApiKey(KEY_B) },
      ]),
    ),
    'SWY_ERR_CONFIG_INVALID Invalid configuration: auth/apiKeys/1: duplicate name a',
  );
  assert.equal(
    code(() =>
      createApiKeyStore([
        { name: 'a', sha256: hashApiKey(KEY_A) },
        { name: 'b', sha256: hashApiKey(KEY_A).toUpperCase() },
      ]),
    ),
    'SWY_ERR_CONFIG_INVALID Invalid configuration: auth/apiKeys/1: duplicate sha256',
  );
});
