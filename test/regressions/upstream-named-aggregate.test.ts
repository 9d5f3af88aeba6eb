// The validator accepted an upstream named `aggregate` beside the aggregate mount: two mounts then
// had the one name `aggregate` (ctx.mount, log lines, metrics, a reload's report). Now such a
// config is refused at /upstreams/aggregate, by the CLI, the library and a reload (the running
// config serving on); without an aggregate mount the name stays free (docs/config.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { createSwitchyard } from '../../src/index.js';
import { SwitchyardError } from '../../src/core/errors.js';
import { CLI } from '../helpers/cli.js';
import { configIssuesOf } from '../helpers/config.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';

const PROBLEM = 'is the name of the aggregate mount (in logs, metrics and reload reports); rename this upstream (or drop the top-level `aggregate`)';
const CLASHING = { upstreams: { aggregate: { transport: 'embedded' as const }, demo: { transport: 'embedded' as const } }, aggregate: {} };

test('validation refuses an upstream named aggregate beside the aggregate mount, disabled or not; without the mount the name is free', () => {
  assert.deepEqual(configIssuesOf(CLASHING), [{ path: '/upstreams/aggregate', message: PROBLEM }]);
  assert.deepEqual(configIssuesOf({ mcpServers: { aggregate: { command: 'node' }, demo: { command: 'node' } }, aggregate: { upstreams: ['demo'] } }), [
    { path: '/mcpServers/aggregate', message: PROBLEM },
  ]);
  assert.deepEqual(configIssuesOf({ ...CLASHING, upstreams: { ...CLASHING.upstreams, aggregate: { transport: 'embedded', disabled: true } } }), [
    { path: '/upstreams/aggregate', message: PROBLEM },
  ]);
  assert.deepEqual(configIssuesOf({ upstreams: CLASHING.upstreams }), []);
});

test('the CLI will not start on it: exit 1, the path and the problem on stderr', async (t) => {
  const file = configFile(t, { ...CLASHING, admin: false, listen: { port: 0 } });
  // Bounded: a CLI that started on it would run on, and be killed (code null) at the timeout.
  const r = await promisify(execFile)(process.execPath, [CLI, '--config', file], { timeout: 10_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(`  /upstreams/aggregate: ${PROBLEM}\n`), r.stderr);
});

test('createSwitchyard refuses it with SWY_ERR_CONFIG_INVALID naming /upstreams/aggregate', () => {
  assert.throws(
    () => createSwitchyard(CLASHING),
    (err: unknown) =>
      err instanceof SwitchyardError &&
      err.code === 'SWY_ERR_CONFIG_INVALID' &&
      JSON.stringify((err.data as { errors: unknown }).errors) === JSON.stringify([{ path: '/upstreams/aggregate', message: PROBLEM }]),
  );
});

test('a SIGHUP reload that would add it is refused, and the running config serves on', async (t) => {
  const running = { listen: { port: 0 }, admin: false, upstreams: { demo: { transport: 'embedded' } }, aggregate: { path: '/all' } };
  const file = configFile(t, running);
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);
  writeFileSync(file, JSON.stringify({ ...running, upstreams: { ...running.upstreams, aggregate: { transport: 'embedded' } } }));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  const FAILED = 'config reload failed; the running config stays';
  const summary = await cli.waitFor((r) => r.msg === FAILED || r.msg === 'config reloaded', from);
  assert.equal(summary.msg, FAILED);
  assert.deepEqual(
    cli.records
      .slice(from)
      .filter((r) => r.msg === 'config reload refused')
      .map((r) => [r.path, r.problem]),
    [['/upstreams/aggregate', PROBLEM]],
  );
  assert.equal(summary.errors, 1);
  const echo = { name: 'demo__echo', arguments: { message: 'on' } };
  const r = await post(cli.urls.aggregate, modernBody(1, 'tools/call', echo), modernHeaders('tools/call', echo.name));
  assert.equal((r.json as { result: { content: Array<{ text: string }> } }).result.content[0].text, 'Echo: on');
  assert.ok(!cli.records.some((x) => x.msg === 'config reloaded'));
});
