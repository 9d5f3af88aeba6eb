// Found by h-trial7 (2026-12): a `cluster.redis` URL whose password is not valid percent-encoding
// (`redis://:pa%ss@host`, a password with a raw `%`) or whose path is not a database number passed
// the schema's pattern and `switchyard validate` ("ok"), and then stopped every start with a bare
// `switchyard: URIError: URI malformed` (or `TypeError: Invalid pathname`), naming neither the key
// nor what to change: node-redis decodes the user name and password with decodeURIComponent and
// reads the path as a database index only when the client is created. Both are now config issues
// at /cluster/redis, and the advice they give (write % as %25) reaches a real Redis.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, startCli } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { until } from '../helpers/replicas.js';

const KEY = randomBytes(32).toString('base64');

test('a cluster.redis URL node-redis cannot parse is a config issue at /cluster/redis, in validate and at start', async (t) => {
  const redis = await startRedis(t, ['--requirepass', 'pa%ss']);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-redis-url-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.json');
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, cluster: { redis: `redis://:pa%ss@127.0.0.1:${redis.port}`, key: KEY } }));

  const validate = spawnSync(process.execPath, [CLI, 'validate', file], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(validate.status, 1);
  assert.equal(validate.stdout, `${file}: invalid config, 1 error\n  /cluster/redis: has a password that is not valid percent-encoding (write % as %25)\n`);

  const env = { ...process.env, SWITCHYARD_CLUSTER_KEY: KEY };
  const start = spawnSync(process.execPath, [CLI, '--port', '0', '--no-admin', '--config', file], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(start.status, 1);
  assert.equal(
    start.stderr,
    `switchyard: Invalid configuration: ${file}: 1 error\n  /cluster/redis: has a password that is not valid percent-encoding (write % as %25)\n`,
  );

  const flag = spawnSync(process.execPath, [CLI, '--port', '0', '--no-admin', '--redis', `redis://127.0.0.1:${redis.port}/abc`], {
    encoding: 'utf8',
    timeout: 10_000,
    env,
  });
  assert.equal(flag.status, 2);
  assert.equal(
    flag.stderr,
    'switchyard: Invalid configuration: command line: 1 error\n  /cluster/redis: has a path that is not a database number (e.g. redis://redis:6379/0)\n',
  );

  // The advice works: the same password with its % encoded reaches the real Redis.
  const cli = await startCli(t, ['--redis', `redis://:pa%25ss@127.0.0.1:${redis.port}/0`], env);
  const admin = cli.records().find((r) => r.msg === 'admin listener up')?.url as string;
  assert.ok(admin, cli.stderr());
  await until(async () => ((await (await fetch(new URL('status.json', admin))).json()) as { cluster: { redis: string } }).cluster.redis === 'up', 'redis up');
  assert.ok(!cli.stderr().includes('pa%'), 'the password is not logged');
});
