// Test helper: runs a program of examples/ as a real process on port 0, and drives it with the
// official v2 client.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import * as v2 from '@modelcontextprotocol/client';
import { request } from 'undici';
import { REPO_ROOT } from './gateway.js';

/** A running example. */
export interface ExampleProcess {
  /** Its MCP endpoint, from the line it prints once listening. */
  url: string;
  /** Every stdout line so far. */
  lines: string[];
  /** Sends SIGTERM and resolves with how it exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const LISTENING = 'switchyard example listening on ';

/** Starts `examples/<file>` with `PORT=0` (plus `env`); teardown goes to `t.after`. */
export async function startExample(t: { after(fn: () => Promise<unknown>): void }, file: string, env: Record<string, string> = {}): Promise<ExampleProcess> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'examples', file)], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith(LISTENING)) resolve(line.slice(LISTENING.length));
    });
    void exited.then(({ code }) => reject(new Error(`examples/${file} exited with ${code} before listening:\n${stderr}`)));
  });
  let stopping: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  const stop = () => {
    if (!stopping) {
      child.kill('SIGTERM');
      stopping = exited;
    }
    return stopping;
  };
  t.after(() => stop());
  return { url, lines, stop };
}

/** The v2 client versions the examples are driven with: pinned to 2026-07-28, and the default (initialize). */
export const V2_MODES = ['2026-07-28', 'default'] as const;

/**
 * Connects the official v2 client to `url` (pinned to 2026-07-28, or its default negotiation),
 * lists the tools and calls `echo`; asserts both answers exactly.
 */
export async function listAndEcho(url: string, mode: (typeof V2_MODES)[number], headers: Record<string, string> = {}): Promise<void> {
  const client = new v2.Client(
    { name: `example-${mode}`, version: '1.0.0' },
    mode === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new v2.StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((x) => x.name),
      ['echo', 'add', 'slow', 'ask', 'lookup', 'touch'],
    );
    const r = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: hello' }]);
    assert.equal(r.isError, undefined);
  } finally {
    await client.close();
  }
}

/**
 * Asserts that the example at `url` refuses a `Host` that is not a loopback name (403,
 * SWY_ERR_HTTP_HOST_FORBIDDEN): a page that rebinds its own name to 127.0.0.1 sends that name.
 */
export async function assertForeignHostRefused(url: string): Promise<void> {
  const rebound = await request(url, {
    method: 'POST',
    headers: { host: 'evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  assert.equal(rebound.statusCode, 403);
  assert.equal(((await rebound.body.json()) as { error: { message: string } }).error.message, 'Forbidden: Host not allowed');
}
