// Found by an operator trial: `command: ../node_modules/.bin/mcp-server-everything` in a config
// file was run from the gateway's working directory, not the file's (as `cwd` is), and failed
// with `cannot run ../node_modules/.bin/mcp-server-everything: ENOENT (command not found)`,
// which reads as a PATH problem and names no directory. The operator's message now says that a
// relative command runs from the child's working directory, names it, and what to do; a
// client's message still names no path of the gateway host.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { validateConfig } from '../../src/config/load.js';
import { recordingLogger } from '../helpers/gateway.js';
import { modernBody, modernHeaders } from '../helpers/http.js';

test('a relative command that is not there: the operator is told the directory it ran from, the client is not', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-relcmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'servers'));
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      admin: false,
      limits: { upstreamBackoffMinMs: 60000, upstreamBackoffMaxMs: 60000 },
      upstreams: {
        bare: { command: '../bin/no-such-server' },
        incwd: { command: './no-such-server', cwd: 'servers' },
        onpath: { command: 'no-such-server-swy' },
      },
    },
    'test',
    { expandEnv: false, baseDir: dir },
  );
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config, recordingLogger(records));
  t.after(() => gw.close());
  const down = Object.fromEntries(records.filter((r) => r.msg === 'upstream down').map((r) => [r.upstream, r.err]));
  assert.deepEqual(down, {
    bare:
      `Upstream unavailable: cannot run ../bin/no-such-server: ENOENT (a relative command runs from the child's working directory, ${process.cwd()}: ` +
      'no such file there; give an absolute path, or set `cwd`, which is relative to the config file)',
    incwd:
      `Upstream unavailable: cannot run ./no-such-server: ENOENT (a relative command runs from the child's working directory, ${path.join(dir, 'servers')}: ` +
      'no such file there, or no such directory; give an absolute path, or set `cwd`, which is relative to the config file)',
    onpath: 'Upstream unavailable: cannot run no-such-server-swy: ENOENT (command not found)',
  });
  const r = await fetch(gw.urls[0], { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(1, 'tools/list')) });
  const text = await r.text();
  assert.equal(r.status, 503);
  assert.ok(!text.includes(dir) && !text.includes(process.cwd()), text);
});
