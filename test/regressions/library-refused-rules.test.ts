// Found rereading the config checks (2026-12-07): createSwitchyard refused a config with a schema
// error listing that error, duplicate limit names and renames to one name, but not its policy
// rules whose CEL does not compile (the loader compiles them only when given the CEL compiler,
// which the library did not load), so the host fixed one error and met the rules at ready().
// `switchyard validate` lists them all in one run; createSwitchyard now lists the same.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSwitchyard, SwitchyardError, type SwitchyardConfig } from '../../src/index.js';
import { validateFile } from '../helpers/cli.js';

/** The SwitchyardError `fn` throws synchronously. */
function thrown(fn: () => unknown): SwitchyardError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SwitchyardError);
    return err;
  }
  assert.fail('expected a throw');
}

/** The issues `switchyard validate` lists for `config` written as a JSON file. */
async function validateIssues(t: { after(fn: () => void): void }, config: SwitchyardConfig): Promise<Array<{ path: string; message: string }>> {
  const r = await validateFile(t, 'c.json', JSON.stringify(config));
  assert.equal(r.code, 1);
  return r.stdout
    .split('\n')
    .slice(1, -1)
    .map((l) => ({ path: l.slice(2, l.indexOf(': ')), message: l.slice(l.indexOf(': ') + 2) }));
}

const limit = (name: string) => ({ name, per: 'principal' as const, ratePerSec: 1, burst: 1 });

for (const mapKey of ['upstreams', 'mcpServers'] as const) {
  test(`createSwitchyard with a schema error (${mapKey}): the rules' CEL errors are listed with it, limit names and renames too, as validate lists them`, async (t) => {
    const config: SwitchyardConfig = {
      listen: { path: '/api', bogus: 1 } as SwitchyardConfig['listen'],
      policy: { default: 'allow', rules: [{ name: 'top', effect: 'deny', when: 'request.tool ===' }] },
      rateLimits: [limit('a'), limit('a')],
      [mapKey]: {
        demo: {
          transport: 'embedded',
          policy: { default: 'allow', rules: [{ name: 'mine', effect: 'deny', when: 'component.name ==' }] },
          tools: { rename: { add: 'plus', echo: 'plus' } },
        },
      },
    };
    const errors = [
      { path: '/listen/bogus', message: 'is not a known key' },
      { path: `/${mapKey}/demo/policy/rules/0/when`, message: 'Unexpected token: EOF (at character 18)' },
      { path: `/${mapKey}/demo/tools/rename/echo`, message: 'renames to plus, as add does' },
      { path: '/policy/rules/0/when', message: 'Unexpected character: = (at character 16)' },
      { path: '/rateLimits/1/name', message: 'duplicate limit name a (also /rateLimits/0/name)' },
    ].sort((a, b) => (a.path < b.path ? -1 : 1));
    const err = thrown(() => createSwitchyard(config));
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.deepEqual(err.data?.errors, errors);
    assert.equal(err.message, `Invalid configuration: createSwitchyard: 5 errors: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
    assert.deepEqual(await validateIssues(t, config), errors);
  });
}

test('createSwitchyard with a schema error and a duplicate rule name: listed as validate lists it', async (t) => {
  const config: SwitchyardConfig = {
    logLevel: 'loud' as SwitchyardConfig['logLevel'],
    policy: {
      default: 'deny',
      rules: [
        { name: 'r', effect: 'allow', when: 'true' },
        { name: 'r', effect: 'allow', when: 'false' },
      ],
    },
  };
  const err = thrown(() => createSwitchyard(config));
  assert.deepEqual(err.data?.errors, await validateIssues(t, config));
  assert.deepEqual(
    (err.data?.errors as Array<{ path: string }>).map((e) => e.path),
    ['/logLevel', '/policy/rules/1/name'],
  );
});
