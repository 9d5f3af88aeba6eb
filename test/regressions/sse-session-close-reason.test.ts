// An HTTP+SSE (2024-11-05) session's `session closed` line names why it closed, as a 2025 session's
// does. Found in review: the line had no `reason`, and `switchyard:session:close` said
// `stream-closed` even when the gateway's shutdown ended the stream. A legacy session ends only
// with its stream: the client closed it (`stream-closed`), or the gateway shut down (`shutdown`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { CHANNELS, type SessionMessage } from '../../src/core/diagnostics.js';
import { sessionLogId } from '../../src/core/identity.js';
import { gateway } from '../helpers/gateway.js';
import { openHttpSseSession } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';

test('an HTTP+SSE session closed by its client, and one closed by shutdown, log and publish their reason', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const published: SessionMessage[] = [];
  const onClose = (m: unknown) => {
    if ((m as SessionMessage).dialect === '2024-11-05') published.push(m as SessionMessage);
  };
  diagnostics.subscribe(CHANNELS.sessionClose, onClose);
  t.after(() => diagnostics.unsubscribe(CHANNELS.sessionClose, onClose));
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
