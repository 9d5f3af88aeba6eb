// Regression (found by h-secrets): when an upstream forgot a client session's own upstream session
// (it restarted; its GET stream answered 404 or 400), the gateway logged `upstream session lost:
// opening a new one` at info with `session: "s:<the client's Mcp-Session-Id>"`, the raw id, which
// works as a bearer (a sealed one on every replica). The line now names the session by its log
// name (`sessionLogId`), as `session opened` and `session closed` do.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway, REPO_ROOT } from '../helpers/gateway.js';
import { initSession, post } from '../helpers/http.js';
import { freePort } from '../helpers/servers.js';

const require = createRequire(import.meta.url);

/** server-everything in streamableHttp mode on 127.0.0.1:`port`; resolves once it listens. */
async function everything(port: number): Promise<ChildProcess> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(process.execPath, ['--require', path.join(REPO_ROOT, 'test/fixtures/loopback-preload.cjs'), entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`server-everything did not start: ${out}`)), 20_000);
    const on = (d: Buffer) => {
      out += d.toString();
      if (/listening on port/i.test(out)) {
        clearTimeout(t);
        resolve();
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`server-everything exited ${code}: ${out}`)));
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill();
  });
}

test('an upstream restarted under a client session: the "upstream session lost" line names the session by its digest, never its id', async (t) => {
  const port = await freePort();
  let child = await everything(port);
  t.after(() => stop(child));
  const gw = await gateway(t, { upstreamUrl: `http://127.0.0.1:${port}/mcp` });
  const h = await initSession(gw.url, '2025-11-25');
  const sessionId = h['mcp-session-id'];
  const call = await post(gw.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'x' } } }, h);
  assert.equal(call.status, 200);
  await stop(child);
  child = await everything(port);
  const lostOf = () => gw.records.filter((r) => r.msg === 'upstream session lost: opening a new one' && r.session !== 'control');
  for (let i = 0; i < 200 && lostOf().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(
    lostOf().map((r) => r.session),
    [`s:${sessionLogId(sessionId)}`],
  );
  assert.doesNotMatch(JSON.stringify(gw.records), new RegExp(sessionId));
});
