// Regression (found by a tester): a batch holding an `initialize` at 2025-03-26, posted with no
// session, was refused "batches are only allowed in protocol revision 2025-03-26", though the
// client offered exactly that revision. The rule it broke is 2025-03-26 basic/lifecycle#initialization:
// the initialize request MUST NOT be part of a JSON-RPC batch; that is now the refusal
// (SWY_ERR_REQ_BATCH_INITIALIZE), over HTTP and over --serve-stdio. A batch without a session and
// without an initialize keeps SWY_ERR_REQ_BATCH_NOT_ALLOWED.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CLI, startCli } from '../helpers/cli.js';
import { H2025, post } from '../helpers/http.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batcher', version: '1' } },
};
const REFUSED = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Invalid Request: the initialize request must not be part of a JSON-RPC batch' },
};
const NOT_ALLOWED = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'Invalid Request: batches are only allowed in protocol revision 2025-03-26' },
};

test('HTTP: a batched initialize (2025-03-26, no session) is refused 400 for being batched, naming the lifecycle rule', async (t) => {
  const gw = await startCli(t, ['--no-admin']);
  const alone = await post(gw.url, [INIT], H2025);
  assert.equal(alone.status, 400);
  assert.equal(alone.headers['mcp-session-id'], undefined);
  assert.deepEqual(alone.json, REFUSED);
  const withOthers = await post(gw.url, [{ jsonrpc: '2.0', id: 0, method: 'ping' }, INIT], H2025);
  assert.equal(withOthers.status, 400);
  assert.deepEqual(withOthers.json, REFUSED);
  // No initialize in it: still the batch rule.
  const plain = await post(gw.url, [{ jsonrpc: '2.0', id: 0, method: 'ping' }], H2025);
  assert.equal(plain.status, 400);
  assert.deepEqual(plain.json, NOT_ALLOWED);
  // Sent alone, the same initialize opens a session.
  const ok = await post(gw.url, INIT, H2025);
  assert.equal(ok.status, 200);
  assert.equal((ok.json as { result: { protocolVersion: string } }).result.protocolVersion, '2025-03-26');
});

test('--serve-stdio: a batched initialize before any session gets the same refusal, and initialize alone then works', async (t) => {
  const child = spawn(process.execPath, [CLI, '--serve-stdio', '--no-admin'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let out = '';
  const lines: unknown[] = [];
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      lines.push(JSON.parse(out.slice(0, nl)));
      out = out.slice(nl + 1);
      waiters.splice(0).forEach((w) => w());
    }
  });
  const next = async (): Promise<unknown> => {
    while (lines.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
    return lines.shift();
  };
  child.stdin.write(JSON.stringify([INIT]) + '\n');
  assert.deepEqual(await next(), REFUSED);
  child.stdin.write(JSON.stringify(INIT) + '\n');
  const init = (await next()) as { id: number; result: { protocolVersion: string } };
  assert.equal(init.id, 1);
  assert.equal(init.result.protocolVersion, '2025-03-26');
  child.stdin.end();
  assert.equal(await exited, 0);
});
