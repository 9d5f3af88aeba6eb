// Found by a client-author trial of `probe` and `emulate` (helper h-probe, 2026-12-05): their ms
// flags took any safe integer, but a Node timer longer than 2^31 − 1 ms fires after 1 ms. So
// `emulate --slow-ms 3000000000` answered every request at once (with a TimeoutOverflowWarning),
// `--endpoint-delay` likewise sent the endpoint at once, and `probe --timeout-ms` past it gave up
// waiting for the endpoint event at once (past 2^32 − 1 every step failed with a RangeError,
// printed as if the server had not answered). They now stop at 2147483647 ms, as the config
// file's ms bounds do: one more is a usage error (exit 2).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { CLI } from '../helpers/cli.js';
import { stubHttp } from '../helpers/stub-http.js';

/** Runs the CLI with `args`; kills it after `boundMs` (code null then). */
function run(args: readonly string[], boundMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const kill = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.on('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, stdout, stderr });
    });
  });
}

/** An HTTP+SSE-only server on 127.0.0.1 port 0 that sends its endpoint event at once and answers initialize. */
async function sseServer(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  let stream: http.ServerResponse | undefined;
  const { url } = await stubHttp(t, (req, res, m) => {
    if (req.method === 'GET') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages\n\n');
      return;
    }
    if (req.url === '/mcp') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(202).end();
    const result = { protocolVersion: '2024-11-05', capabilities: {}, serverInfo: { name: 'sse', version: '1' } };
    stream?.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m?.id, result })}\n\n`);
  });
  return url;
}

test('probe --timeout-ms: 2147483647 is taken (the probe finds the era), 2147483648 is a usage error', async (t) => {
  const url = await sseServer(t);
  const ok = await run(['probe', '--timeout-ms', '2147483647', url], 15_000);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^verdict: 2024-11-05 over http\+sse /m);
  assert.doesNotMatch(ok.stderr, /TimeoutOverflowWarning/);
  const over = await run(['probe', '--timeout-ms', '2147483648', url], 15_000);
  assert.equal(over.code, 2, over.stdout + over.stderr);
  assert.equal(over.stdout, '');
  assert.match(over.stderr, /^error: option '--timeout-ms <n>' argument '2147483648' is invalid\. --timeout-ms must be an integer from 1 to 2147483647$/m);
});

for (const flag of ['--slow-ms', '--endpoint-delay']) {
  test(`emulate ${flag} 2147483648 is a usage error, before anything listens`, async () => {
    const r = await run(['emulate', '--era', '2024-11-05', '--port', '0', flag, '2147483648'], 15_000);
    assert.equal(r.code, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /emulating/);
    assert.match(
      r.stderr,
      new RegExp(`^error: option '${flag} <ms>' argument '2147483648' is invalid\\. ${flag} must be an integer from 0 to 2147483647$`, 'm'),
    );
  });
}
