// Regression (user trial 17): `switchyard --serve-stdio` exited 1 with nothing on stdout when its
// upstream failed at start, even without --require-upstreams: describing the upstream threw while
// it was down, and the client's first message was never answered. Without --require-upstreams a
// failed upstream is served as down (SWY_ERR_UPSTREAM_DOWN) and reconnected, as over HTTP.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { configFile, RAW_SERVER } from '../helpers/ops.js';

type Msg = { jsonrpc: string; id: number; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'trial', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** `switchyard --serve-stdio ARGS` with stdin and stdout piped: its answers by id and its log records. */
function serveStdio(t: { after(fn: () => Promise<void>): void }, args: string[]) {
  const child = spawn(process.execPath, [CLI, '--serve-stdio', '--no-admin', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const answers = new Map<number, Msg>();
  const records: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const m = JSON.parse(out.slice(0, nl)) as Msg;
      out = out.slice(nl + 1);
      answers.set(m.id, m);
    }
    for (const w of [...waiters]) w();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString('utf8');
    for (let nl = err.indexOf('\n'); nl >= 0; nl = err.indexOf('\n')) {
      // Every stderr line is a JSON log record.
      records.push(JSON.parse(err.slice(0, nl)) as Record<string, unknown>);
      err = err.slice(nl + 1);
    }
    for (const w of [...waiters]) w();
  });
  const until = <T>(look: () => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hit = look();
        if (hit !== undefined) {
          waiters.delete(check);
          resolve(hit);
        } else if (child.exitCode !== null) {
          waiters.delete(check);
          reject(new Error(`exited ${child.exitCode}: ${JSON.stringify(records)}`));
        }
      };
      waiters.add(check);
      void exited.then(check);
      check();
    });
  return {
    send: (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n'),
    answer: (id: number) => until(() => answers.get(id)),
    record: (match: (r: Record<string, unknown>) => boolean) => until(() => records.find(match)),
    end: () => (child.stdin.end(), exited),
  };
}

test('--serve-stdio with a stdio upstream that cannot run: ping is answered, a call gets SWY_ERR_UPSTREAM_DOWN, and once the upstream can start it serves; exit 0 at EOF', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-late-'));
  t.after(async () => rmSync(dir, { recursive: true, force: true }));
  const script = path.join(dir, 'late-server.mjs');
  const file = configFile(t, {
    admin: false,
    limits: { upstreamBackoffMinMs: 100, upstreamBackoffMaxMs: 400 },
    upstreams: { late: { command: process.execPath, args: [script, 'stdio'] } },
  });
  const peer = serveStdio(t, ['--config', file]);
  peer.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.deepEqual(await peer.answer(1), { jsonrpc: '2.0', id: 1, result: {} });
  peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } });
  const down = await peer.answer(2);
  assert.equal(typeof down.error?.data?.retryAfterMs, 'number');
  assert.deepEqual(down, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32000, message: 'Upstream down: late is reconnecting', data: { upstream: 'late', retryAfterMs: down.error?.data?.retryAfterMs } },
  });

  // The script appears: the supervisor's next attempt starts it, and calls reach it.
  copyFileSync(RAW_SERVER, script);
  await peer.record((r) => r.msg === 'upstream ready' && r.upstream === 'late');
  peer.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'back' }, _meta: META } });
  const back = await peer.answer(3);
  assert.deepEqual(back.result?.content, [{ type: 'text', text: 'Echo: back' }]);
  assert.equal(await peer.end(), 0);
});
