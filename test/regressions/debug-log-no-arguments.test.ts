// Tool-call arguments (which may hold secrets) and result content never reach the log, at any
// level: a gateway logging at `trace` (the most verbose pino level, `debug` included) in front of
// an HTTP upstream and a stdio child, called in both eras with a marker in the arguments that the
// upstream echoes into its result, and with calls that fail (an unknown tool, arguments the tool's
// schema refuses). Every log line the gateway wrote is read as raw text: the marker is in no line,
// while the method, the upstream and the outcome of each call are (what an operator debugs
// routing with). Asked by review of the logging rule (STYLE §6: bodies only at debug), which
// found no line that logs a body; this keeps it so. docs/operations.md, "What the log carries".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { initSession, modernBody, modernHeaders, post } from '../helpers/http.js';
import { opsHttp, RAW_SERVER } from '../helpers/ops.js';

const MARKER = 'swy-marker-7f3a9c-s3cret';

test('at trace level, no log line carries a tool call’s argument values or its result content; each call’s method and outcome are logged', async (t) => {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString('utf8');
      cb();
    },
  });
  const upstream = await opsHttp(t);
  const config = validateConfig(
    {
      listen: { host: '127.0.0.1', port: 0 },
      admin: false,
      upstreams: { web: { url: upstream.url }, kid: { command: process.execPath, args: [RAW_SERVER, 'stdio'] } },
    },
    'test',
    { env: {} },
  );
  const gw = await startGatewayFromConfig(config, pino({ level: 'trace' }, sink), { operations: true });
  t.after(() => gw.close());
  const [web, kid] = gw.urls;

  const modern = (url: string, id: number, name: string, args: Record<string, unknown>) =>
    post(url, modernBody(id, 'tools/call', { name, arguments: args }), modernHeaders('tools/call', name));
  const echoed = { content: [{ type: 'text', text: `Echo: ${MARKER}` }] };
  for (const url of [web, kid]) {
    const r = await modern(url, 1, 'echo', { message: MARKER });
    assert.deepEqual((r.json as { result: { content: unknown } }).result.content, echoed.content);
  }
  // A 2025 session to the stdio child.
  const h = await initSession(kid);
  const legacy = await post(kid, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: MARKER } } }, h);
  assert.deepEqual(legacy.json, { jsonrpc: '2.0', id: 2, result: echoed });
  // Failures: the upstream does not have the tool; the tool's schema refuses the arguments.
  const unknown = await modern(web, 3, 'nope', { message: MARKER });
  assert.equal((unknown.json as { error: { code: number } }).error.code, -32602);
  const refused = await modern(kid, 4, 'echo', { message: 7, note: MARKER });
  assert.equal((refused.json as { error: { code: number } }).error.code, -32602);

  await gw.close();
  const lines = text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(lines.length > 0);
  assert.deepEqual(
    text.split('\n').filter((l) => l.includes(MARKER)),
    [],
  );
  // What an operator routes by is there: one access line per call, with its method, upstream and outcome.
  const calls = lines
    .filter((l) => l.msg === 'request' && l.method === 'tools/call')
    .map((l) => [l.upstream, l.outcome, l.rpcCode ?? null])
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  assert.deepEqual(calls, [
    ['kid', 'error', -32602],
    ['kid', 'ok', null],
    ['kid', 'ok', null],
    ['web', 'error', -32602],
    ['web', 'ok', null],
  ]);
});
