// Regression (found by h-edges): the stdio front door's `session closed` line named no `reason`
// (the HTTP doors' do: docs/operations.md, "Session lines"), and a session ended by a dead channel
// (the client stopped reading, its pipe closed) was closed without any line. Now the line says
// `eof` when the client ended its input, `shutdown` when the gateway stopped (SIGTERM), and
// `stream-closed` when the channel died.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CLI } from '../helpers/cli.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

/** Runs `switchyard --serve-stdio` on the embedded demo, opens a 2025-06-18 session, then ends it with `end`; resolves with its JSON log records. */
async function sessionEndedBy(end: (child: ReturnType<typeof spawn>) => void): Promise<Array<Record<string, unknown>>> {
  const child = spawn(process.execPath, [CLI, '--serve-stdio', '--log-level', 'info'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  let out = '';
  const answered = new Promise<void>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes('"id":1')) resolve();
    }),
  );
  child.stdin.write(`${JSON.stringify(INIT)}\n`);
  await answered;
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  end(child);
  await once(child, 'exit');
  return err
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const closed = (records: Array<Record<string, unknown>>) => records.filter((r) => r.msg === 'session closed').map((r) => [r.dialect, r.reason]);

test('stdio: the client ending its input closes the session with reason eof', async () => {
  const records = await sessionEndedBy((c) => c.stdin!.end());
  assert.deepEqual(closed(records), [['stdio', 'eof']]);
});

test('stdio: SIGTERM closes the session with reason shutdown', async () => {
  const records = await sessionEndedBy((c) => c.kill('SIGTERM'));
  assert.deepEqual(closed(records), [['stdio', 'shutdown']]);
});

test('stdio: the client closing its end of the output pipe closes the session with reason stream-closed', async () => {
  const records = await sessionEndedBy((c) => {
    c.stdout!.destroy();
    // An answer to write finds the pipe closed (EPIPE): the channel is dead.
    c.stdin!.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  });
  assert.deepEqual(closed(records), [['stdio', 'stream-closed']]);
});
