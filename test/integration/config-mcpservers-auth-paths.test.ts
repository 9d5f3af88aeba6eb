// An `mcpServers` file can carry a server's own `auth`: its errors are named at the file's paths,
// `/mcpServers/NAME/auth/…`, by `switchyard validate` and by the start. The loader finds them (the
// schema's hash pattern, its duplicate-key check) before anything reads the normalized config, so
// no path of the normalized `/upstreams/NAME/auth/…` (nor the key store's own `auth/apiKeys/I`)
// reaches the user and needs mapping back (inFileTerms, src/config/load.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI, validateFile } from '../helpers/cli.js';
import { configFile } from '../helpers/ops.js';

const HASH = 'a'.repeat(64);

/** An `mcpServers` file whose server `demo` has two keys named `k` of one hash (in two cases) and a hash that is not one. */
const FILE = {
  listen: { port: 0 },
  admin: false,
  mcpServers: {
    demo: {
      transport: 'embedded',
      auth: {
        apiKeys: [
          { name: 'k', sha256: HASH },
          { name: 'k', sha256: HASH.toUpperCase() },
          { name: 'z', sha256: 'xyz' },
        ],
      },
    },
  },
};

const LINES = [
  '  /mcpServers/demo/auth/apiKeys/1/name: duplicate name k (also /mcpServers/demo/auth/apiKeys/0/name)',
  '  /mcpServers/demo/auth/apiKeys/1/sha256: duplicate key (also /mcpServers/demo/auth/apiKeys/0/sha256)',
  '  /mcpServers/demo/auth/apiKeys/2/sha256: must match ^[0-9a-fA-F]{64}$',
];

test('validate and the start name an mcpServers server’s auth errors at /mcpServers/NAME/auth/…', async (t) => {
  const v = await validateFile(t, 'servers.json', JSON.stringify(FILE));
  assert.equal(v.code, 1);
  assert.equal(v.stdout, [`${v.file}: invalid config, 3 errors`, ...LINES, ''].join('\n'));

  const file = configFile(t, FILE);
  const r = spawnSync(process.execPath, [CLI, '--config', file], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  assert.equal(r.stderr, [`switchyard: Invalid configuration: ${file}: 3 errors`, ...LINES, ''].join('\n'));
});
