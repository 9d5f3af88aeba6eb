// Regressions from a new user's trial with third-party clients and servers,
// through the real CLI or the real HTTP front door, asserting statuses and whole bodies. Faults
// of that list tested elsewhere: the dual-era upstream's era choice (integration/era-choice),
// aggregate resources kept apart (integration/aggregate-resources), failure messages with their
// cause (integration/upstream-failures), streaming UTF-8 (integration/hardening-utf8).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, startCli } from '../helpers/cli.js';
import { NO_COVERAGE_ENV, REPO_ROOT, everythingStdioCommand, gateway } from '../helpers/gateway.js';
import { initSession, openSse, post, send, messagesUntilResponse, type SseReader } from '../helpers/http.js';

const err = (id: unknown, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
const initialize = (version: string, capabilities: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 'trial', version: '1.0.0' } },
});

/** An HTTP+SSE session on `origin`: its stream (endpoint read, initialize answered) and a POST function. */
async function legacySession(t: { after(fn: () => void): void }, origin: string, version: string, capabilities: Record<string, unknown> = {}) {
  const sse = await openSse(`${origin}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => sse.close());
  const endpoint = new URL((await sse.next()).data, `${origin}/sse`).href;
  const postIt = (m: unknown) => post(endpoint, m, { 'content-type': 'application/json' });
  assert.equal((await postIt(initialize(version, capabilities))).status, 202);
  assert.equal((JSON.parse((await sse.next()).data) as { id: number }).id, 0);
  assert.equal((await postIt({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  return { sse, post: postIt };
}

/** Reads until a message with `method` arrives (server-everything may send log messages first). */
async function untilMethod(sse: SseReader, method: string): Promise<void> {
  for (;;) {
    const ev = await sse.next(20_000);
    if (ev.data && (JSON.parse(ev.data) as { method?: string }).method === method) return;
  }
}

const ASK = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { question: 'Who?' } } };

test('elicitation/create is never sent to 2024-11-05 and 2025-03-26 sessions that declared elicitation, --strict=reject included', async (t) => {
  for (const strict of ['off', 'reject'] as const) {
    const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'], strict });
    const h = await initSession(gw.url, '2025-03-26', { elicitation: {} });
    // Nothing precedes the answer, so it is plain JSON: no elicitation/create went out.
    const r = await post(gw.url, ASK, h);
    assert.deepEqual(
      [r.status, r.headers['content-type'], r.json],
      [200, 'application/json', err(1, -32602, "Client cannot answer the server's input request: elicitation/create does not exist in 2025-03-26")],
      strict,
    );
    const legacy = await legacySession(t, gw.url.replace(/\/mcp$/, ''), '2024-11-05', { elicitation: {} });
    assert.equal((await legacy.post(ASK)).status, 202);
    assert.deepEqual(await messagesUntilResponse(legacy.sse, 1), [
      err(1, -32602, "Client cannot answer the server's input request: elicitation/create does not exist in 2024-11-05"),
    ]);
  }
});

test('2025-era results carry no 2026-only fields (ttlMs, cacheScope, resultType)', async (t) => {
  const gw = await gateway(t);
  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    const h = await initSession(gw.url, version);
    // The demo upstream answers resources/list with ttlMs and cacheScope (it is a 2026-07-28 server).
    const list = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'resources/list' }, h);
    assert.deepEqual(
      list.json,
      { jsonrpc: '2.0', id: 2, result: { resources: [{ uri: 'demo://readme', name: 'readme', title: 'Read me', mimeType: 'text/plain' }] } },
      version,
    );
    const echo = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'm' } } }, h);
    assert.deepEqual(echo.json, { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'Echo: m' }] } }, version);
  }
});

// A shared stdio child's server requests name no request, so it may have one call waiting for
// an answer at a time (docs/upstreams.md, the routing table): one client per run there.
for (const [upstream, fronts] of [
  ['demo', ['2025', 'HTTP+SSE']],
  ['server-everything', ['2025']],
  ['server-everything', ['HTTP+SSE']],
] as const) {
  test(`SIGTERM while a call waits for an elicitation answer answers that call (${upstream}; ${fronts.join(' and ')})`, async (t) => {
    const args = ['--legacy-sse', '--limit', 'shutdownGraceMs=300', ...(upstream === 'demo' ? [] : ['--stdio', everythingStdioCommand()])];
    const cli = await startCli(t, args);
    const call = { ...ASK, params: upstream === 'demo' ? ASK.params : { name: 'trigger-elicitation-request', arguments: {} } };
    const waiting: SseReader[] = [];
    for (const front of fronts) {
      if (front === '2025') {
        const h = await initSession(cli.url, '2025-06-18', { elicitation: {} });
        const s = await openSse(cli.url, 'POST', h, JSON.stringify(call));
        t.after(() => s.close());
        waiting.push(s);
      } else {
        const legacy = await legacySession(t, cli.origin, '2025-06-18', { elicitation: {} });
        assert.equal((await legacy.post(call)).status, 202);
        waiting.push(legacy.sse);
      }
      await untilMethod(waiting.at(-1)!, 'elicitation/create');
    }

    const code = cli.stop('SIGTERM');
    // The demo asks through an input_required round (no upstream call waits); server-everything
    // waits inside its call, which the grace period then aborts.
    const want = err(1, -32000, upstream === 'demo' ? 'Server is shutting down' : 'Server is shutting down: request aborted');
    for (const s of waiting) assert.deepEqual((await messagesUntilResponse(s, 1)).at(-1), want);
    assert.equal(await code, 0);
    assert.deepEqual(
      cli.records().filter((r) => r.msg === 'internal error'),
      [],
    );
  });
}

test('emulate --report reports each client of one run on its own', async (t) => {
  const child = spawn(process.execPath, [CLI, 'emulate', '--port', '0', '--era', '2024-11-05', '--report'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  t.after(() => void child.kill('SIGKILL'));
  let out = '';
  let errText = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve) =>
    child.stderr.on('data', (d: Buffer) => {
      errText += d.toString();
      const m = /emulating \S+ on (http:\/\/\S+)/.exec(errText);
      if (m) resolve(m[1]);
    }),
  );
  for (const name of ['first', 'second']) {
    // The v1 SDK's documented fallback: Streamable HTTP, then HTTP+SSE on the same URL.
    let client = new Client({ name, version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    } catch {
      client = new Client({ name, version: '1.0.0' });
      await client.connect(new SSEClientTransport(new URL(url)));
    }
    await client.callTool({ name: 'echo', arguments: { message: name } });
    await client.close();
  }
  child.kill('SIGINT');
  assert.equal(await exited, 0);
  const path1 =
    'POST /mcp (initialize) → 405; GET /mcp → endpoint; POST /messages?sessionId=… (initialize) → 202; POST /messages?sessionId=… (notifications/initialized) → 202; POST /messages?sessionId=… (tools/call) → 202';
  const verdict = 'fell back to HTTP+SSE (negotiated 2024-11-05); called a tool (tools/call answered ×1)';
  assert.equal(
    out,
    [
      `switchyard emulate --era 2024-11-05 (${url})`,
      `client 1 (node): ${path1}`,
      `client 1 verdict: ${verdict}`,
      `client 2 (node): ${path1}`,
      `client 2 verdict: ${verdict}`,
      '',
    ].join('\n'),
  );
});

test('--legacy-sse start-up lines name the HTTP+SSE URL old clients need', async (t) => {
  const cli = await startCli(t, ['--legacy-sse']);
  assert.equal(
    cli
      .stderr()
      .split('\n')
      .find((l) => l.startsWith('switchyard ')),
    `switchyard 0.1.0 listening on ${cli.url} (HTTP+SSE clients: ${cli.origin}/sse)`,
  );
  const plain = await startCli(t, []);
  assert.equal(
    plain
      .stderr()
      .split('\n')
      .find((l) => l.startsWith('switchyard ')),
    `switchyard 0.1.0 listening on ${plain.url}`,
  );
});

test('validate prints its report on stdout, as the README says; stderr stays empty', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'validate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'bad.yaml'), 'listn: {}\nupstreams:\n  a: {}\n');
  writeFileSync(path.join(dir, 'good.yaml'), 'upstreams:\n  a: { command: x }\n');
  const bad = spawnSync(process.execPath, [CLI, 'validate', path.join(dir, 'bad.yaml')], { encoding: 'utf8' });
  assert.deepEqual([bad.status, bad.stderr], [1, '']);
  assert.equal(
    bad.stdout,
    `${path.join(dir, 'bad.yaml')}: invalid config, 2 errors\n  /listn: is not a known key (did you mean \`listen\`?)\n  /upstreams/a: needs \`command\` (a stdio upstream), \`url\` (an HTTP upstream) or \`transport: embedded\` (the demo server)\n`,
  );
  const good = spawnSync(process.execPath, [CLI, 'validate', path.join(dir, 'good.yaml')], { encoding: 'utf8' });
  assert.deepEqual([good.status, good.stdout, good.stderr], [0, 'ok: 1 upstream\n', '']);
  assert.match(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'), /stdout carries nothing but `--help`\/`--version`\/`probe`\/`validate` output/);
});

test('npm start does not rebuild an up-to-date build; it rebuilds after a change, and never takes a failed build for a fresh one', (t) => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.prestart, '"$npm_node_execpath" .ci/build-if-stale.mjs');
  assert.equal(pkg.scripts.prepare, '"$npm_node_execpath" .ci/unshadow-node.mjs && "$npm_node_execpath" .ci/build-if-stale.mjs');
  // A checkout of its own, small enough for tsc to build in a moment (the smallest lib, not
  // checked: parsing and checking ES2022's declarations took tsc about 4 s a build).
  const root = mkdtempSync(path.join(tmpdir(), 'build-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'src'));
  writeFileSync(path.join(root, 'package.json'), '{"type":"module"}\n');
  writeFileSync(
    path.join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', lib: ['ES5'], skipLibCheck: true, module: 'NodeNext', strict: true, outDir: 'dist', rootDir: '.', types: [] },
      include: ['src/**/*.ts'],
    }),
  );
  writeFileSync(path.join(root, 'src/a.ts'), 'export const a: number = 1;\n');
  const build = () =>
    spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci/build-if-stale.mjs'), '--root', root], {
      encoding: 'utf8',
      env: { ...process.env, ...NO_COVERAGE_ENV },
    });
  const out = path.join(root, 'dist/src/a.js');
  const stamp = path.join(root, 'dist/.build-stamp');

  assert.equal(build().status, 0);
  assert.equal(readFileSync(out, 'utf8'), 'export const a = 1;\n');
  // Up to date: nothing is written (tsc would rewrite a.js and the stamp).
  const before = [statSync(out).mtimeMs, statSync(stamp).mtimeMs];
  utimesSync(out, new Date(0), new Date(0));
  assert.deepEqual([build().status, statSync(out).mtimeMs, statSync(stamp).mtimeMs], [0, 0, before[1]]);
  // A newer source is built.
  writeFileSync(path.join(root, 'src/a.ts'), 'export const a: number = 2;\n');
  utimesSync(path.join(root, 'src/a.ts'), new Date(), new Date(Date.now() + 60_000));
  assert.equal(build().status, 0);
  assert.equal(readFileSync(out, 'utf8'), 'export const a = 2;\n');
  // A failed build leaves no stamp, so the next start builds again (and fails again).
  writeFileSync(path.join(root, 'src/a.ts'), 'export const a: number = "two";\n');
  utimesSync(path.join(root, 'src/a.ts'), new Date(), new Date(Date.now() + 120_000));
  const failed = build();
  assert.notEqual(failed.status, 0);
  assert.match(failed.stdout, /error TS2322/);
  assert.throws(() => statSync(stamp), { code: 'ENOENT' });
  assert.notEqual(build().status, 0);
});

test("a build makes the package's bin executable, so that `npx switchyard` runs in a clone (tsc writes it 0644)", (t) => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
  assert.equal(pkg.scripts.build, '"$npm_node_execpath" .ci/build-if-stale.mjs --force');
  assert.deepEqual(pkg.bin, { switchyard: 'dist/src/cli/main.js' });
  const root = mkdtempSync(path.join(tmpdir(), 'build-bin-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'src'));
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ type: 'module', bin: { tool: 'dist/src/tool.js' } }));
  writeFileSync(
    path.join(root, 'tsconfig.json'),
    // The smallest lib, not checked, as in the test above.
    JSON.stringify({
      compilerOptions: { target: 'ES2022', lib: ['ES5'], skipLibCheck: true, module: 'NodeNext', outDir: 'dist', rootDir: '.', types: [] },
      include: ['src/**/*.ts'],
    }),
  );
  writeFileSync(
    path.join(root, 'src/tool.ts'),
    '#!/usr/bin/env node\ndeclare const process: { stdout: { write(s: string): void } };\nprocess.stdout.write("ran\\n");\n',
  );
  const build = (...extra: string[]) =>
    spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci/build-if-stale.mjs'), '--root', root, ...extra], {
      encoding: 'utf8',
      env: { ...process.env, ...NO_COVERAGE_ENV },
    });
  const bin = path.join(root, 'dist/src/tool.js');
  assert.equal(build().status, 0);
  assert.equal(statSync(bin).mode & 0o111, 0o111);
  assert.equal(spawnSync(bin, [], { encoding: 'utf8' }).stdout, 'ran\n');
  // A build that was current before this step existed (bin 0644) is fixed without a rebuild.
  chmodSync(bin, 0o644);
  assert.equal(build().status, 0);
  assert.equal(statSync(bin).mode & 0o111, 0o111);
});

test('engines, the README and a clean install agree: every locked package accepts the stated minimum Node and this one', () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
  };
  const minimum = semver.minVersion(pkg.engines.node)!.version;
  const refuse = (node: string) =>
    Object.entries(lock.packages)
      .filter(([k, v]) => k !== '' && !Array.isArray(v.engines) && v.engines?.node !== undefined && !semver.satisfies(node, v.engines.node))
      .map(([k, v]) => `${k}@${v.version}: ${(v.engines as { node: string }).node}`);
  // npm ci warns EBADENGINE for each of these.
  assert.deepEqual(refuse(minimum), []);
  assert.deepEqual(refuse(process.versions.node), []);
  assert.equal(lock.packages[''].engines && !Array.isArray(lock.packages[''].engines) ? lock.packages[''].engines.node : undefined, pkg.engines.node);
  const m = /^On a fresh machine with Node\.js (\d+\.\d+) or later/m.exec(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
  assert.equal(m && `${m[1]}.0`, minimum);
});

test('GET on the MCP path opens a stream only when Accept lists text/event-stream; a browser navigation (*/*) gets 406', async (t) => {
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] });
  const notAcceptable = err(null, -32000, 'Not Acceptable: client must accept application/json and text/event-stream');
  for (const accept of ['*/*', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/*', 'text/event-stream;q=0, */*', undefined]) {
    const r = await send(gw.url, 'GET', undefined, accept === undefined ? {} : { accept });
    assert.deepEqual([r.status, r.json], [406, notAcceptable], String(accept));
  }
  for (const accept of ['text/event-stream', 'application/json, text/event-stream;q=0.5']) {
    const s = await openSse(gw.url, 'GET', { accept });
    t.after(() => s.close());
    assert.deepEqual([s.status, (await s.next()).event], [200, 'endpoint'], accept);
    s.close();
  }
});

test('--serve-stdio fronts an HTTP upstream (docs/stdio.md no longer says "later")', async (t) => {
  const up = await gateway(t);
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, '--serve-stdio', '--upstream', up.url], stderr: 'pipe' });
  const client = new Client({ name: 'stdio-over-http', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(transport);
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((x) => x.name),
    ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'],
  );
  assert.deepEqual((await client.callTool({ name: 'echo', arguments: { message: 'over stdio' } })).content, [{ type: 'text', text: 'Echo: over stdio' }]);
  assert.doesNotMatch(readFileSync(path.join(REPO_ROOT, 'docs/stdio.md'), 'utf8'), /later an HTTP upstream/);
});
