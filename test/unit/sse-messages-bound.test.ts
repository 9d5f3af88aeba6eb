// sseMessages and maxUpstreamMessageBytes: the bound holds at limit and limit+1 however the
// event's bytes are cut, an event over it is told apart from one that is not JSON
// (invalidEventOf), and nothing after an event that ends the stream is given.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { invalidEventOf, sseMessages } from '../../src/upstreams/http/transport.js';

const BOUND = 128;
const limits = { ...DEFAULT_LIMITS, maxUpstreamMessageBytes: BOUND };

/** The messages `chunks` give, and the fault that ended them (invalidEventOf of the error), if any. */
async function read(chunks: string[]): Promise<{ messages: unknown[]; bad: unknown }> {
  const messages: unknown[] = [];
  try {
    for await (const m of sseMessages(
      (async function* () {
        yield* chunks;
      })(),
      limits,
    ))
      messages.push(m);
  } catch (err) {
    return { messages, bad: invalidEventOf(err) ?? err };
  }
  return { messages, bad: undefined };
}

/** An event whose data is a JSON-RPC notification padded to exactly `chars` characters. */
function eventOf(chars: number): { data: string; message: unknown } {
  const base = { jsonrpc: '2.0', method: 'notifications/message', params: { data: '' } };
  const pad = chars - JSON.stringify(base).length;
  const message = { ...base, params: { data: 'x'.repeat(pad) } };
  const data = JSON.stringify(message);
  assert.equal(data.length, chars);
  return { data, message };
}

const after = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
const stream = (data: string) => `data: ${data}\n\ndata: ${JSON.stringify(after)}\n\n`;

test('an event of exactly maxUpstreamMessageBytes characters, whole in one chunk, is given', async () => {
  const { data, message } = eventOf(BOUND);
  assert.deepEqual(await read([stream(data)]), { messages: [message, after], bad: undefined });
});

test('an event of maxUpstreamMessageBytes + 1 characters, whole in one chunk, ends the stream as oversize; the event after it is not given', async () => {
  const { data } = eventOf(BOUND + 1);
  assert.deepEqual(await read([stream(data)]), { messages: [], bad: { overChars: BOUND } });
});

test('an event that is not JSON ends the stream with its excerpt; the event after it in the same chunk is not given', async () => {
  assert.deepEqual(await read([stream('{oops')]), { messages: [], bad: { excerpt: '{oops' } });
});

test('property: at the bound an event is given, past it oversize, wherever the chunks are cut', async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: BOUND - 4, max: BOUND + 4 }), fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 6 }), async (chars, cuts) => {
      const { data, message } = eventOf(chars);
      const text = stream(data);
      const at = [...new Set(cuts.map((c) => c % text.length))].sort((a, b) => a - b);
      const chunks = [0, ...at, text.length].slice(1).map((end, i, all) => text.slice(i === 0 ? 0 : all[i - 1], end));
      const got = await read(chunks.filter((c) => c !== ''));
      if (chars <= BOUND) assert.deepEqual(got, { messages: [message, after], bad: undefined });
      else assert.deepEqual(got, { messages: [], bad: { overChars: BOUND } });
    }),
    { numRuns: 200 },
  );
});
