// A client that stops reading its HTTP+SSE stream is cut once the answers queued for it pass
// `maxStreamBufferBytes`, however large they are. Found by hostile testing: an answer holding a
// long string is an event in pieces (`serializeBody`), and one waiting behind a large event being
// written counted 16 KiB against the bound whatever its size, so a client that read nothing kept
// some 85 MB of 1.5 MB echo answers queued in the gateway against the 8 MiB default (512 such
// answers before a cut). Each now counts at least its long strings' length (`JsonPieces.units`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import diagnostics from 'node:diagnostics_channel';
import { CHANNELS, type RequestEndMessage } from '../../src/core/diagnostics.js';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway } from '../helpers/gateway.js';
import { send } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';

test('HTTP+SSE: large answers queued for a client that reads nothing count their size against maxStreamBufferBytes', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const bound = 1024 * 1024;
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'], logLevel: 'info', limits: { maxStreamBufferBytes: bound } }, records);
  const origin = new URL(gw.url).origin;
  const port = Number(new URL(gw.url).port);

  // A client that reads its stream up to the endpoint event, then nothing more.
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  t.after(() => socket.destroy());
  socket.on('error', () => {});
  socket.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  let head = '';
  const endpointIn = (text: string) => /event: endpoint\r?\ndata: ([^\r\n]+)/.exec(text);
  while (!endpointIn(head)) head += String((await once(socket, 'data'))[0]);
  socket.pause();
  const to = new URL(endpointIn(head)![1], `${origin}/sse`).href;
  const logId = sessionLogId(new URL(to).searchParams.get('sessionId')!);
  const h = { 'content-type': 'application/json' };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'stops-reading', version: '1' } },
  };
  assert.equal((await send(to, 'POST', JSON.stringify(init), h)).status, 202);
  assert.equal((await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), h)).status, 202);

  // Answers of 1 MiB each (events in pieces): the first that the socket buffers cannot take stalls,
  // and those after it wait behind it. One waiting answer already fills the 1 MiB bound, so the
  // stream is cut within a few answers of the socket buffers filling; counted as 16 KiB each,
  // 64 answers (64 MiB) waited before a cut.
  const message = 'x'.repeat(1024 * 1024);
  const closed = () => records.find((r) => r.msg === 'session closed' && r.sessionId === logId);
  let ended = 0;
  const onEnd = (m: unknown) => {
    const e = m as RequestEndMessage;
    if (e.ctx.method === 'tools/call' && e.code === undefined) ended++;
  };
  diagnostics.subscribe(CHANNELS.requestEnd, onEnd);
  t.after(() => diagnostics.unsubscribe(CHANNELS.requestEnd, onEnd));
  const answered = () => ended;
  let posted = 0;
  for (let id = 1; id <= 60 && !closed(); id++) {
    const r = await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }), h);
    if (r.status !== 202) break;
    posted = id;
    // One answer at a time, so that each is queued before the next is asked for.
    await until(() => answered() === id || closed() !== undefined, `answer ${id} is queued`);
  }
  assert.ok(closed(), `cut before 60 answers of 1 MiB were queued (${posted} posted, ${answered()} queued)`);
  assert.equal(closed()!.reason, 'slow-reader');
  const cut = records.find((r) => r.msg === 'slow client cut');
  assert.ok(cut, 'slow client cut is logged');
  assert.equal(cut.maxBufferBytes, bound);
  // What the gateway counted when it cut is what it held: at least one waiting answer of 1 MiB.
  assert.ok((cut.queuedBytes as number) >= message.length, `${String(cut.queuedBytes)} bytes counted at the cut`);
});
