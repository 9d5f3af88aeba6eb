// endInTurn: the first response of an event-loop turn is ended at once, the rest of the turn's
// after its I/O callbacks, in order; a batch never holds more than MAX_BATCH; a response that
// cannot be ended is cut without stopping the others. Then the same over real sockets.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';
import { endInTurn, MAX_BATCH, settleAnswers, type Endable } from '../../src/transports/end-batch.js';

/**
 * A response that records what happened to it in `log`. `queued` makes it one Node has not yet
 * given a socket (an answer pipelined behind another); `buffered`, one whose socket still holds
 * bytes a slow reader has not taken. Either emits `finish` when `flush()` is called.
 */
function recorder(name: string, log: string[], opts: { throws?: boolean; queued?: boolean; buffered?: boolean } = {}): Endable & { flush(): void } {
  const events = new EventEmitter();
  const res = {
    socket: opts.queued ? null : { writableLength: opts.buffered ? 65_536 : 0 },
    destroyed: false,
    end(body?: string) {
      if (opts.throws) throw new Error('socket failed');
      log.push(body === undefined ? `${name}:end()` : `${name}:${body}`);
      return this;
    },
    destroy() {
      log.push(`${name}:destroyed`);
      res.destroyed = true;
      return this;
    },
    once(event: string, cb: () => void) {
      events.once(event, cb);
      return this;
    },
    flush() {
      log.push(`${name}:sent`);
      events.emit('finish');
    },
  };
  return res as unknown as Endable & { flush(): void };
}

const checkPhase = () => new Promise<void>((r) => setImmediate(r));

test('endInTurn: the first response of a turn ends now, the others at the check phase, in order', async () => {
  const log: string[] = [];
  endInTurn(recorder('a', log), '{"a":1}');
  endInTurn(recorder('b', log), '{"b":2}');
  endInTurn(recorder('c', log));
  assert.deepEqual(log, ['a:{"a":1}'], 'only the first is written within the turn');
  await checkPhase();
  assert.deepEqual(log, ['a:{"a":1}', 'b:{"b":2}', 'c:end()'], 'the rest follow in order; no body means end()');
  // A new turn: its first response is again ended at once.
  endInTurn(recorder('d', log), 'd');
  assert.equal(log.at(-1), 'd:d');
  await checkPhase();
});

test('endInTurn: a batch holds at most MAX_BATCH; one more ends the held ones at once', async () => {
  const log: string[] = [];
  endInTurn(recorder('first', log), '0');
  for (let i = 1; i <= MAX_BATCH; i++) endInTurn(recorder(`r${i}`, log), String(i));
  assert.equal(log.length, 1, `${MAX_BATCH} responses wait`);
  endInTurn(recorder('over', log), 'x');
  assert.equal(log.length, 1 + MAX_BATCH, 'the held batch was ended when a response would go past the bound');
  assert.deepEqual(log.slice(1, 3), ['r1:1', 'r2:2']);
  await checkPhase();
  assert.deepEqual(log.at(-1), 'over:x', 'the response past the bound ends at the check phase');
  assert.equal(log.length, 2 + MAX_BATCH);
});

test('endInTurn: a response whose end throws is destroyed, and the others are still ended', async () => {
  const log: string[] = [];
  endInTurn(recorder('a', log, { throws: true }), 'a');
  endInTurn(recorder('b', log, { throws: true }), 'b');
  endInTurn(recorder('c', log), 'c');
  assert.deepEqual(log, ['a:destroyed']);
  await checkPhase();
  assert.deepEqual(log, ['a:destroyed', 'b:destroyed', 'c:c']);
});

test('settleAnswers ends the held responses at once (a server about to close its connections), and the turn then finds none', async () => {
  const log: string[] = [];
  endInTurn(recorder('a', log), 'a');
  endInTurn(recorder('b', log), 'b');
  endInTurn(recorder('c', log), 'c');
  await settleAnswers();
  assert.deepEqual(log, ['a:a', 'b:b', 'c:c']);
  await checkPhase();
  assert.deepEqual(log, ['a:a', 'b:b', 'c:c'], 'none is ended twice');
});

test('settleAnswers waits for answers queued behind others on their connection, and no longer than its bound', async () => {
  const log: string[] = [];
  const first = recorder('first', log, { queued: true });
  const second = recorder('second', log, { queued: true });
  endInTurn(first, '1');
  endInTurn(second, '2');
  let settled = false;
  const settling = settleAnswers(5_000).then(() => (settled = true));
  await checkPhase();
  assert.equal(settled, false, 'two answers still wait for their connection');
  first.flush();
  await checkPhase();
  assert.equal(settled, false, 'one still waits');
  second.flush();
  await settling;
  assert.deepEqual(log, ['first:1', 'second:2', 'first:sent', 'second:sent']);
  // One that never goes out: the wait ends at the bound.
  const stuck = recorder('stuck', log, { queued: true });
  endInTurn(stuck, 'x');
  // Its timer is unref'd (a server's sockets keep the process up); this one stands in for them.
  const alive = setTimeout(() => {}, 5_000);
  const t0 = performance.now();
  await settleAnswers(50);
  const waited = performance.now() - t0;
  clearTimeout(alive);
  assert.ok(waited >= 45 && waited < 2_000, `waited ${waited} ms`);
  // It goes out at last: the next test starts with nothing tracked.
  stuck.flush();
});

test('settleAnswers waits for an answer whose socket still holds bytes for a slow reader, not for one already out', async () => {
  const log: string[] = [];
  const out = recorder('out', log);
  const slow = recorder('slow', log, { buffered: true });
  endInTurn(out, '1');
  endInTurn(slow, '2');
  let settled = false;
  const settling = settleAnswers(5_000).then(() => (settled = true));
  await checkPhase();
  assert.equal(settled, false, 'the slow reader has not taken its answer yet');
  slow.flush();
  await settling;
  assert.deepEqual(log, ['out:1', 'slow:2', 'slow:sent']);
});

test('endInTurn over real sockets: 64 concurrent requests, each answered with its own body', async () => {
  const server = createServer((req, res) => {
    const body = JSON.stringify({ url: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    endInTurn(res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    const get = (i: number) =>
      new Promise<string>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: `/r${i}` }, (res: IncomingMessage) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        })
          .on('error', reject)
          .end();
      });
    const got = await Promise.all(Array.from({ length: 64 }, (_, i) => get(i)));
    assert.deepEqual(
      got.map((t) => JSON.parse(t) as unknown),
      Array.from({ length: 64 }, (_, i) => ({ url: `/r${i}` })),
    );
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
