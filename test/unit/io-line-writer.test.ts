// LineWriter (src/io/line-writer.ts): lines into a stream in order, a line in pieces written only
// as the stream drains, what comes meanwhile after it, and end() after the last line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { LineWriter } from '../../src/io/line-writer.js';

/**
 * A Writable that takes one chunk per event-loop turn (as a pipe to a slow reader does), with a
 * small high-water mark, and records what it was given and the most ever buffered at once.
 */
function slowStream(highWaterMark = 16) {
  const got: string[] = [];
  let most = 0;
  const out = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _enc, cb) {
      got.push(chunk);
      setImmediate(cb);
    },
  });
  const write = out.write.bind(out);
  out.write = ((chunk: string, ...rest: never[]) => {
    const r = write(chunk, ...rest);
    most = Math.max(most, out.writableLength);
    return r;
  }) as typeof out.write;
  return { out, got, most: () => most };
}

test('lines in one string and lines in pieces arrive whole and in order; pieces go only as the stream drains', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.oneof(
          fc.string({ maxLength: 20 }).map((s) => s.replace(/\n/g, ' ')),
          fc.array(
            fc.string({ minLength: 1, maxLength: 40 }).map((s) => s.replace(/\n/g, ' ')),
            { minLength: 1, maxLength: 6 },
          ),
        ),
        {
          maxLength: 8,
        },
      ),
      async (lines) => {
        const { out, got, most } = slowStream();
        const w = new LineWriter(out, 1000);
        for (const l of lines) assert.equal(w.write(l), true);
        w.end();
        await once(out, 'finish');
        assert.equal(got.join(''), lines.map((l) => `${typeof l === 'string' ? l : l.join('')}\n`).join(''));
        // At most one piece beyond the high-water mark, plus the string lines that came while it was written.
        const longestString = Math.max(0, ...lines.filter((l): l is string => typeof l === 'string').map((l) => l.length + 1));
        assert.ok(most() <= 16 + 40 + 1 + longestString * lines.length, `buffered ${most()}`);
      },
    ),
    { numRuns: 200 },
  );
});

test('backlog: what the stream holds, plus waiting lines (a string by its length, a line in pieces as largeLineBytes)', async () => {
  const { out } = slowStream(4);
  const w = new LineWriter(out, 1000);
  w.write(['aaaa', 'bbbb', 'cccc']);
  // The first piece is in the stream; the line in pieces counts as 1000 until it is written.
  assert.equal(w.backlog, out.writableLength + 1000);
  w.write('xyz');
  w.write(['p', 'q']);
  assert.equal(w.backlog, out.writableLength + 1000 + 4 + 1000);
  w.end();
  await once(out, 'finish');
  assert.equal(w.backlog, 0);
  assert.equal(w.write('late'), false, 'nothing is taken once ended');
});

test('a line whose pieces throw ends the stream (the child would read the rest as the next line); later writes are refused', async () => {
  const { out, got } = slowStream();
  const w = new LineWriter(out, 1000);
  w.write('first');
  w.write(
    (function* () {
      yield 'part';
      throw new Error('cannot serialize');
    })(),
  );
  w.write('after');
  await once(out, 'finish');
  assert.equal(got.join(''), 'first\npart');
  assert.equal(w.write('later'), false);
});
