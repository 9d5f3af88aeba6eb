// The client-fallback bench (`switchyard emulate`): real clients against emulated
// eras and knobs, asserting the outcome the bench reports.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { EmulateOptions, Emulator } from '../../src/emulate/index.js';
import { emulateProcess, testEmulator, within } from '../helpers/emulate.js';
import { CLI } from '../helpers/cli.js';
import { connect } from '../helpers/clients.js';

const require = createRequire(import.meta.url);
const MCP_REMOTE = path.join(path.dirname(require.resolve('mcp-remote/package.json')), 'dist/proxy.js');

/** An in-process emulator on 127.0.0.1:0 with its request lines in a temp file. */
async function emulator(t: { after(fn: () => Promise<void>): void }, o: Omit<EmulateOptions, 'port' | 'host' | 'log' | 'logFile'>): Promise<Emulator> {
  return (await testEmulator(t, o)).emu;
}

/** The v1 SDK's documented fallback: Streamable HTTP first; on a connect error, a new Client over SSE on the same URL. */
async function v1WithFallback(url: string, opened?: Array<{ close(): Promise<void> }>): Promise<{ client: Client; transport: 'streamable' | 'sse' }> {
  const u = new URL(url);
  const first = new Client({ name: 'v1-fallback', version: '1.0.0' });
  try {
    await first.connect(new StreamableHTTPClientTransport(u));
    return { client: first, transport: 'streamable' };
  } catch {
    const client = new Client({ name: 'v1-fallback', version: '1.0.0' });
    const sse = new SSEClientTransport(u);
    opened?.push(sse);
    await client.connect(sse);
    return { client, transport: 'sse' };
  }
}

/** mcp-remote 0.15.1 (http-first) driven by a v1 stdio client; resolves connected or rejected. */
async function viaMcpRemote(t: { after(fn: () => Promise<void>): void }, url: string): Promise<Client> {
  const configDir = mkdtempSync(path.join(tmpdir(), 'mcp-remote-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, url, '--transport', 'http-first'],
    env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: configDir },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'via-mcp-remote', version: '1.0.0' });
  t.after(async () => {
    await client.close().catch(() => {});
    rmSync(configDir, { recursive: true, force: true });
  });
  await within(client.connect(transport), 20_000, 'mcp-remote connect');
  return client;
}

async function echo(client: Pick<Client, 'callTool'>, message: string): Promise<void> {
  const r = (await within(client.callTool({ name: 'echo', arguments: { message } }), 10_000, 'tools/call')) as { content: Array<{ text?: string }> };
  assert.ok(
    r.content.some((c) => c.text?.includes(message)),
    JSON.stringify(r),
  );
}

/** Waits until the emulator's verdict satisfies `ok` (records are written as answers start). */
async function settled(emu: Emulator, ok: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + 5_000;
  while (!ok(emu.verdict().text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return emu.verdict().text;
}

// Acceptance 2: the v1 SDK's fallback pattern against a 2024-11-05 server ends on HTTP+SSE and calls a tool.
test('emulate --era 2024-11-05 (process): the v1 fallback pattern ends on HTTP+SSE and calls a tool; --report says so', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'emulate-log-'));
  t.after(async () => rmSync(dir, { recursive: true, force: true }));
  const logFile = path.join(dir, 'requests.jsonl');
  const emu = await emulateProcess(t, ['--era', '2024-11-05', '--report', '--log', logFile]);
  const { client, transport } = await within(v1WithFallback(emu.url), 15_000, 'v1 fallback');
  assert.equal(transport, 'sse');
  await echo(client, 'over http+sse');
  await client.close();
  const { stdout, code } = await emu.stop();
  assert.equal(code, 0);
  assert.match(stdout, /POST \/mcp \(initialize\) → 405; GET \/mcp → endpoint; POST \/messages\?sessionId=… \(initialize\) → 202/);
  assert.match(stdout, /verdict: fell back to HTTP\+SSE \(negotiated 2024-11-05\); called a tool/);
  // One JSON line per request, with the headers that matter and the status.
  const lines = readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { method: string; path: string; status: number; headers: Record<string, string> });
  assert.deepEqual(
    lines.slice(0, 2).map((l) => [l.method, l.path, l.status]),
    [
      ['POST', '/mcp', 405],
      ['GET', '/mcp', 200],
    ],
  );
  assert.equal(lines[1].headers.accept, 'text/event-stream');
});

// Acceptance 3: mcp-remote http-first does not fall back on a 400.
test('emulate --era 2024-11-05 --probe-status 400 (process): mcp-remote http-first does not fall back; the report says so', async (t) => {
  const emu = await emulateProcess(t, ['--era', '2024-11-05', '--probe-status', '400', '--report']);
  await assert.rejects(viaMcpRemote(t, emu.url));
  const { stdout } = await emu.stop();
  assert.match(stdout, /POST \/mcp \(initialize\) → 400 \[probe-status 400\]/);
  assert.match(stdout, /verdict: did not fall back/);
  // mcp-remote GETs the URL itself (and OAuth metadata) before its POST; it never POSTs to an endpoint.
  assert.doesNotMatch(stdout, /POST \/messages/);
});

test('emulate --era 2024-11-05 --probe-status 404: mcp-remote http-first falls back to HTTP+SSE and calls a tool', async (t) => {
  const emu = await emulator(t, { era: '2024-11-05', probeStatus: 404 });
  const client = await viaMcpRemote(t, emu.url);
  await echo(client, 'mcp-remote after 404');
  const text = await settled(emu, (v) => v.includes('called a tool'));
  assert.match(text, /^fell back to HTTP\+SSE/);
  assert.equal(emu.verdict().fellBack, true);
  assert.equal(emu.verdict().transport, 'http+sse');
  assert.match(emu.report(), /POST \/mcp \(initialize\) → 404 \[probe-status 404\]/);
});

test('emulate --era 2025-11-25: the v2 client in auto mode falls back from server/discover to initialize', async (t) => {
  const emu = await emulator(t, { era: '2025-11-25' });
  const client = await within(connect('v2-auto', emu.url), 10_000, 'v2 auto');
  t.after(() => client.close());
  await echo(client as never, 'v2 auto 2025');
  const v = emu.verdict();
  assert.equal(v.transport, 'streamable-http');
  assert.equal(v.negotiated, '2025-11-25');
  assert.match(v.text, /fell back from the 2026-07-28 probe \(server\/discover → 400\) to initialize/);
  assert.equal(v.toolCalls, 1);
});

test('emulate --era 2026-07-28: the v2 client in auto mode speaks stateless 2026-07-28', async (t) => {
  const emu = await emulator(t, { era: '2026-07-28' });
  const client = await within(connect('v2-auto', emu.url), 10_000, 'v2 auto');
  t.after(() => client.close());
  await echo(client as never, 'v2 auto 2026');
  const v = emu.verdict();
  assert.equal(v.transport, 'stateless-2026');
  assert.equal(v.fellBack, false);
  assert.match(v.text, /^used 2026-07-28 stateless HTTP; called a tool/);
  assert.ok(emu.records.every((r) => r.rpc?.method !== 'initialize'));
});

test('emulate --era 2025-11-25 --probe-status 500: a 5xx to the v2 auto probe is fatal (no fallback)', async (t) => {
  const emu = await emulator(t, { era: '2025-11-25', probeStatus: 500 });
  await assert.rejects(within(connect('v2-auto', emu.url), 10_000, 'v2 auto'));
  assert.match(emu.verdict().text, /^did not fall back \(gave up after POST \/mcp → 500\)/);
});

test('emulate --era 2025-06-18: initialize is restricted to that revision (a 2025-11-25 offer gets 2025-06-18)', async (t) => {
  const emu = await emulator(t, { era: '2025-06-18' });
  const { client, transport } = await within(v1WithFallback(emu.url), 10_000, 'v1');
  t.after(() => client.close());
  assert.equal(transport, 'streamable');
  await echo(client, 'v1 on 06-18');
  assert.equal(emu.verdict().negotiated, '2025-06-18');
  assert.match(emu.verdict().text, /^used Streamable HTTP \(initialize\) \(negotiated 2025-06-18\); called a tool/);
  const res = await fetch(emu.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'x', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(res.status, 400);
});

test('knob --endpoint relative vs absolute: the v1 SSE client follows both', async (t) => {
  for (const endpoint of ['relative', 'absolute'] as const) {
    const emu = await emulator(t, { era: '2024-11-05', endpoint });
    const { client, transport } = await within(v1WithFallback(emu.url), 10_000, `v1 ${endpoint}`);
    assert.equal(transport, 'sse');
    await echo(client, endpoint);
    await client.close();
    const stream = emu.records.find((r) => r.endpoint !== undefined);
    const origin = new URL(emu.url).origin;
    assert.ok(
      endpoint === 'relative' ? stream?.endpoint?.startsWith('/messages?sessionId=') : stream?.endpoint?.startsWith(`${origin}/messages?sessionId=`),
      stream?.endpoint,
    );
    assert.match(emu.verdict().text, /^fell back to HTTP\+SSE/);
  }
});

test('knob --endpoint cross-origin: the v1 SSE client refuses the endpoint; the bench reports a failed fallback', async (t) => {
  const emu = await emulator(t, { era: '2024-11-05', endpoint: 'cross-origin' });
  await assert.rejects(within(v1WithFallback(emu.url), 10_000, 'v1 cross-origin'), /Endpoint origin does not match/);
  const v = await settled(emu, (x) => x.startsWith('tried'));
  assert.equal(emu.verdict().transport, null);
  assert.match(v, /^tried to fall back to HTTP\+SSE but failed: the client never POSTed to the endpoint \(http:\/\/127\.0\.0\.1:\d+\/messages/);
  assert.ok(emu.crossOriginUrl && !emu.url.startsWith(emu.crossOriginUrl));
});

test('knob --endpoint path-prefix: the v1 SSE client POSTs to the prefixed path it was given', async (t) => {
  const emu = await emulator(t, { era: '2024-11-05', endpoint: 'path-prefix' });
  const { client } = await within(v1WithFallback(emu.url), 10_000, 'v1 path-prefix');
  await echo(client, 'prefixed');
  await client.close();
  assert.ok(emu.records.some((r) => r.method === 'POST' && r.path === '/prefix/messages' && r.status === 202));
  assert.match(emu.verdict().text, /^fell back to HTTP\+SSE/);
});

test('knob --no-endpoint: the v1 SSE client waits in vain; the bench says no endpoint came', async (t) => {
  const emu = await emulator(t, { era: '2024-11-05', endpoint: false });
  const opened: Array<{ close(): Promise<void> }> = [];
  const attempt = v1WithFallback(emu.url, opened);
  attempt.catch(() => {});
  await assert.rejects(within(attempt, 1_500, 'v1 no-endpoint'), /no outcome/);
  assert.equal(emu.verdict().text, 'tried to fall back to HTTP+SSE but failed: the stream sent no endpoint event');
  // Stop the client's EventSource (it would reconnect forever).
  await Promise.all(opened.map((x) => x.close()));
});

test('knob --post-status 200 and --endpoint-delay: accepted POSTs get 200 and the v1 SSE client still works', async (t) => {
  const emu = await emulator(t, { era: '2024-11-05', postStatus: 200, endpointDelayMs: 200 });
  const { client, transport } = await within(v1WithFallback(emu.url), 10_000, 'v1 post-status');
  assert.equal(transport, 'sse');
  await echo(client, 'post 200');
  await client.close();
  const posts = emu.records.filter((r) => r.path === '/messages');
  assert.ok(posts.length >= 3);
  assert.ok(posts.every((r) => r.status === 200 && r.knob === 'post-status 200'));
  assert.match(emu.report(), /POST \/messages\?sessionId=… \(initialize\) → 200 \[post-status 200\]/);
});

test('knobs --session-expire-after and --drop-stream-after are applied and recorded', async (t) => {
  const emu = await emulator(t, { era: '2025-11-25', sessionExpireAfter: 3 });
  const { client } = await within(v1WithFallback(emu.url), 10_000, 'v1');
  t.after(() => client.close());
  await client.listTools(); // initialize, initialized, tools/list: 3 POSTs
  await assert.rejects(within(client.callTool({ name: 'echo', arguments: { message: 'late' } }), 10_000, 'expired call'));
  assert.ok(emu.records.some((r) => r.rpc?.method === 'tools/call' && r.status === 404 && r.knob === 'session-expired'));

  const emu2 = await emulator(t, { era: '2024-11-05', dropStreamAfter: 1 });
  // The stream is cut after the initialize result; whether connect survives is the client's business.
  const opened: Array<{ close(): Promise<void> }> = [];
  t.after(async () => void (await Promise.all(opened.map((x) => x.close().catch(() => {})))));
  const c2 = await within(v1WithFallback(emu2.url, opened), 10_000, 'v1 drop').catch(() => undefined);
  if (c2) t.after(() => c2.client.close());
  const stream = emu2.records.find((r) => r.endpoint !== undefined);
  assert.equal(stream?.dropped, true);
  assert.equal(stream?.events, 1);
});

// A --log file that cannot be created or opened is a failed start (exit 1, like a port in use),
// said on stderr before anything listens. Under /proc, Node's recursive mkdir never returned.
test('emulate --log naming a file that cannot be created exits 1 with the reason, without listening', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'emulate-badlog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'file'), '');
  const cases: Array<[string, string]> = [[path.join(dir, 'file', 'x.jsonl'), `ENOTDIR: not a directory, open '${path.join(dir, 'file', 'x.jsonl')}'`]];
  if (process.platform === 'linux') cases.push(['/proc/nope/x.jsonl', "ENOENT: no such file or directory, mkdir '/proc/nope'"]);
  for (const [file, cause] of cases) {
    const r = spawnSync(process.execPath, [CLI, 'emulate', '--era', '2026-07-28', '--port', '0', '--log', file], { encoding: 'utf8', timeout: 15_000 });
    assert.deepEqual(
      { status: r.status, stderr: r.stderr, stdout: r.stdout },
      { status: 1, stderr: `switchyard emulate: SWY_ERR_LOG_FILE_UNAVAILABLE: Cannot open the log file: ${file} (${cause})\n`, stdout: '' },
      file,
    );
  }
});

// The emulator authenticates no one: like the gateway, it binds beyond loopback only with
// --allow-unauthenticated (a trial bound it on 0.0.0.0 without a word). Refused before binding.
test('emulate --host naming a non-loopback address is a usage error (exit 2) without --allow-unauthenticated', () => {
  for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
    const r = spawnSync(process.execPath, [CLI, 'emulate', '--era', '2026-07-28', '--port', '0', '--host', host], { encoding: 'utf8', timeout: 15_000 });
    assert.deepEqual(
      { status: r.status, stderr: r.stderr, stdout: r.stdout },
      {
        status: 2,
        stderr: `switchyard emulate: Invalid command line: --host ${host} is not a loopback address and the emulator has no authentication; pass --allow-unauthenticated to bind it there anyway\n`,
        stdout: '',
      },
      host,
    );
  }
});

// RFC 9110 §15.5.6: a 405's Allow lists the methods the resource supports, so never the refused
// one. An HTTP+SSE-only server serves GET alone on its MCP path; a 2026-07-28 server, POST alone.
test('the 405s of the emulator list in Allow what the MCP path serves, never the refused method', async (t) => {
  const initializeBody = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  });
  const at = async (url: string, method: string) => {
    const res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: method === 'POST' ? initializeBody : undefined,
    });
    await res.arrayBuffer();
    return [res.status, res.headers.get('allow')];
  };
  const legacy = await emulator(t, { era: '2024-11-05' });
  assert.deepEqual(await at(legacy.url, 'POST'), [405, 'GET']);
  assert.deepEqual(await at(legacy.url, 'PUT'), [405, 'GET']);
  const modern = await emulator(t, { era: '2026-07-28' });
  assert.deepEqual(await at(modern.url, 'DELETE'), [405, 'POST']);
  // --probe-status 405 refuses the first POST: Allow is the era's methods but POST.
  const streamable = await emulator(t, { era: '2025-11-25', probeStatus: 405 });
  assert.deepEqual(await at(streamable.url, 'POST'), [405, 'GET, DELETE']);
  const modern405 = await emulator(t, { era: '2026-07-28', probeStatus: 405 });
  assert.deepEqual(await at(modern405.url, 'POST'), [405, '']);
});

// A later trial: `code` (an OAuth authorization code, RFC 6749 §4.1.2) and `sig` (a signed URL's
// signature, e.g. an Azure SAS) were recorded verbatim.
test('a credential in the query string is never recorded: access_token and other secret-named values, code and sig read [redacted], sessionId stays (found by a trial)', async (t) => {
  const emu = await emulator(t, { era: '2026-07-28' });
  const u = new URL(emu.url);
  u.search = '?access_token=QUERYSECRET&api_key=K3Y&x-api-key=XK3Y&code=AUTHCODE&sig=SASSIG&sessionId=s-1&page=2&unicode=1';
  const res = await fetch(u, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await res.arrayBuffer();
  const rec = emu.records.find((r) => r.query.includes('sessionId=s-1'));
  assert.ok(rec, JSON.stringify(emu.records.map((r) => r.query)));
  assert.equal(rec.query, 'access_token=[redacted]&api_key=[redacted]&x-api-key=[redacted]&code=[redacted]&sig=[redacted]&sessionId=s-1&page=2&unicode=1');
  assert.doesNotMatch(JSON.stringify(emu.records), /QUERYSECRET|K3Y|AUTHCODE|SASSIG/);
});
