// A new-user trial of the library: a config value holding a function or a symbol (a getter's
// result forgotten, `logLevel: getLevel`) made createSwitchyard throw a bare `DataCloneError`
// (`() => 'debug' could not be cloned.`, code 25) instead of SWY_ERR_CONFIG_INVALID naming the
// path; a `Map` of keys, or a `Date`, was taken for `{}` and served the embedded demo; and a
// misspelt option (`{ logger: app.log }`, fastify's own name for it) was ignored without a word,
// so the host's logger never saw a line. docs/embedding.md, "Config".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSwitchyard, SwitchyardError, type SwitchyardConfig, type SwitchyardOptions } from '../../src/index.js';
import { validateConfig } from '../../src/config/load.js';

/** What createSwitchyard throws: a catalogue config error, its message and `data.errors`. */
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

const DATA = 'must be JSON data (a string, number, boolean, null, array or object), not';

test('a function or a symbol in the config is refused with its path, every one of them', () => {
  const { message, errors } = refusal({
    logLevel: () => 'debug',
    upstreams: { s: { command: 'node', args: ['server.js', Symbol('x')], env: { TOKEN: () => 't' } } },
  });
  assert.deepEqual(errors, [
    { path: '/logLevel', message: `${DATA} a function` },
    { path: '/upstreams/s/args/1', message: `${DATA} a symbol` },
    { path: '/upstreams/s/env/TOKEN', message: `${DATA} a function` },
  ]);
  assert.equal(
    message,
    `Invalid configuration: createSwitchyard: 3 errors: /logLevel: ${DATA} a function; /upstreams/s/args/1: ${DATA} a symbol; /upstreams/s/env/TOKEN: ${DATA} a function`,
  );
});

test('a Map or a Date is refused, as the config or inside it, not served as the embedded demo', () => {
  assert.deepEqual(refusal(new Map([['logLevel', 'debug']])), {
    message: 'Invalid configuration: createSwitchyard: 1 error: config (the first argument): must be an object, not a Map',
    errors: [{ path: '', message: 'must be an object, not a Map' }],
  });
  assert.deepEqual(refusal({ upstreams: new Map() }).errors, [{ path: '/upstreams', message: `${DATA} a Map` }]);
  assert.deepEqual(refusal({ cluster: { sessionMaxAgeMs: new Date(0) } }).errors, [{ path: '/cluster/sessionMaxAgeMs', message: `${DATA} a Date` }]);
  // A plain object, a null-prototype one and an instance of the host's own class are data.
  assert.equal(createSwitchyard(Object.assign(Object.create(null) as object, { logLevel: 'warn' as const })).config.logLevel, 'warn');
  class Settings {
    logLevel = 'error' as const;
  }
  assert.equal(createSwitchyard(new Settings()).config.logLevel, 'error');
});

test('an option createSwitchyard does not know is refused, naming it and the options', () => {
  const head = 'Invalid configuration: createSwitchyard options (the second argument): ';
  assert.equal(refusal({}, { logger: { info() {} } }).message, `${head}"logger" is not an option (the options are: log, interceptors)`);
  assert.equal(refusal({}, { logger: 1, interceptor: [] }).message, `${head}"logger", "interceptor" are not options (the options are: log, interceptors)`);
  // The two options, and none, are still taken.
  createSwitchyard({}, {});
  createSwitchyard({}, { interceptors: [] });
});

// The library reads no environment, so `cluster.redis` without `cluster.key` no longer tells the
// embedder to set SWITCHYARD_CLUSTER_KEY (which it then did, and got the same error); the CLI's
// message, where that variable is read, still names it.
test('cluster.redis without a key names the config key to the library, the variable to the CLI', () => {
  assert.deepEqual(refusal({ cluster: { redis: 'redis://127.0.0.1:6379' } }).errors, [
    { path: '/cluster/key', message: 'is required with cluster.redis (a base64 key of 32 random bytes: openssl rand -base64 32)' },
  ]);
  assert.throws(
    () => validateConfig({ cluster: { redis: 'redis://127.0.0.1:6379' } }, 'switchyard.yaml'),
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.message ===
        'Invalid configuration: switchyard.yaml: 1 error: /cluster/key: is required with cluster.redis (set SWITCHYARD_CLUSTER_KEY: openssl rand -base64 32)',
  );
});
