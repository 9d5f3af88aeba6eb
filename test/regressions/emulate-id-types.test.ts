// Found in review: `switchyard emulate` recorded JSON-RPC ids as strings, so a request with id
// "7" and a reply with id 7 read alike. JSON-RPC 2.0 §4: an id is a String or a Number, and a
// response carries its request's id (§5), type and all; a client that sent "7" and got an
// answer to 7 got no answer. The verdict matched them: a failed tools/call with id "7" counted as
// answered by the result of a ping with id 7. Ids are now recorded with their type (an integer
// beyond 2^53 as the exact bigint), in the records, the verdict and the JSON log lines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startEmulator, type EmulateOptions } from '../../src/emulate/index.js';
import { initSession, openHttpSseSession, send } from '../helpers/http.js';

async function emulator(t: { after(fn: () => Promise<void>): void }, era: EmulateOptions['era']) {
  const dir = mkdtempSync(path.join(tmpdir(), 'emulate-ids-'));
  const logFile = path.join(dir, 'requests.jsonl');
  const emu = await startEmulator({ era, host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), logFile });
  t.after(async () => {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { emu, logFile };
}

test('HTTP+SSE: a failed tools/call with id "7" is not answered by the result of a ping with id 7', async (t) => {
  const { emu } = await emulator(t, '2024-11-05');
  const origin = new URL(emu.url).origin;
  const { sse, to } = await openHttpSseSession(t, origin);
  const h = { 'content-type': 'application/json' };
  assert.equal(
    (await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: '7', method: 'tools/call', params: { name: 'nope', arguments: {} } }), h)).status,
    202,
  );
  const failed = JSON.parse((await sse.next()).data) as { id: unknown; error?: unknown };
  assert.deepEqual([failed.id, failed.error !== undefined], ['7', true]);
  assert.equal((await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }), h)).status, 202);
  assert.deepEqual(JSON.parse((await sse.next()).data), { jsonrpc: '2.0', id: 7, result: {} });

  const v = emu.verdict();
  assert.deepEqual([v.transport, v.toolCalls, v.text], ['http+sse', 0, 'used HTTP+SSE (negotiated 2024-11-05)']);
  const posts = emu.records.filter((r) => r.method === 'POST').map((r) => r.rpc);
  assert.deepEqual(posts.slice(-2), [
    { kind: 'request', method: 'tools/call', id: '7' },
    { kind: 'request', method: 'ping', id: 7 },
  ]);
  const stream = emu.records.find((r) => r.method === 'GET')!;
  assert.deepEqual(stream.replies.slice(-2), [
    { id: '7', ok: false },
    { id: 7, ok: true },
  ]);
});

test('Streamable HTTP: ids "1", 1 and 9007199254740993 are recorded apart, in the records and the JSON log lines', async (t) => {
  const { emu, logFile } = await emulator(t, '2025-06-18');
  const h = await initSession(emu.url, '2025-06-18');
  const ids = ['"1"', '1', '9007199254740993'];
  for (const id of ids) {
    const r = await send(emu.url, 'POST', `{"jsonrpc":"2.0","id":${id},"method":"ping"}`, h);
    assert.deepEqual([r.status, r.text], [200, `{"jsonrpc":"2.0","id":${id},"result":{}}`]);
  }
  const pings = emu.records.filter((r) => r.rpc?.method === 'ping');
  assert.deepEqual(
    pings.map((r) => [r.rpc?.id, r.replies]),
    [
      ['1', [{ id: '1', ok: true }]],
      [1, [{ id: 1, ok: true }]],
      [9007199254740993n, [{ id: 9007199254740993n, ok: true }]],
    ],
  );
  // The log line as written (pino writes a bigint as the exact integer; key order aside).
  const lines = readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l.includes('"method":"ping"'));
  assert.equal(lines.length, 3);
  lines.forEach((line, i) => {
    const rpc = /"rpc":\{[^}]*\}/.exec(line)?.[0] ?? '';
    assert.match(rpc, new RegExp(`"id":${ids[i]}[,}]`), rpc);
    assert.match(line, new RegExp(`"replies":\\[\\{("id":${ids[i]},"ok":true|"ok":true,"id":${ids[i]})\\}\\]`), line);
  });
});
