// Found by a client-author trial (h-trial12): `switchyard probe` printed what a server sent as
// it came. A server whose serverInfo.name held `ESC ] 0 ; … BEL CR ESC [ K verdict: fine`
// retitled the terminal window and rewrote the report's `server:` line into a forged
// `verdict: fine`; an answer's excerpt could erase or recolour lines the same way, and U+202E
// reversed the text after it. `emulate --report` printed a client's JSON-RPC method name so. The human
// reports now escape control and bidirectional characters (`\x1b`, `\u202e`); --json was
// already escaped by JSON.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pino from 'pino';
import { request } from 'undici';
import { startEmulator } from '../../src/emulate/index.js';
import { CLI } from '../helpers/cli.js';
import { stubHttp } from '../helpers/stub-http.js';

const probe = (...args: string[]) =>
  promisify(execFile)(process.execPath, [CLI, 'probe', '--timeout-ms', '5000', ...args], { encoding: 'utf8' }).then((r) => r.stdout);

test('probe: control and bidirectional characters a server sends are escaped in the printed report', async (t) => {
  const s = await stubHttp(t, (_req, res, m) => {
    if (m?.method === 'server/discover') return void res.writeHead(400, { 'content-type': 'text/plain' }).end('no\x1b[2K\r\x1b[32mfine\x1b[0m');
    const serverInfo = { name: 'evil\x1b]0;pwned\x07\r\x1b[Kverdict: fine', version: '1\u202egnp\u009b' };
    res
      .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo } }));
  });
  const out = await probe(s.url);
  assert.deepEqual(out.split('\n').slice(0, 2), ['1. POST /mcp server/discover', '   → HTTP 400  no\\x1b[2K \\x1b[32mfine\\x1b[0m']);
  assert.ok(out.includes('\nverdict: 2025-11-25 over streamable-http\nserver: evil\\x1b]0;pwned\\x07\\x0d\\x1b[Kverdict: fine 1\\u202egnp\\x9b\n'), out);
  // Nothing a terminal acts on is left: the only control character is the line feed.
  // eslint-disable-next-line no-control-regex -- the controls are what must be absent
  assert.doesNotMatch(out, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  // --json keeps the value as sent (JSON escapes it).
  const json = JSON.parse(await probe('--json', s.url)) as { serverInfo: { name: string } };
  assert.equal(json.serverInfo.name, 'evil\x1b]0;pwned\x07\r\x1b[Kverdict: fine');
});

test("emulate --report: a client's control characters are escaped in the printed report", async (t) => {
  const emu = await startEmulator({ era: '2025-11-25', host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), logFile: '/dev/null' });
  t.after(() => emu.close());
  const res = await request(emu.url, {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list\x1b[2K\rverdict: fine' }),
  });
  await res.body.dump();
  assert.deepEqual(emu.report().split('\n').slice(1), [
    'POST /mcp (tools/list\\x1b[2K\\x0dverdict: fine) → 400',
    'verdict: did not fall back (gave up after POST /mcp → 400)',
    '',
  ]);
});
