// The tests' SSE reader (test/helpers/http.ts openSse): a next(ms) that timed out left its waiter
// in place, which took the next event and lost it, so a test that polled with short timeouts
// never saw an event that did come (found by a client-author trial, h-t1, writing the
// upstream-restart tests).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSse } from '../helpers/http.js';

test('openSse: an event that comes after a next() timed out goes to the next call of next()', async (t) => {
  // The event is written only once the first next() has timed out (a timer in the server lost
  // that race on a loaded machine: the event was queued before next(50) was called).
  let stream: http.ServerResponse | undefined;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    stream = res;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const sse = await openSse(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  await assert.rejects(sse.next(50), /no SSE event within 50 ms/);
  stream?.write('data: late\n\n');
  assert.equal((await sse.next(2_000)).data, 'late');
});
