// Found rereading the config checks (2026-12-07): a schema-valid `mcpServers` file whose server
// had a rule that does not compile, two limits of one name or two renames to one name was refused
// by `switchyard validate`, the start with --config and a reload at `/upstreams/NAME/…`, a JSON
// Pointer that is not in the file: those checks run on the normalized config. So did the library's
// ready() for such a config. The paths are now the file's own, `/mcpServers/NAME/…`, as they are
// when the same file also has a schema error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI, validateFile } from '../helpers/cli.js';
import { refusedReload, startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { switchyard } from '../helpers/library.js';

const limit = (name: string) => ({ name, per: 'principal', ratePerSec: 1, burst: 1 });

/** An `mcpServers` file whose server `demo` has a rule that does not compile, two limits named `b` and two renames to `plus`. */
function mcpServers(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    listen: { port: 0 },
    admin: false,
    mcpServers: {
      demo: {
        transport: 'embedded',
        policy: { default: 'allow', rules: [{ name: 'mine', effect: 'deny', when: 'component.name ==' }] },
        rateLimits: [limit('b'), limit('b')],
        tools: { rename: { add: 'plus', echo: 'plus' } },
      },
    },
    ...extra,
  };
}

/** What is wrong in {@link mcpServers}, each at its path in that file. */
const ISSUES = [
  { path: '/mcpServers/demo/policy/rules/0/when', message: 'Unexpected token: EOF (at character 18)' },
  { path: '/mcpServers/demo/rateLimits/1/name', message: 'duplicate limit name b (also /mcpServers/demo/rateLimits/0/name)' },
  { path: '/mcpServers/demo/tools/rename/echo', message: 'renames to plus, as add does' },
];

test('validate: a schema-valid mcpServers file lists its rule, limit-name and rename errors at /mcpServers/NAME/…, as the same file with a schema error does', async (t) => {
  const r = await validateFile(t, 'servers.json', JSON.stringify(mcpServers()));
  assert.equal(r.code, 1);
  assert.equal(r.stdout, [`${r.file}: invalid config, 3 errors`, ...ISSUES.map((i) => `  ${i.path}: ${i.message}`), ''].join('\n'));

  // The refused file's policy checks read the file as written: the same lines, after the schema error.
  const both = await validateFile(t, 'both.json', JSON.stringify(mcpServers({ listen: { port: 0, bogus: 1 } })));
  assert.equal(both.code, 1);
  assert.equal(
    both.stdout,
    [`${both.file}: invalid config, 4 errors`, '  /listen/bogus: is not a known key', ...ISSUES.map((i) => `  ${i.path}: ${i.message}`), ''].join('\n'),
  );
});

test('start with --config: a schema-valid mcpServers file with those errors is refused (exit 1) naming the paths of the file', (t) => {
  const file = configFile(t, mcpServers());
  const r = spawnSync(process.execPath, [CLI, '--config', file], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  // One line per error, as the loader's refusal prints them.
  assert.equal(r.stderr, ['switchyard: Invalid configuration: policy: 3 errors', ...ISSUES.map((i) => `  ${i.path}: ${i.message}`), ''].join('\n'));
});

test('SIGHUP with a schema-valid mcpServers file with those errors: one `config reload refused` line each, at the path of the file', async (t) => {
  const running = mcpServers();
  (running.mcpServers as { demo: Record<string, unknown> }).demo = { transport: 'embedded' };
  const file = configFile(t, running);
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);

  const { summary, refused } = await refusedReload(cli, file, mcpServers());
  assert.deepEqual(
    refused.map((r) => ({ path: r.path, message: r.problem })),
    ISSUES,
  );
  assert.equal(summary.errors, 3);
});

test('createSwitchyard with the same config as a value: ready() rejects naming the paths of the value', async (t) => {
  const sy = switchyard(t, mcpServers());
  await assert.rejects(sy.ready(), (err: Error & { code?: string; data?: { errors?: unknown } }) => {
    assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
    assert.deepEqual(err.data?.errors, ISSUES);
    assert.equal(err.message, `Invalid configuration: policy: 3 errors: ${ISSUES.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    return true;
  });
});
