// Property tests (fast-check) for the parsers: JSON bodies, mirrored header values, SSE frames,
// stdio command lines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { classify, parseBody, serialize } from '../../src/core/message.js';
import { decodeHeaderValue, encodeHeaderValue } from '../../dialects/2026-07-28/codec.js';
import { openSse } from '../../src/transports/sse.js';
import { splitCommand } from '../../src/upstreams/stdio/index.js';
import { parseSse } from '../helpers/http.js';
import { SwitchyardError } from '../../src/core/errors.js';

test('parseBody returns what JSON.parse returns for any JSON without long integers', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
      const text = JSON.stringify(v);
      assert.deepEqual(parseBody(text, DEFAULT_LIMITS).value, JSON.parse(text));
    }),
    { numRuns: 300 },
  );
});

test('parseBody throws only catalogue errors, never anything else, on arbitrary text', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      try {
        parseBody(text, DEFAULT_LIMITS);
      } catch (err) {
        assert.ok(err instanceof SwitchyardError);
        assert.ok(['SWY_ERR_REQ_PARSE', 'SWY_ERR_REQ_INT_TOO_LONG'].includes(err.code));
      }
    }),
    { numRuns: 1000 },
  );
});

test('integer ids round-trip exactly through parseBody and serialize across the int64 range', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (id) => {
      const text = `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`;
      const { value } = parseBody(text, DEFAULT_LIMITS);
      assert.equal(classify(value, DEFAULT_LIMITS), 'request');
      assert.equal(serialize(value), text);
    }),
    { numRuns: 500 },
  );
});

test('mirrored header values: decode(encode(v)) is v for any string, and encodings are visible ASCII', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (v) => {
      const enc = encodeHeaderValue(v);
      assert.match(enc, /^[\x20-\x7e]*$/);
      assert.equal(decodeHeaderValue(enc), v);
    }),
    { numRuns: 500 },
  );
});

test('splitCommand inverts single-quote quoting of any argv', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.string({ maxLength: 10 }).filter((s) => !s.includes("'")),
        { minLength: 1, maxLength: 6 },
      ),
      (argv) => {
        const line = argv.map((a) => `'${a}'`).join(' ');
        assert.deepEqual(splitCommand(line), argv);
      },
    ),
    { numRuns: 300 },
  );
});

test('SSE frames written by openSse parse back to the same events', async (t) => {
  const events = fc.sample(
    fc.record({
      event: fc.option(fc.constantFrom('message', 'endpoint'), { nil: undefined }),
      id: fc.option(fc.stringMatching(/^[a-z0-9.]{1,8}$/), { nil: undefined }),
      data: fc.jsonValue({ maxDepth: 3 }).map((v) => serialize(v)),
    }),
    200,
  );
  const server = http.createServer((_req, res) => {
    const s = openSse(res, { keepaliveMs: 0, maxBufferBytes: 1 << 24 });
    for (const ev of events) s.send(ev);
    s.close();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  const got = parseSse(await res.text());
  assert.deepEqual(
    got.map((e) => ({ event: e.event, id: e.id, data: e.data })),
    events.map((e) => ({ event: e.event, id: e.id, data: e.data })),
  );
});
