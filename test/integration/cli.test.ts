// The switchyard command: flags, help, graceful shutdown on signals, stdout kept clean.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { REPO_ROOT, everythingStdioCommand } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post, send } from '../helpers/http.js';

const BIN = path.join(REPO_ROOT, 'dist/src/cli/main.js');

interface Running {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Every gateway `start` spawned: those still running when the file's tests end are killed, so a
 * test that fails before its signal (an assertion) leaves no gateway behind. One did, with 200
 * client sockets open on it, and the file never ended: the suite hung instead of failing.
 */
const started = new Set<ChildProcess>();
after(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * Waits until the gateway's admin listener (`/status.json`) counts `count` calls in flight, for
 * at most `ms` milliseconds, and asserts it does: a signal sent then finds every call running.
 */
async function allRunning(run: Running, count: number, ms: number): Promise<void> {
  for (let i = 0; i < 250 && !/switchyard admin listener on \S+/.test(run.stderr()); i++) await new Promise((r) => setTimeout(r, 20));
  const admin = /switchyard admin listener on (\S+)/.exec(run.stderr())?.[1];
  assert.ok(admin, run.stderr());
  const running = async (): Promise<number> => {
    const status = (await (await fetch(new URL('status.json', admin))).json()) as { upstreams: Array<{ inFlight: number }> };
    return status.upstreams.reduce((n, u) => n + u.inFlight, 0);
  };
  const since = Date.now();
  while (Date.now() - since < ms && (await running()) < count) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await running(), count, 'every call runs when the signal comes');
}

async function start(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [BIN, '--port', '0', '--admin-port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no listening line: ${err}`)), 20_000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    child.on('exit', () => reject(new Error(`exited early: ${err}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, url, stdout: () => out, stderr: () => err, exited };
}

test('--help and --version print to stdout and exit 0', () => {
  const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  for (const flag of ['--host', '--port', '--path', '--stdio', '--legacy-sse', '--allowed-origin', '--allowed-host', '--log-level'])
    assert.ok(help.stdout.includes(flag), flag);
  const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

test('a bad flag exits non-zero with a message on stderr', () => {
  const r = spawnSync(process.execPath, [BIN, '--port', 'abc'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--port must be an integer from 0 to 65535/);
  const r2 = spawnSync(process.execPath, [BIN, '--limit', 'nope=1'], { encoding: 'utf8' });
  assert.notEqual(r2.status, 0);
  // A known bound with a bad value is told about its value, not sent to the list of names.
  const r3 = spawnSync(process.execPath, [BIN, '--limit', 'maxBodyBytes=-1'], { encoding: 'utf8' });
  assert.equal(r3.status, 2);
  assert.match(r3.stderr, /maxBodyBytes must be an integer of at least 1, got -1/);
});

test('default start serves the demo on the MCP path; SIGTERM lets in-flight work finish, then exits 0', async () => {
  const run = await start([]);
  assert.match(run.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const inflight = post(run.url, modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 3, stepMs: 150 } }), modernHeaders('tools/call', 'slow'));
  await new Promise((r) => setTimeout(r, 100));
  run.child.kill('SIGTERM');
  const r = await inflight;
  assert.equal(r.status, 200);
  assert.deepEqual((r.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Finished 3 steps.' }]);
  assert.equal(await run.exited, 0);
  assert.equal(run.stdout(), '');
  // Logs are JSON lines on stderr.
  const lines = run
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  assert.ok(lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'stopped'));
});

test('a second signal during the drain exits at once with 128 + its number (found by a trial)', async () => {
  const run = await start(['--limit', 'shutdownGraceMs=30000']);
  // Cut by the exit: its connection closes without an answer.
  const inflight = post(
    run.url,
    modernBody(1, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 20_000 } }),
    modernHeaders('tools/call', 'slow'),
  ).catch((err: Error) => err.name);
  await new Promise((r) => setTimeout(r, 300));
  const t0 = Date.now();
  run.child.kill('SIGTERM');
  for (let i = 0; i < 250 && !run.stderr().includes('"shutting down"'); i++) await new Promise((r) => setTimeout(r, 20));
  run.child.kill('SIGINT');
  assert.equal(await run.exited, 130);
  assert.ok(Date.now() - t0 < 10_000, 'did not wait for the 30 s grace');
  assert.match(run.stderr(), /"signal":"SIGINT","msg":"second signal while shutting down: exiting now"/);
  assert.equal(await inflight, 'SocketError');
});

test('SIGTERM while several calls finish in the same event-loop turn: every one is answered before the connections close', async () => {
  // The calls' timers expire together, so their answers come in one turn; all but the first are
  // held to the end of that turn (end-batch.ts), and shutdown follows at once: it must not cut them.
  const run = await start([]);
  const body = (id: number) => modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs: 3_000 } });
  const calls = Array.from({ length: 8 }, (_, i) => post(run.url, body(i + 1), modernHeaders('tools/call', 'slow')));
  // The signal comes once the admin listener counts all 8 running (a fixed 500 ms of a 1 s call
  // found some not yet admitted on a machine loaded beside the suite).
  await allRunning(run, 8, 2_500);
  run.child.kill('SIGTERM');
  const got = await Promise.all(calls);
  assert.deepEqual(
    got.map((r) => [r.status, (r.json as { id: number }).id]),
    Array.from({ length: 8 }, (_, i) => [200, i + 1]),
  );
  assert.equal(await run.exited, 0);
});

test('SIGTERM with pipelined calls: the answers queued behind others on their connection still go out', async () => {
  // 200 connections each pipeline 8 calls (12000, 11950 … 11650 ms): 1,600 calls, all running at
  // once (maxConcurrent raised) when the signal comes. Node sends a connection's answers in order,
  // so those ended early wait for the first; shutdown must wait for them too (end-batch.ts
  // settleAnswers). Found by a trial: 1,096–1,375 of 1,600 arrived. The signal waits until the
  // admin listener counts every call running, and the grace covers them: on a busy machine, a
  // signal at a fixed 500 ms found calls not yet read, refused as the gateway shut down. The calls
  // last 12 s: with 5 s, a CI run on a machine loaded by other work (2 cores) had not admitted all
  // 1,600 before the first ended, and the count fell back to 0; with 8 s calls and a 7 s wait, a
  // suite run at load 12 (2 cores, other suites beside it) had admitted 712. Now 12 s and 11 s.
  const run = await start(['--limit', 'maxConcurrent=2000', '--limit', 'shutdownGraceMs=30000']);
  const url = new URL(run.url);
  const call = (id: number, stepMs: number) => {
    const body = JSON.stringify(modernBody(id, 'tools/call', { name: 'slow', arguments: { steps: 1, stepMs } }));
    const head = Object.entries({ ...modernHeaders('tools/call', 'slow'), host: url.host, 'content-length': String(Buffer.byteLength(body)) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    return `POST ${url.pathname} HTTP/1.1\r\n${head}\r\n${body}`;
  };
  const sockets = await Promise.all(
    Array.from(
      { length: 200 },
      () =>
        new Promise<Socket>((resolve) => {
          const socket: Socket = connect(Number(url.port), '127.0.0.1', () => resolve(socket));
          socket.on('error', () => {});
        }),
    ),
  );
  const answered = sockets.map(
    (socket, c) =>
      new Promise<number>((resolve) => {
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (d: string) => (text += d));
        socket.on('close', () => resolve((text.match(/HTTP\/1\.1 200 /g) ?? []).length));
        socket.write(Array.from({ length: 8 }, (_, k) => call(c * 100 + k, 12_000 - 50 * k)).join(''));
      }),
  );
  await allRunning(run, 1_600, 11_000);
  run.child.kill('SIGTERM');
  const counts = await Promise.all(answered);
  assert.equal(
    counts.reduce((a, b) => a + b, 0),
    1_600,
    `connections cut short: ${counts.filter((n) => n < 8).length}`,
  );
  assert.equal(await run.exited, 0);
});

/**
 * One raw HTTP/1.1 POST of a 2026-07-28 echo whose answer holds `bytes` of text, on a socket that
 * does not read until `resume()` is called (a slow reader). `answer` resolves with everything
 * received once the server closes the connection.
 */
async function slowReaderEcho(mcpUrl: string, bytes: number): Promise<{ resume: () => void; answer: Promise<string> }> {
  const url = new URL(mcpUrl);
  const body = JSON.stringify(modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'y'.repeat(bytes) } }));
  const head = Object.entries({ ...modernHeaders('tools/call', 'echo'), host: url.host, 'content-length': String(Buffer.byteLength(body)) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const socket = await new Promise<Socket>((resolve) => {
    const s: Socket = connect(Number(url.port), '127.0.0.1', () => resolve(s));
    s.on('error', () => {});
  });
  const chunks: Buffer[] = [];
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
  socket.pause();
  socket.write(`POST ${url.pathname} HTTP/1.1\r\n${head}\r\n${body}`);
  return { resume: () => socket.resume(), answer };
}

/** The JSON of a chunked HTTP/1.1 response body (RFC 9112 §7.1), or of a Content-Length one. */
function httpJson(raw: string): { status: number; json: unknown } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  let rest = raw.slice(split + 4);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  if (!/transfer-encoding: chunked/i.test(head)) return { status, json: JSON.parse(rest) };
  let text = '';
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) break;
    // The sizes count bytes; the payload here is ASCII, so characters are bytes.
    text += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
  return { status, json: JSON.parse(text) };
}

test('SIGTERM while a large answer is still going out to a slow reader: it arrives whole before the connection closes', async () => {
  // 4 MB of answer: far more than the loopback socket buffers hold, so most of it waits in the
  // gateway (written in pieces as the socket drains) when the signal comes. Found by a review of
  // the shutdown path: the answer was cut when fastify closed the connections.
  const run = await start(['--max-body-bytes', String(16 * 1024 * 1024)]);
  const bytes = 4_000_000;
  const reader = await slowReaderEcho(run.url, bytes);
  await new Promise((r) => setTimeout(r, 500));
  run.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  reader.resume();
  const { status, json } = httpJson(await reader.answer);
  assert.equal(status, 200);
  const text = (json as { result: { content: Array<{ text: string }> } }).result.content[0].text;
  assert.equal(text.length, 'Echo: '.length + bytes);
  assert.equal(await run.exited, 0);
});

test('SIGTERM while a large 2024-11-05 message event still waits for a slow SSE reader: the event arrives whole before the stream closes', async () => {
  const run = await start(['--legacy-sse', '--max-body-bytes', String(16 * 1024 * 1024)]);
  const base = new URL(run.url);
  const socket = await new Promise<Socket>((resolve) => {
    const s: Socket = connect(Number(base.port), '127.0.0.1', () => resolve(s));
    s.on('error', () => {});
  });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(`GET /sse HTTP/1.1\r\nhost: ${base.host}\r\naccept: text/event-stream\r\n\r\n`);
  // The endpoint event names the POST URI (2024-11-05 basic/transports, HTTP with SSE).
  const endpoint = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no endpoint event: ${text}`)), 10_000);
    const look = () => {
      const m = /event: endpoint\r?\ndata: (\S+)/.exec(text);
      if (!m) return;
      clearTimeout(t);
      socket.off('data', look);
      resolve(m[1]);
    };
    socket.on('data', look);
  });
  const postUrl = new URL(endpoint, base).href;
  const json = { 'content-type': 'application/json' };
  const init = { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'slow-reader', version: '1' } };
  assert.equal((await post(postUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: init }, json)).status, 202);
  for (let i = 0; i < 200 && !text.includes('"id":1,'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(text.includes('"id":1,'), 'the initialize result arrived');
  assert.equal((await post(postUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, json)).status, 202);
  socket.pause();
  const bytes = 4_000_000;
  const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { message: 'z'.repeat(bytes) } } };
  assert.equal((await post(postUrl, body, json)).status, 202);
  await new Promise((r) => setTimeout(r, 500));
  run.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  socket.resume();
  await closed;
  const event = /event: message\r?\ndata: (\{"jsonrpc":"2\.0","id":7,.*)\r?\n\r?\n/.exec(text.replace(/\r\n([0-9a-f]+)\r\n/g, ''));
  assert.ok(event, `no whole message event for id 7 in ${text.length} characters`);
  const reply = JSON.parse(event[1]) as { result: { content: Array<{ text: string }> } };
  assert.equal(reply.result.content[0].text.length, 'Echo: '.length + bytes);
  assert.equal(await run.exited, 0);
});

test('SIGINT with a stdio child stops the child and exits 0; stdout stays empty', async () => {
  const run = await start(['--stdio', everythingStdioCommand(), '--legacy-sse']);
  const get = await send(run.url, 'GET', undefined, { accept: 'application/json' });
  assert.equal(get.status, 406);
  run.child.kill('SIGINT');
  assert.equal(await run.exited, 0);
  assert.equal(run.stdout(), '');
});

test('--path, --allowed-origin and legacy off: GET on the MCP path is 405', async () => {
  const run = await start(['--path', '/gw', '--allowed-origin', 'app.example']);
  try {
    assert.match(run.url, /\/gw$/);
    const r = await send(run.url, 'GET', undefined, { accept: 'text/event-stream' });
    assert.equal(r.status, 405);
    assert.deepEqual(r.json, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Method not allowed: GET without Mcp-Session-Id (no stream is offered outside a session)' },
    });
    const ok = await post(run.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), {
      ...modernHeaders('tools/call', 'echo'),
      origin: 'https://app.example',
    });
    assert.equal(ok.status, 200);
    const bad = await post(run.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), {
      ...modernHeaders('tools/call', 'echo'),
      origin: 'http://localhost',
    });
    assert.equal(bad.status, 403);
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
});

test('a refused config file is reported once: a line naming the file and the count, then each path on its own line (exit 1)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swy-cli-config-'));
  try {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ listen: { port: 'x' }, upstreams: { a: { url: 'ftp://x' } } }));
    const r = spawnSync(process.execPath, [BIN, '--config', file], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      `switchyard: Invalid configuration: ${file}: 2 errors\n` +
        '  /listen/port: must be integer\n' +
        '  /upstreams/a/url: must be an http:// or https:// URL with a host (e.g. https://mcp.example.com/mcp)\n',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('usage errors exit 2: empty --stdio, every dialect off, a malformed --allowed-origin', () => {
  for (const args of [
    ['--stdio', ''],
    ['--no-modern', '--no-streamable'],
    ['--allowed-origin', 'http://'],
    ['--max-sessions', '0'],
  ]) {
    const r = spawnSync(process.execPath, [BIN, '--port', '0', ...args], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 2, args.join(' '));
    assert.ok(r.stderr.length > 0);
  }
});

test('--allowed-origin with :port pins the port', async () => {
  const run = await start(['--allowed-origin', 'app.example:8443']);
  try {
    const at = (origin: string) =>
      post(run.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'x' } }), { ...modernHeaders('tools/call', 'echo'), origin });
    assert.equal((await at('https://app.example:8443')).status, 200);
    assert.equal((await at('https://app.example')).status, 403);
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
});

// Regression: `--allowed-origin http://foo.com` was reduced to `foo.com` (every scheme and port of
// that host, wider than the origin it names) while `allowedOrigins` in a file refuses the same
// value; docs/config.md gives both one rule. The flag now refuses it as a usage error, saying
// what to give instead, and so does `--allowed-host`.
test('--allowed-origin and --allowed-host refuse a URL as the config file does: exit 2, naming the flag and the entry to give', (t) => {
  for (const [flag, key, value, hint] of [
    ['--allowed-origin', 'allowedOrigins', 'http://foo.com', 'for http://foo.com give foo.com:80 (or foo.com for every port)'],
    ['--allowed-origin', 'allowedOrigins', 'https://app.example:8443', 'for https://app.example:8443 give app.example:8443 (or app.example for every port)'],
    ['--allowed-host', 'allowedHosts', 'https://[::1]', 'for https://[::1] give [::1]:443 (or [::1] for every port)'],
  ]) {
    // SIGKILL at the timeout: a gateway that started (the fault) must not outlive the test.
    const r = spawnSync(process.execPath, [BIN, '--port', '0', '--no-admin', flag, value], { encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' });
    assert.equal(r.status, 2, `${flag} ${value}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr.split('\n')[0],
      `error: option '${flag} <host>' argument '${value}' is invalid. expected a host, optionally with :port (e.g. app.example.com:443 or [::1]), as ${key} in a config file, not a URL: ${hint}`,
    );
  }
  // The file's own refusal of the same value.
  const dir = mkdtempSync(join(tmpdir(), 'sy-origin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'origins.yaml');
  writeFileSync(file, 'allowedOrigins: ["http://foo.com"]\n');
  const v = spawnSync(process.execPath, [BIN, 'validate', file], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(v.status, 1);
  assert.equal(v.stdout, `${file}: invalid config, 1 error\n  /allowedOrigins/0: must be a host, optionally with :port (e.g. app.example.com:443 or [::1])\n`);
});

// README: "Usage errors exit 2". Commander's own usage errors of every subcommand (a missing
// argument, an unknown option, an invalid option value) exit 2 like the main command's; for
// probe, exit 1 means "no era found", so a typo must not read as a verdict.
test("usage errors of the subcommands exit 2: probe, emulate and validate (and the main command's --upstream-header)", () => {
  for (const [args, message] of [
    [['probe'], "error: missing required argument 'url'"],
    [['probe', '--timeout-ms', 'abc', 'http://127.0.0.1:1/mcp'], "error: option '--timeout-ms <n>' argument 'abc' is invalid"],
    [['emulate'], "error: required option '--era <era>' not specified"],
    [['emulate', '--era', '1999-01-01'], "error: option '--era <era>' argument '1999-01-01' is invalid"],
    [['emulate', '--era', '2024-11-05', '--probe-body', 'xml'], "error: option '--probe-body <shape>' argument 'xml' is invalid"],
    [['validate'], "error: missing required argument 'file'"],
    [['validate', '--bogus', 'x'], "error: unknown option '--bogus'"],
    // Found by a trial (2026-12-05): a --stdio command that does not split was found while the
    // emulator started, and exited 1; and --upstream-header's error named --header.
    [['emulate', '--era', '2025-11-25', '--stdio', ''], 'switchyard emulate: SWY_ERR_CLI_USAGE: Invalid command line: empty --stdio command'],
    [['--upstream-header', 'nocolon'], 'switchyard: Invalid command line: --upstream-header expects K:V, got nocolon'],
  ] as const) {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 2, args.join(' '));
    assert.ok(r.stderr.startsWith(message), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' '));
  }
});

// Regression (found by a trial): a usage error printed the whole --help text (about a hundred
// lines) after its one useful line. Now the error line and where the help is, nothing more; the
// exit code stays 2.
test('a usage error prints its line and a hint naming the help of its command, not the help itself (exit 2)', () => {
  for (const [args, stderr] of [
    [['--bogus'], "error: unknown option '--bogus'\n(run `switchyard --help` for usage)\n"],
    [
      ['--port', 'abc'],
      "error: option '--port <port>' argument 'abc' is invalid. --port must be an integer from 0 to 65535\n(run `switchyard --help` for usage)\n",
    ],
    [['probe'], "error: missing required argument 'url'\n(run `switchyard probe --help` for usage)\n"],
    [['validate', '--bogus', 'x'], "error: unknown option '--bogus'\n(run `switchyard validate --help` for usage)\n"],
    [
      ['emulate', '--era', '1999-01-01'],
      "error: option '--era <era>' argument '1999-01-01' is invalid. Allowed choices are 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28.\n(run `switchyard emulate --help` for usage)\n",
    ],
  ] as const) {
    // SIGKILL at the timeout: a gateway that started (the fault) must not outlive the test.
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' });
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr, stderr);
    assert.equal(r.stdout, '');
  }
});

// A URL probe cannot speak and a header that cannot be sent are usage errors: refused at once
// (exit 2, nothing sent, no retries, no verdict), as `probe notaurl` is.
test('probe refuses a non-http(s) URL and a malformed --header at once with exit 2', () => {
  for (const [args, stderr] of [
    [['ftp://127.0.0.1/x'], 'switchyard probe: Invalid command line: not an http(s) URL: ftp://127.0.0.1/x\n'],
    [
      ['--header', 'bad header:x', 'http://127.0.0.1:1/mcp'],
      'switchyard probe: Invalid command line: invalid header name "bad …": a name is a token (letters, digits, !#$%&\'*+-.^_`|~), no spaces\n',
    ],
    [
      ['--header', 'x-a:b\u0001c', 'http://127.0.0.1:1/mcp'],
      'switchyard probe: Invalid command line: invalid value for header x-a: control characters (CR, LF, NUL, …) are not allowed\n',
    ],
    [['--header', 'nocolon', 'http://127.0.0.1:1/mcp'], 'switchyard probe: Invalid command line: --header expects K:V, got nocolon\n'],
  ] as const) {
    const r = spawnSync(process.execPath, [BIN, 'probe', ...args], { encoding: 'utf8', timeout: 10_000 });
    assert.deepEqual({ status: r.status, stderr: r.stderr, stdout: r.stdout }, { status: 2, stderr, stdout: '' }, args.join(' '));
  }
});
