// Found by h-trial9: `switchyard emulate` kept every request for its report, and, with
// `--session-expire-after`, a count for any Mcp-Session-Id a client sent, with no bound: a client
// looping against it grew the emulator's memory with each request. Now the report keeps the first
// `maxRecords` requests (default 10,000) and counts the rest, which are still served and logged;
// the session counts hold at most the mount's `maxSessions` ids, the oldest forgotten first.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { startEmulator, DEFAULT_MAX_RECORDS, type EmulateOptions, type RequestRecord } from '../../src/emulate/index.js';
import { initSession, send } from '../helpers/http.js';

async function emulator(t: { after(fn: () => Promise<void>): void }, o: Partial<EmulateOptions>) {
  const emu = await startEmulator({ era: '2025-06-18', host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), ...o });
  t.after(() => emu.close());
  return emu;
}

const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;

test('the report keeps the first maxRecords requests; later ones are served, seen by onRecord, and counted', async (t) => {
  assert.equal(DEFAULT_MAX_RECORDS, 10_000);
  const seen: number[] = [];
  const emu = await emulator(t, { maxRecords: 3, onRecord: (r: RequestRecord) => void seen.push(r.seq) });
  const h = await initSession(emu.url, '2025-06-18'); // initialize, notifications/initialized
  for (const id of [1, 2, 3]) {
    const r = await send(emu.url, 'POST', ping(id), h);
    assert.deepEqual([r.status, r.text], [200, `{"jsonrpc":"2.0","id":${id},"result":{}}`]);
  }
  assert.deepEqual(
    emu.records.map((r) => r.seq),
    [1, 2, 3],
  );
  assert.equal(emu.unrecorded, 2);
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  assert.match(emu.report(), /\n\(2 later requests not recorded: the report keeps the first 3\)\n$/);
});

test('maxRecords must be a positive integer', async () => {
  // An emulator that starts anyway is closed, so that the failure is the assertion's, not a hang.
  const started = startEmulator({ era: '2025-06-18', host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), maxRecords: 0 });
  await started.then((emu) => emu.close()).catch(() => undefined);
  await assert.rejects(started, { code: 'SWY_ERR_CONFIG_INVALID' });
});

test('--session-expire-after counts at most maxSessions session ids: made-up ids push out the oldest', async (t) => {
  const emu = await emulator(t, { sessionExpireAfter: 2, limits: { maxSessions: 2 } });
  const h = await initSession(emu.url, '2025-06-18'); // initialize and notifications/initialized: its two POSTs
  const expiredAnswer = (r: { status: number; text: string }) => r.status === 404 && r.text.includes('Session not found');
  assert.ok(expiredAnswer(await send(emu.url, 'POST', ping(1), h)), 'expired after two POSTs');
  assert.equal(emu.records.at(-1)?.knob, 'session-expired');
  // Two ids no gateway issued, each expired in turn: the table of expired sessions holds two.
  for (const sid of ['made-up-a', 'made-up-b'])
    for (const id of [2, 3, 4]) assert.equal((await send(emu.url, 'POST', ping(id), { ...h, 'mcp-session-id': sid })).status, 404);
  // The real session was the oldest: forgotten, it is counted afresh and the gateway serves it.
  const r = await send(emu.url, 'POST', ping(5), h);
  assert.deepEqual([r.status, r.text], [200, '{"jsonrpc":"2.0","id":5,"result":{}}']);
  assert.equal(emu.records.at(-1)?.knob, undefined);
});
