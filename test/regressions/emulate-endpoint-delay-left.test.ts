// Found by a client-author trial of `emulate` (helper h-probe, 2026-12-05): with
// `--endpoint-delay 2000`, a client that gave up on the stream after 1 s (`switchyard probe
// --timeout-ms 1000`) was reported as `GET /mcp → endpoint` and `the client never POSTed to the
// endpoint (/messages?sessionId=…)`: the record took the endpoint as sent when the delay ran out,
// to a stream that was already closed. A client author read that their client had ignored an
// endpoint it never got. The endpoint now counts as held back until it is written, and a stream
// closed before then never gets it: the verdict says the stream sent no endpoint event.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { Emulator } from '../../src/emulate/index.js';
import { testEmulator } from '../helpers/emulate.js';

async function emulator(t: { after(fn: () => Promise<void>): void }, endpointDelayMs: number): Promise<Emulator> {
  return (await testEmulator(t, { era: '2024-11-05', endpointDelayMs })).emu;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a client that leaves before --endpoint-delay runs out: the stream sent no endpoint event', async (t) => {
  const emu = await emulator(t, 600);
  const ac = new AbortController();
  const res = await request(emu.url, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
  assert.equal(res.statusCode, 200);
  res.body.on('error', () => {});
  // The client gives up after 100 ms, before the endpoint event comes.
  await sleep(100);
  ac.abort();
  await sleep(900);
  const get = emu.records.find((r) => r.method === 'GET');
  assert.equal(get?.endpoint, undefined);
  assert.equal(get?.endpointWithheld, true);
  assert.equal(emu.verdict().text, 'did not connect: the stream sent no endpoint event');
  assert.match(emu.report(), /^GET \/mcp → 200 stream, no endpoint$/m);
});

test('a client that waits for --endpoint-delay gets the endpoint, and the record says so', async (t) => {
  const emu = await emulator(t, 300);
  const ac = new AbortController();
  t.after(() => ac.abort());
  const res = await request(emu.url, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
  res.body.on('error', () => {});
  res.body.setEncoding('utf8');
  let text = '';
  await new Promise<void>((resolve) => {
    res.body.on('data', (d: string) => {
      text += d;
      if (text.includes('event: endpoint')) resolve();
    });
  });
  const get = emu.records.find((r) => r.method === 'GET');
  assert.match(String(get?.endpoint), /^\/messages\?sessionId=[0-9a-f-]+$/);
  assert.equal(get?.endpointWithheld, undefined);
  assert.match(emu.report(), /^GET \/mcp → endpoint$/m);
});
