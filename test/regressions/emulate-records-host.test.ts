// Named in the closing notes of the last round: the request records of `switchyard emulate` kept
// `Accept`, `Origin`, `User-Agent` and the MCP headers but not `Host`, though the bench refuses a
// request for its Host (a DNS-rebinding guard, `bodyUnread: "Host refused"`) and a client author
// needs to see which Host was sent. `host` is now recorded like the others; `authorization` is
// still only `[present]`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { CLI } from '../helpers/cli.js';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'trial', version: '1' } },
});

test('emulate --log records the Host of each request, a refused one too; Authorization stays [present]', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'emulate-host-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const logFile = path.join(dir, 'requests.jsonl');
  const child = spawn(process.execPath, [CLI, 'emulate', '--era', '2025-11-25', '--port', '0', '--log', logFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.after(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /emulating \S+ on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`emulate exited ${code}: ${stderr}`)));
  });
  const { host } = new URL(url);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'user-agent': 'trial',
    authorization: 'Bearer s3cret-token',
  };
  const send = async (extra: Record<string, string>) => {
    const r = await request(url, { method: 'POST', headers: { ...headers, ...extra }, body: INIT });
    await r.body.dump();
    return r.statusCode;
  };
  assert.equal(await send({}), 200);
  assert.equal(await send({ host: `evil.example:${new URL(url).port}` }), 403);
  child.kill('SIGINT');
  assert.equal(await exited, 0);

  const text = readFileSync(logFile, 'utf8');
  const records = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number; status: number; headers: Record<string, string> });
  assert.deepEqual(
    records.map((r) => [r.seq, r.status, r.headers]),
    [
      [1, 200, { accept: 'application/json, text/event-stream', 'content-type': 'application/json', host, 'user-agent': 'trial', authorization: '[present]' }],
      [
        2,
        403,
        {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          host: `evil.example:${new URL(url).port}`,
          'user-agent': 'trial',
          authorization: '[present]',
        },
      ],
    ],
  );
  assert.equal(text.includes('s3cret-token'), false);
});
