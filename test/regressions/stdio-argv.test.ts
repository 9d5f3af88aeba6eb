// Regression (user trial 17): a stdio child's arguments were logged whole at info on every start
// (`"argv":[…,"postgresql://app:PGSECRETPW@db.internal/prod"]`). Credentials in them are now shown
// as [redacted] in the log, the status document and errors; the child's environment never shows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, getText, RAW_SERVER } from '../helpers/ops.js';

test('a stdio child started with a database URL, --api-key=…, --token … and a ?api_key= URL: the "upstream starting" line shows them redacted, and no secret reaches the log or /status.json', async (t) => {
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    logLevel: 'debug',
    upstreams: {
      db: {
        command: process.execPath,
        args: [
          RAW_SERVER,
          'stdio',
          'postgresql://app:${DB_PASSWORD}@db.internal/prod',
          '--api-key=KEYSECRET',
          '--token',
          'TOKSECRET',
          'https://h.example/x?api_key=QSECRET&page=2',
        ],
        env: { API_TOKEN: 'ENVSECRET' },
      },
    },
  });
  const cli = await startOpsCli(t, ['--config', file], { DB_PASSWORD: 'PGSECRETPW' });
  await cli.waitFor((r) => r.msg === 'upstream ready' && r.upstream === 'db');
  const starting = cli.records.filter((r) => r.msg === 'upstream starting');
  assert.deepEqual(
    starting.map((r) => [r.level, r.upstream, r.argv]),
    [
      [
        30,
        'db',
        [
          process.execPath,
          RAW_SERVER,
          'stdio',
          'postgresql://app:[redacted]@db.internal/prod',
          '--api-key=[redacted]',
          '--token',
          '[redacted]',
          'https://h.example/x?api_key=[redacted]&page=2',
        ],
      ],
    ],
  );
  const status = await getText(`${cli.admin}status.json`);
  assert.equal(status.status, 200);
  const stopped = await cli.stop();
  assert.equal(stopped, 0);
  for (const text of [JSON.stringify(cli.records), status.text]) assert.doesNotMatch(text, /PGSECRETPW|KEYSECRET|TOKSECRET|QSECRET|ENVSECRET/);
});
