// Test helper: the official MCP clients, built the way their documentation says.

import * as v2 from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Streamable } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport as V1SSE } from '@modelcontextprotocol/sdk/client/sse.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import path from 'node:path';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT } from './gateway.js';

/** The client kinds the tests drive. */
export type ClientKind = 'v2-2026' | 'v2-default' | 'v2-auto' | 'v1-streamable' | 'v1-sse-2024';

export const CLIENT_KINDS: readonly ClientKind[] = ['v2-2026', 'v2-default', 'v2-auto', 'v1-streamable', 'v1-sse-2024'];

/** A fetch that rewrites `initialize`'s protocolVersion to 2024-11-05 (a genuine 2024 client; PEERS.md). */
export const fetch2024: typeof fetch = async (input, init) => {
  if (init?.body && typeof init.body === 'string' && init.body.includes('"initialize"')) {
    const msg = JSON.parse(init.body) as { method?: string; params?: { protocolVersion?: string } };
    if (msg.method === 'initialize' && msg.params) {
      msg.params.protocolVersion = '2024-11-05';
      init = { ...init, body: JSON.stringify(msg) };
    }
  }
  return fetch(input, init);
};

/** A connected client with a uniform surface over v1 and v2. */
export interface PeerClient {
  kind: ClientKind;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    opts?: { onprogress?: (p: { progress: number; total?: number }) => void; signal?: AbortSignal; timeout?: number },
  ): Promise<{ content?: Array<{ type: string; text?: string }>; isError?: boolean }>;
  close(): Promise<void>;
  /** Elicitation requests the client answered. */
  elicitations: unknown[];
}

/**
 * Connects one client of `kind` to `url`, declaring elicitation and answering every
 * elicitation with `answer`.
 */
export async function connect(kind: ClientKind, url: string, answer: Record<string, unknown> = { name: 'Ada' }): Promise<PeerClient> {
  const elicitations: unknown[] = [];
  const capabilities = { elicitation: { form: {} } };
  const u = new URL(url);
  if (kind.startsWith('v2')) {
    const versionNegotiation = kind === 'v2-2026' ? { mode: { pin: '2026-07-28' as const } } : kind === 'v2-auto' ? { mode: 'auto' as const } : undefined;
    const client = new v2.Client({ name: `test-${kind}`, version: '1.0.0' }, { capabilities, ...(versionNegotiation ? { versionNegotiation } : {}) });
    client.setRequestHandler('elicitation/create', async (req) => {
      elicitations.push(req.params);
      return { action: 'accept' as const, content: answer as never };
    });
    const transport = new v2.StreamableHTTPClientTransport(u);
    await client.connect(transport);
    return {
      kind,
      elicitations,
      listTools: () => client.listTools(),
      callTool: (p, o) => client.callTool(p, o),
      close: () => client.close(),
    };
  }
  const client = new V1Client({ name: `test-${kind}`, version: '1.0.0' }, { capabilities });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push(req.params);
    return { action: 'accept', content: answer as Record<string, string> };
  });
  const transport = kind === 'v1-sse-2024' ? new V1SSE(u, { fetch: fetch2024 }) : new V1Streamable(u);
  await client.connect(transport);
  return {
    kind,
    elicitations,
    listTools: () => client.listTools(),
    callTool: (p, o) => client.callTool(p, undefined, o) as never,
    close: () => client.close(),
  };
}

/**
 * Asserts progress values are 1, 2, … in order. The v1 SDK dispatches notifications on a later
 * microtask than responses and forgets the progress token at the response, so it drops every
 * update it reads in the same chunk as the response: the last one, sent just before it, may go;
 * callers space the steps (100 ms) so that the others do not. v2 clients must see every one.
 */
export function progressOk(kind: ClientKind, seen: number[], total: number): boolean {
  const prefix = seen.every((v, i) => v === i + 1);
  if (kind.startsWith('v2')) return prefix && seen.length === total;
  return prefix && seen.length >= total - 1;
}

/**
 * An official v1 stdio transport to the stdio front door (`dist/test/fixtures/serve-stdio.js`)
 * in front of the HTTP upstream `upstreamUrl` pinned to `era`, logging at warn (stderr).
 */
export function serveStdioTransport(upstreamUrl: string, era: string): V1Stdio {
  return new V1Stdio({
    command: process.execPath,
    args: [path.join(REPO_ROOT, 'dist/test/fixtures/serve-stdio.js')],
    env: { ...(process.env as Record<string, string>), SWY_TEST_LOG_LEVEL: 'warn', SWY_TEST_UPSTREAM_URL: upstreamUrl, SWY_TEST_UPSTREAM_ERA: era },
  });
}

/**
 * The v1 SDK's documented fallback, as a 2024-11-05 client: Streamable HTTP first, and when its
 * connect fails (whatever the error), a new Client over `SSEClientTransport` to the same URL,
 * offering 2024-11-05 ({@link fetch2024}). Rejects when the SSE connect fails too; the SSE
 * transport is closed after the test.
 */
export async function v1FallbackClient(url: string, t: { after(fn: () => Promise<void>): void }): Promise<{ client: V1Client; streamable: boolean }> {
  const first = new V1Client({ name: 'v1-fallback', version: '1.0.0' });
  try {
    await first.connect(new V1Streamable(new URL(url)));
    t.after(() => first.close());
    return { client: first, streamable: true };
  } catch {
    const client = new V1Client({ name: 'v1-fallback', version: '1.0.0' });
    const sse = new V1SSE(new URL(url), { fetch: fetch2024 });
    t.after(() => sse.close().catch(() => {}));
    await client.connect(sse);
    return { client, streamable: false };
  }
}
