// Found by an operator (2026-12-07): a config file with both a schema error and policy rules whose
// CEL does not compile got only the schema error from `switchyard validate`, from the start with
// `--config` and from a refused reload; the rule errors showed on the next run, once the schema
// error was fixed (the rules compiled only when the gateway assembled). README.md and STYLE §5
// promise every failing path in one run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI, validateFile } from '../helpers/cli.js';
import { refusedReload, startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const TOP_WHEN = 'request.tool ===';
const MOUNT_WHEN = 'component.name ==';

/** A config with two rules that do not compile (one top-level, one the upstream's own), plus `extra` laid over its top level. */
function config(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    listen: { port: 0 },
    admin: false,
    policy: { default: 'allow', rules: [{ name: 'top', effect: 'deny', when: TOP_WHEN }] },
    upstreams: {
      demo: {
        transport: 'embedded',
        policy: { default: 'allow', rules: [{ name: 'mine', effect: 'deny', when: MOUNT_WHEN }] },
      },
    },
    ...extra,
  };
}

/** The same config with one schema error: an unknown key under `listen`. */
const withSchemaError = () => config({ listen: { port: 0, bogus: 1 } });

test('validate: a schema error and two rules that do not compile are listed together, each rule error as the schema-valid file gives it', async (t) => {
  // The rule errors alone, as the file gives them once its schema error is fixed.
  const rulesOnly = await validateFile(t, 'rules.json', JSON.stringify(config()));
  assert.equal(rulesOnly.code, 1);
  const ruleLines = rulesOnly.stdout.split('\n').slice(1, -1);
  assert.deepEqual(
    ruleLines.map((l) => l.split(': ')[0]),
    ['  /policy/rules/0/when', '  /upstreams/demo/policy/rules/0/when'],
  );

  const both = await validateFile(t, 'both.json', JSON.stringify(withSchemaError()));
  assert.equal(both.code, 1);
  assert.equal(both.stdout, [`${both.file}: invalid config, 3 errors`, '  /listen/bogus: is not a known key', ...ruleLines, ''].join('\n'));
});

test('validate: duplicate limit names and two renames to one name are listed with a schema error, as the schema-valid file lists them', async (t) => {
  const limit = (name: string) => ({ name, per: 'principal', ratePerSec: 1, burst: 1 });
  const limited = (extra: Record<string, unknown> = {}) => ({
    listen: { port: 0 },
    admin: false,
    rateLimits: [limit('a'), limit('a')],
    upstreams: { demo: { transport: 'embedded', rateLimits: [limit('b'), limit('b')], tools: { rename: { add: 'plus', echo: 'plus' } } } },
    ...extra,
  });
  const alone = await validateFile(t, 'limits.json', JSON.stringify(limited()));
  assert.equal(alone.code, 1);
  const lines = alone.stdout.split('\n').slice(1, -1);
  assert.deepEqual(lines.map((l) => l.split(': ')[0]).sort(), [
    '  /rateLimits/1/name',
    '  /upstreams/demo/rateLimits/1/name',
    '  /upstreams/demo/tools/rename/echo',
  ]);

  const both = await validateFile(t, 'both.json', JSON.stringify(limited({ listen: { port: 0, bogus: 1 } })));
  assert.equal(both.code, 1);
  assert.equal(both.stdout, [`${both.file}: invalid config, 4 errors`, '  /listen/bogus: is not a known key', ...lines.sort()].join('\n') + '\n');
});

test('validate: rules the schema refused are not compiled; the well-formed ones beside them are', async (t) => {
  const file = config({
    policy: {
      default: 'allow',
      rules: [
        // `when` refused by the schema (empty): its schema error only.
        { name: 'empty', effect: 'deny', when: '' },
        // Not an object: its schema error only.
        'not-a-rule',
        // An unknown key, but a `when` that is a string: compiled, and its CEL error listed too.
        { name: 'extra', effect: 'deny', when: TOP_WHEN, colour: 'red' },
        // Well-formed, and a duplicate name: listed as the assembled gateway lists it.
        { name: 'extra', effect: 'allow', when: 'true' },
      ],
    },
    upstreams: {
      // `rules` not a list: the policy's rules are not looked at.
      demo: { transport: 'embedded', policy: { default: 'allow', rules: { name: 'x', effect: 'deny', when: MOUNT_WHEN } } },
    },
  });
  const r = await validateFile(t, 'mixed.json', JSON.stringify(file));
  assert.equal(r.code, 1);
  const paths = r.stdout
    .split('\n')
    .slice(1, -1)
    .map((l) => l.slice(2, l.indexOf(': ')));
  assert.deepEqual(paths, [
    '/policy/rules/0/when',
    '/policy/rules/1',
    '/policy/rules/2/colour',
    '/policy/rules/2/when',
    '/policy/rules/3/name',
    '/upstreams/demo/policy/rules',
  ]);
  assert.match(r.stdout, /\n {2}\/policy\/rules\/3\/name: duplicate rule name extra \(also \/policy\/rules\/2\/name\)\n/);
  assert.match(r.stdout, /\n {2}\/policy\/rules\/0\/when: must NOT have fewer than 1 characters\n/);
});

test('start with --config: the schema error and both rule errors in the one refusal (exit 1)', async (t) => {
  const file = configFile(t, withSchemaError());
  const r = spawnSync(process.execPath, [CLI, '--config', file], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines[0], `switchyard: Invalid configuration: ${file}: 3 errors`);
  assert.deepEqual(
    lines.slice(1).map((l) => l.split(': ')[0]),
    ['  /listen/bogus', '  /policy/rules/0/when', '  /upstreams/demo/policy/rules/0/when'],
  );
});

test('SIGHUP with a schema error and two rules that do not compile: one `config reload refused` line for each of the three, and the running policy stays', async (t) => {
  const running = config({
    policy: { default: 'allow', rules: [{ name: 'no-add', effect: 'deny', when: "component.name == 'add'" }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const file = configFile(t, running);
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);

  const { summary, refused } = await refusedReload(cli, file, withSchemaError());
  assert.deepEqual(
    refused.map((r) => r.path),
    ['/listen/bogus', '/policy/rules/0/when', '/upstreams/demo/policy/rules/0/when'],
  );
  assert.equal(summary.errors, 3);

  // The running policy still denies `add`.
  const res = await post(cli.url, modernBody(1, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }), modernHeaders('tools/call', 'add'));
  assert.equal((res.json as { error?: { code: number } }).error?.code, -32010);
});
