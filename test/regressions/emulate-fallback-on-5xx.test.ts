// Found by a client-author trial of `emulate` (h-trial12): the v1 SDK's documented fallback
// pattern falls back to HTTP+SSE on any connect error, a 500 or 503 to its POST included, and
// the bench's verdict read `fell back to HTTP+SSE`, word for word what a conforming client gets
// after a 404. The spec's fallback follows a 4xx only (2025-11-25: 400, 404 or 405; 2025-03-26
// and 2025-06-18: any 4xx); a 5xx is the server failing. A client author (or a CI grep) could
// not tell the two apart. The verdict now ends by saying the client fell back on a 5xx.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { startEmulator, type EmulateOptions, type Emulator } from '../../src/emulate/index.js';
import { v1FallbackClient } from '../helpers/clients.js';

async function emulator(t: { after(fn: () => Promise<void>): void }, o: Pick<EmulateOptions, 'era' | 'probeStatus'>): Promise<Emulator> {
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), logFile: '/dev/null', ...o });
  t.after(() => emu.close());
  return emu;
}

test('emulate: a client that falls back to HTTP+SSE after a 500 is told a 5xx is no reason to', async (t) => {
  const emu = await emulator(t, { era: '2024-11-05', probeStatus: 500 });
  const { client, streamable } = await v1FallbackClient(emu.url, t);
  assert.equal(streamable, false);
  await client.close();
  assert.deepEqual(
    emu.verdicts().map((v) => [v.transport, v.fellBack, v.text]),
    [['http+sse', true, 'fell back to HTTP+SSE (negotiated 2024-11-05); it fell back on HTTP 500, which is no reason to (the spec falls back on a 4xx only)']],
  );
});

test('emulate: a client that tries HTTP+SSE after a 503 is told so too; after a 404 nothing is added', async (t) => {
  const emu = await emulator(t, { era: '2025-11-25', probeStatus: 503 });
  await assert.rejects(v1FallbackClient(emu.url, t));
  assert.equal(
    emu.verdict().text,
    'tried to fall back to HTTP+SSE but failed: GET /mcp → 405; it fell back on HTTP 503, which is no reason to (the spec falls back on a 4xx only)',
  );
  const emu404 = await emulator(t, { era: '2024-11-05', probeStatus: 404 });
  const { client } = await v1FallbackClient(emu404.url, t);
  await client.close();
  assert.equal(emu404.verdict().text, 'fell back to HTTP+SSE (negotiated 2024-11-05)');
});
