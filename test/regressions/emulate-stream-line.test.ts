// Regression (found by h-trial9, a client author reading `switchyard emulate --log`): each
// request's JSON line is written once its answer has started, so for an SSE answer it held only
// the first event: a 2026-07-28 tools/call answered on a request stream was logged with
// `"events":1,"replies":[]` though three events went out, the last one the result, and a stream
// cut by --drop-stream-after never showed `"dropped":true` there (the --report text, built from
// the live records at the end, did). Now an SSE answer gets a second line, `client stream ended`,
// with the same `seq` and the record as the stream ended.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startEmulator } from '../../src/emulate/index.js';
import { modernBody, modernHeaders, parseSse, post } from '../helpers/http.js';

interface Line {
  seq: number;
  msg: string;
  status: number;
  sse: boolean;
  events: number;
  replies: unknown[];
  dropped?: boolean;
}

/** The lines of the request log once `n` of them are there (pino writes them asynchronously). */
async function linesOf(file: string, n: number): Promise<Line[]> {
  let lines: Line[] = [];
  for (let i = 0; i < 100; i++) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // Not created yet.
    }
    lines = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
    if (lines.length >= n) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return lines;
}

const slowCall = (id: number) => modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 2, stepMs: 50 }, _meta: { progressToken: `p${id}` } });

for (const dropStreamAfter of [undefined, 2] as const) {
  test(`emulate --log: an SSE answer's stream end is logged with its events and replies${dropStreamAfter ? ' (--drop-stream-after 2)' : ''}`, async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'emulate-stream-line-'));
    const logFile = path.join(dir, 'requests.jsonl');
    const emu = await startEmulator({ era: '2026-07-28', host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), logFile, dropStreamAfter });
    t.after(async () => {
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const r = await post(emu.url, slowCall(1), modernHeaders('tools/call', 'slow')).catch((err: unknown) => err);
    if (dropStreamAfter === undefined) {
      // Two progress notifications, then the result: three events on the wire.
      const events = parseSse((r as { text: string }).text);
      assert.deepEqual(
        events.map((e) => (JSON.parse(e.data) as { method?: string; id?: number }).method ?? (JSON.parse(e.data) as { id?: number }).id),
        ['notifications/progress', 'notifications/progress', 1],
      );
    }
    const lines = await linesOf(logFile, 2);
    assert.deepEqual(
      lines.map((l) => [l.seq, l.msg]),
      [
        [1, 'client request'],
        [1, 'client stream ended'],
      ],
    );
    const end = lines[1];
    assert.equal(end.status, 200);
    assert.equal(end.sse, true);
    if (dropStreamAfter === undefined) {
      assert.equal(end.events, 3);
      // One reply, the result (its id's spelling is the record's business, not this test's).
      assert.deepEqual(
        end.replies.map((x) => (x as { ok: boolean }).ok),
        [true],
      );
      assert.equal(end.dropped, undefined);
    } else {
      assert.equal(end.events, 2);
      assert.deepEqual(end.replies, []);
      assert.equal(end.dropped, true);
    }
  });
}
