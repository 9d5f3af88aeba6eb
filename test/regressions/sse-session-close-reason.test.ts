// An HTTP+SSE (2024-11-05) session's `session closed` line names why it closed, as a 2025 session's
// does. Found in review: the line had no `reason`, and `switchyard:session:close` said
// `stream-closed` even when the gateway's shutdown ended the stream. A legacy session ends only
// with its stream: the client closed it (`stream-closed`), the gateway cut a client that stopped
// reading it (`slow-reader`: that cut was said nowhere, and read as the client's own close), or the
// gateway shut down (`shutdown`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import diagnostics from 'node:diagnostics_channel';
import { CHANNELS, type SessionMessage } from '../../src/core/diagnostics.js';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway } from '../helpers/gateway.js';
import { openHttpSseSession, send } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';

/** The HTTP+SSE sessions' closes published on `switchyard:session:close` while the test runs. */
function closesPublished(t: { after(fn: () => void): void }): SessionMessage[] {
  const published: SessionMessage[] = [];
  const onClose = (m: unknown) => {
    if ((m as SessionMessage).dialect === '2024-11-05') published.push(m as SessionMessage);
  };
  diagnostics.subscribe(CHANNELS.sessionClose, onClose);
  t.after(() => diagnostics.unsubscribe(CHANNELS.sessionClose, onClose));
  return published;
}

test('an HTTP+SSE session closed by its client, and one closed by shutdown, log and publish their reason', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const published = closesPublished(t);
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'], logLevel: 'info' }, records);
  const origin = new URL(gw.url).origin;
  const logIdOf = (to: string) => sessionLogId(new URL(to).searchParams.get('sessionId')!);
  const closedLine = (logId: string) => records.find((r) => r.msg === 'session closed' && r.sessionId === logId);

  const byClient = await openHttpSseSession(t, origin);
  const byShutdown = await openHttpSseSession(t, origin);
  const clientId = logIdOf(byClient.to);
  const shutdownId = logIdOf(byShutdown.to);

  byClient.sse.close();
  await until(() => closedLine(clientId) !== undefined, 'the session the client closed is logged closed');
  assert.deepEqual(closedLine(clientId), { ...closedLine(clientId), dialect: '2024-11-05', reason: 'stream-closed' });
  assert.equal(closedLine(shutdownId), undefined, 'the other session is still open');

  await gw.close();
  assert.deepEqual(closedLine(shutdownId), { ...closedLine(shutdownId), dialect: '2024-11-05', reason: 'shutdown' });
  const mount = gw.executor.mount;
  assert.deepEqual(published, [
    { mount, dialect: '2024-11-05', sessionId: clientId, reason: 'stream-closed' },
    { mount, dialect: '2024-11-05', sessionId: shutdownId, reason: 'shutdown' },
  ]);
});

test('an HTTP+SSE session whose client stops reading is cut at maxStreamBufferBytes: slow client cut at warn, then session closed with reason slow-reader', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const published = closesPublished(t);
  const bound = 64 * 1024;
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
  const endpoint = endpointIn(head)!;
  socket.pause();
  const to = new URL(endpoint[1], `${origin}/sse`).href;
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

  // Answers of about 256 KB each fill the socket buffers, then the gateway's own queue, which is cut at the bound.
  const message = 'x'.repeat(256 * 1024);
  const closed = () => records.find((r) => r.msg === 'session closed' && r.sessionId === logId);
  for (let id = 1; id <= 400 && !closed(); id++) {
    const r = await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message } } }), h);
    if (r.status !== 202) break;
  }
  await until(() => closed() !== undefined, 'the session is closed');
  assert.equal(closed()!.reason, 'slow-reader');
  const cut = records.find((r) => r.msg === 'slow client cut');
  assert.ok(cut, 'slow client cut is logged');
  assert.equal(cut.level, 40);
  assert.equal(cut.maxBufferBytes, bound);
  assert.ok((cut.queuedBytes as number) > bound, `${String(cut.queuedBytes)} bytes queued`);
  assert.equal(cut.remoteAddress, '127.0.0.1');
  assert.ok(records.indexOf(cut) < records.indexOf(closed()!), 'the cut is said before the session closes');
  assert.deepEqual(published, [{ mount: gw.executor.mount, dialect: '2024-11-05', sessionId: logId, reason: 'slow-reader' }]);
  // The session is gone: a POST to it is refused.
  const after = await send(to, 'POST', JSON.stringify({ jsonrpc: '2.0', id: 999, method: 'ping' }), h);
  assert.equal(after.status, 404);
});
