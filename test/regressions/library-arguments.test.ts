// A new-user trial of the library: `createSwitchyard('str')` was refused with
// `(file): must be an object (a YAML mapping)`, to a caller who passed no file and wrote no YAML,
// and a wrong second argument (null, `interceptors: 5`, a `log` that is not a logger) was not
// refused at all: it failed later as a TypeError (null at once, the others at the first request).
// Now the message names the argument the caller passed; a config file's errors still name the file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSwitchyard, SwitchyardError, type SwitchyardConfig, type SwitchyardOptions } from '../../src/index.js';
import { validateConfig } from '../../src/config/load.js';

/** The message createSwitchyard(config, options) throws, asserting it is the catalogue's config error. */
function refusal(config: unknown, options?: unknown): { message: string; errors: unknown } {
  try {
    createSwitchyard(config as SwitchyardConfig, options as SwitchyardOptions);
  } catch (err) {
    assert.ok(err instanceof SwitchyardError, `not a SwitchyardError: ${String(err)}`);
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    return { message: err.message, errors: (err.data as { errors?: unknown } | undefined)?.errors };
  }
  assert.fail('createSwitchyard did not throw');
}

test('a config that is not an object is named as createSwitchyard’s first argument, not as a file', () => {
  for (const [value, kind] of [
    ['str', 'a string'],
    [null, 'null'],
    [[{ upstreams: {} }], 'an array'],
    [5, 'a number'],
  ] as const) {
    const { message, errors } = refusal(value);
    assert.equal(message, `Invalid configuration: createSwitchyard: 1 error: config (the first argument): must be an object, not ${kind}`);
    // The data keeps the path of the config as a whole, as for a file.
    assert.deepEqual(errors, [{ path: '', message: `must be an object, not ${kind}` }]);
  }
  // A key of the object is still named by its path.
  assert.equal(refusal({ prot: 1 }).message, 'Invalid configuration: createSwitchyard: 1 error: /prot: is not a known key');
});

test('a config file that is not a mapping still names the file', () => {
  assert.throws(
    () => validateConfig('str', 'gateway.yaml'),
    (err: unknown) =>
      err instanceof SwitchyardError && err.message === 'Invalid configuration: gateway.yaml: 1 error: (file): must be an object (a YAML mapping)',
  );
});

test('a wrong second argument is refused by createSwitchyard, naming the option', () => {
  const head = 'Invalid configuration: createSwitchyard options (the second argument): ';
  assert.equal(refusal({}, null).message, `${head}must be an object, not null`);
  assert.equal(refusal({}, 'str').message, `${head}must be an object, not a string`);
  const interceptors = `${head}interceptors must be an array of functions (each \`(next) => (ctx) => Promise<result>\`)`;
  assert.equal(refusal({}, { interceptors: 5 }).message, interceptors);
  assert.equal(refusal({}, { interceptors: [() => undefined, 'x'] }).message, interceptors);
  assert.equal(refusal({}, { log: 3 }).message, `${head}log must be a pino logger or fastify's app.log (missing: error, warn, info, debug, child)`);
  assert.equal(
    refusal({}, { log: { error() {}, warn() {}, info() {}, debug() {} } }).message,
    `${head}log must be a pino logger or fastify's app.log (missing: child)`,
  );
});
