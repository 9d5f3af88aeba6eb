// Regression (found by h-client19, a client author following docs/testing-clients.md as written):
// the GitHub Actions matrix there expected `Streamable HTTP` for `--era 2025-11-25` and checked it
// with `grep -q "verdict: <expect>"`. No verdict reads `verdict: Streamable HTTP`: a client that
// initializes gets `verdict: used Streamable HTTP (initialize)`, one that probes first gets
// `verdict: fell back from the 2026-07-28 probe …`, so that job failed whatever the client did.
// Each case of the matrix is now run as the doc runs it (the CLI with `--report`, stopped by
// SIGINT) against the official clients (the v1 SDK's documented fallback and the v2 client in
// `auto` mode); the case's grep must match the report of at least one of them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import * as v2 from '@modelcontextprotocol/client';
import { REPO_ROOT } from '../helpers/gateway.js';
import { emulateProcess, within } from '../helpers/emulate.js';

/** The matrix cases of the doc's GitHub Actions job: `- { era: …, args: '…', expect: '…' }`. */
function matrixCases(): Array<{ era: string; args: string[]; expect: string }> {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/testing-clients.md'), 'utf8');
  const cases = [...doc.matchAll(/^\s*- \{ era: (\S+), args: '([^']*)',\s*expect: '([^']*)' \}$/gm)].map((m) => ({
    era: m[1],
    args: m[2].split(' ').filter((a) => a !== ''),
    expect: m[3],
  }));
  assert.ok(cases.length >= 5, `the matrix in docs/testing-clients.md (found ${cases.length} cases)`);
  return cases;
}

/** Connects with `kind` to `url` and calls `echo`; a client that fails is left failed (the report says so). */
async function runClient(kind: 'v1-fallback' | 'v2-auto', url: string): Promise<void> {
  const u = new URL(url);
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    if (kind === 'v1-fallback') {
      let client = new Client({ name: 'v1-fallback', version: '1.0.0' });
      try {
        await within(client.connect(new StreamableHTTPClientTransport(u)), 5_000, 'v1 streamable');
      } catch {
        client = new Client({ name: 'v1-fallback', version: '1.0.0' });
        const sse = new SSEClientTransport(u);
        opened.push(sse);
        await within(client.connect(sse), 5_000, 'v1 sse');
      }
      opened.push(client);
      await within(client.callTool({ name: 'echo', arguments: { message: 'hi' } }), 5_000, 'v1 echo');
    } else {
      const client = new v2.Client({ name: 'v2-auto', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      opened.push(client);
      await within(client.connect(new v2.StreamableHTTPClientTransport(u)), 5_000, 'v2 connect');
      await within(client.callTool({ name: 'echo', arguments: { message: 'hi' } }), 5_000, 'v2 echo');
    }
  } catch {
    // The verdict records the failure.
  } finally {
    for (const o of opened) await o.close().catch(() => undefined);
  }
}

/** `switchyard emulate --era E ARGS --port 0 --report`, one client run, SIGINT: the report (stdout). */
async function reportFor(t: { after(fn: () => Promise<void>): void }, era: string, args: string[], kind: 'v1-fallback' | 'v2-auto'): Promise<string> {
  const emu = await emulateProcess(t, ['--era', era, ...args, '--report']);
  await runClient(kind, emu.url);
  const { stdout, code } = await emu.stop();
  assert.equal(code, 0);
  return stdout;
}

for (const c of matrixCases()) {
  test(`docs/testing-clients.md matrix: --era ${c.era} ${c.args.join(' ')} → grep "verdict: ${c.expect}" matches an official client's report`, async (t) => {
    const reports: string[] = [];
    for (const kind of ['v1-fallback', 'v2-auto'] as const) {
      const report = await reportFor(t, c.era, c.args, kind);
      if (report.includes(`verdict: ${c.expect}`)) return;
      reports.push(`${kind}:\n${report}`);
    }
    assert.fail(`no official client's report has "verdict: ${c.expect}":\n${reports.join('\n')}`);
  });
}
