// Found by a trial: the official SDK's stdio client closes a server by ending its stdin, waiting
// 2 s, then SIGTERM, 2 s more, then SIGKILL (StdioClientTransport.close). `switchyard
// --serve-stdio` over a stdio child that does not exit at its own EOF stopped that child on the
// usual schedule (SIGTERM after upstreamStopTimeoutMs = 2 s), so the client's SIGTERM always came
// first: the gateway exited 143 by the "signal while shutting down" path, every close, with nothing
// in flight. At stdin EOF the child's stop steps are now at most 600 ms (SIGTERM at 0.6 s, SIGKILL
// at 1.2 s), and the gateway exits 0 on its own before the client signals it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');

for (const [mode, signals] of [
  ['', ['SIGTERM']],
  ['ignore-term', ['SIGTERM', 'SIGKILL']],
] as const) {
  test(`the SDK stdio client's close() over a child that ignores EOF${mode ? ' and SIGTERM' : ''}: the gateway stops it on a short schedule and exits 0 before the client's SIGTERM`, async (t) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, '--serve-stdio', '--log-level', 'debug', '--stdio', `"${process.execPath}" "${FIXTURE}" ${mode}`],
      stderr: 'pipe',
    });
    let err = '';
    const stderr = transport.stderr!;
    stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const client = new Client({ name: 'eof-stop', version: '1' });
    t.after(() => client.close());
    await client.connect(transport);
    const r = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'echo: hi' }]);
    const ended = once(stderr, 'end');
    await client.close();
    await ended;
    const records = err
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const pid = Number(/"line":"pid (\d+)"/.exec(err)?.[1]);
    // The child was stopped by the gateway's own short schedule, not by the client's signals.
    assert.deepEqual(
      records.filter((x) => x.msg === 'upstream stop escalated').map((x) => [x.pid, x.signal]),
      signals.map((s) => [pid, s]),
    );
    for (const x of records.filter((x) => x.msg === 'upstream stop escalated'))
      assert.ok((x.waitedMs as number) >= (x.signal === 'SIGTERM' ? 599 : 1199), JSON.stringify(x));
    assert.deepEqual(
      records.filter((x) => x.msg === 'signal while shutting down: exiting now'),
      [],
    );
    assert.deepEqual(
      records.filter((x) => x.msg === 'stopped').map((x) => x.code),
      [0],
    );
  });
}
