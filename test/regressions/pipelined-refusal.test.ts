// A request node:http cannot parse, pipelined behind valid ones on the same connection, is
// refused only after their answers, in order (RFC 9112 §9.3), and every such refusal is counted
// once, under the code the client got. Found by a trial: the valid call ran (`outcome: ok` in the
// access log) and its answer never came, since the 400 ended the socket at once; framing refusals
// and 417s were missing from switchyard_refusals_total, and a body that timed out (408) was
// counted as SWY_ERR_REQ_PARSE.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { channels } from '../../src/core/diagnostics.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders } from '../helpers/http.js';

/** The HTTP/1.1 text of a 2026-07-28 tools/call of `name` with `args`. */
function callText(port: number, id: number, name: string, args: Record<string, unknown>): string {
  const body = JSON.stringify(modernBody(id, 'tools/call', { name, arguments: args }));
  const head = Object.entries({ ...modernHeaders('tools/call', name), host: `127.0.0.1:${port}`, 'content-length': String(Buffer.byteLength(body)) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `POST /mcp HTTP/1.1\r\n${head}\r\n${body}`;
}

/** Writes `text` on a new connection and resolves with everything read until the server closes it. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    let got = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (got += d));
    s.on('error', reject);
    s.on('close', () => resolve(got));
  });
}

const statusLines = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
const BAD = 'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!';

/** The refusals published while `fn` runs. */
async function refusalsDuring(fn: () => Promise<void>): Promise<Array<{ code: string; status: number }>> {
  const seen: Array<{ code: string; status: number }> = [];
  const on = (m: unknown) => {
    const r = m as { code: string; status: number };
    seen.push({ code: r.code, status: r.status });
  };
  channels.refusal.subscribe(on);
  try {
    await fn();
  } finally {
    channels.refusal.unsubscribe(on);
  }
  return seen;
}

test('valid calls pipelined before a malformed request are answered, in order, before its 400', async (t) => {
  const gw = await gateway(t);
  const port = gw.http.address().port;
  const seen = await refusalsDuring(async () => {
    const text = await exchange(port, callText(port, 1, 'slow', { steps: 1, stepMs: 300 }) + callText(port, 2, 'echo', { message: 'second' }) + BAD);
    assert.deepEqual(statusLines(text), [200, 200, 400]);
    assert.ok(text.indexOf('Finished 1 steps.') < text.indexOf('Echo: second'), text);
    assert.match(text.slice(text.lastIndexOf('HTTP/1.1 400')), /"error":\{"code":-32600,"message":"Invalid HTTP request: Bad Request"\}/);
    // A garbage request line after one valid call.
    assert.deepEqual(statusLines(await exchange(port, callText(port, 3, 'echo', { message: 'x' }) + '\x01\x02 garbage\r\n\r\n')), [200, 400]);
  });
  assert.deepEqual(seen, [
    { code: 'SWY_ERR_HTTP_FRAMING', status: 400 },
    { code: 'SWY_ERR_HTTP_FRAMING', status: 400 },
  ]);
});

test('a body that does not arrive in time is one refusal, 408 SWY_ERR_HTTP_FRAMING; a bad Expect is counted as 417', async (t) => {
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, headTimeoutMs: 300, bodyTimeoutMs: 300 } });
  const port = gw.http.address().port;
  const seen = await refusalsDuring(async () => {
    const whole = callText(port, 1, 'echo', { message: 'never finished' });
    assert.deepEqual(statusLines(await exchange(port, whole.slice(0, -10))), [408]);
    const expect = callText(port, 2, 'echo', { message: 'x' }).replace('\r\n\r\n', '\r\nExpect: something-else\r\n\r\n');
    const s = net.connect(port, '127.0.0.1', () => s.write(expect));
    const first = await new Promise<string>((resolve) => s.once('data', (d) => resolve(d.toString())));
    s.destroy();
    assert.deepEqual(statusLines(first), [417]);
    // Let a late refusal of the timed-out request (its aborted body read) show, if any.
    await new Promise((r) => setTimeout(r, 200));
  });
  assert.deepEqual(seen, [
    { code: 'SWY_ERR_HTTP_FRAMING', status: 408 },
    { code: 'SWY_ERR_HTTP_EXPECTATION_FAILED', status: 417 },
  ]);
});

test('a body over the listener limit is one refusal, 413 SWY_ERR_HTTP_BODY_TOO_LARGE, not also a 400 when the client then closes (found by a trial)', async (t) => {
  // The 413 went out before the body was read; when the client closed (curl does, as soon as it
  // reads the 413), node's parser hit the end of the connection inside that unread body
  // (HPE_INVALID_EOF_STATE) and the same request was counted again as SWY_ERR_HTTP_FRAMING 400,
  // with a `request refused` line.
  const gw = await gateway(t, { limits: { ...DEFAULT_LIMITS, maxBodyBytes: 4096 } });
  const port = gw.http.address().port;
  const seen = await refusalsDuring(async () => {
    const text = callText(port, 1, 'echo', { message: 'x'.repeat(200_000) });
    // Part of the body, past the limit; the rest never comes: the client closes once it has the 413.
    const got = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => s.write(text.slice(0, 20_000)));
      let all = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        all += d;
        if (all.includes('\r\n\r\n')) s.end();
      });
      s.on('error', reject);
      s.on('close', () => resolve(all));
    });
    assert.deepEqual(statusLines(got), [413], got);
    await new Promise((r) => setTimeout(r, 200));
  });
  assert.deepEqual(seen, [{ code: 'SWY_ERR_HTTP_BODY_TOO_LARGE', status: 413 }]);
});

/** The HTTP/1.1 text of a whole POST to `path` with `body`, `Content-Type` `type`. */
function postText(port: number, path: string, body: string, type = 'application/json'): string {
  const head = `Host: 127.0.0.1:${port}\r\nContent-Type: ${type}\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return `POST ${path} HTTP/1.1\r\n${head}\r\n${body}`;
}

test(
  'a request the front door refuses, read whole before bytes the parser refuses, is answered before their 400 (found by a trial)',
  { timeout: 20_000 },
  async (t) => {
    // A body that is not JSON (400 -32700), a Content-Type that is not JSON (415) and an unknown
    // path (404) are refused by the front door's own `refuse`, after their body is read. When the
    // same packet carried unparseable bytes behind them, the parser's refusal marked the socket
    // first and `refuse` then skipped the answer as if the 400 written by hand were it; that 400
    // waited for the answer, so the client got nothing and the connection stayed open for good.
    const gw = await gateway(t);
    const port = gw.http.address().port;
    const garbage = 'garbage\r\n\r\n';
    const seen = await refusalsDuring(async () => {
      const parse = await exchange(port, postText(port, '/mcp', '{"jsonrpc"') + garbage);
      assert.deepEqual(statusLines(parse), [400, 400], parse);
      assert.match(parse, /"error":\{"code":-32700,"message":"Parse error: invalid JSON"\}/);
      assert.match(parse.slice(parse.lastIndexOf('HTTP/1.1 400')), /"message":"Invalid HTTP request: Bad Request"/);
      const media = await exchange(port, postText(port, '/mcp', '{}', 'text/plain') + garbage);
      assert.deepEqual(statusLines(media), [415, 400], media);
      const path = await exchange(port, postText(port, '/elsewhere', '{}') + garbage);
      assert.deepEqual(statusLines(path), [404, 400], path);
    });
    // Each request counted once, under the code its client got (the order of the two of one
    // connection is the parser's and the handler's, not asserted).
    const key = (r: { code: string; status: number }) => `${r.code} ${r.status}`;
    assert.deepEqual(seen.map(key).sort(), [
      'SWY_ERR_HTTP_CONTENT_TYPE 415',
      'SWY_ERR_HTTP_FRAMING 400',
      'SWY_ERR_HTTP_FRAMING 400',
      'SWY_ERR_HTTP_FRAMING 400',
      'SWY_ERR_HTTP_NOT_FOUND 404',
      'SWY_ERR_REQ_PARSE 400',
    ]);
  },
);
