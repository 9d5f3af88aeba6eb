// Test helper for identity and policy: a gateway from a raw config with its log records, the official clients with a bearer token, and raw era requests.

import { Writable } from 'node:stream';
import { createRequire } from 'node:module';
import pino from 'pino';
import * as v2 from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Streamable } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport as V1SSE } from '@modelcontextprotocol/sdk/client/sse.js';
import { validateConfig } from '../../src/config/load.js';
import { startGatewayFromConfig, type AssembleOptions, type Gateway } from '../../src/gateway.js';
import { fetch2024, type ClientKind } from './clients.js';
import { NO_COVERAGE_ENV } from './gateway.js';
import { modernBody, modernHeaders, post, type RawResponse } from './http.js';

const require = createRequire(import.meta.url);

/** server-everything over stdio as an upstream config entry (this Node binary, no npx). */
export function everythingUpstream(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const env = { ...NO_COVERAGE_ENV, ...((extra.env as Record<string, string> | undefined) ?? {}) };
  return { command: process.execPath, args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'], ...extra, env };
}

/** A started gateway with the log records it wrote (parsed JSON lines, without time, pid, hostname). */
export interface ConfigGateway extends Gateway {
  records: Array<Record<string, unknown>>;
}

/** A pino logger at `debug` whose records are kept, parsed, without time, pid and hostname. */
export function recordingLog(): { log: pino.Logger; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        const { time: _t, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
        records.push(rest);
      }
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, sink), records };
}

/** Validates `raw` (listen forced to 127.0.0.1 port 0), starts the gateway, registers teardown. */
export async function gatewayFromConfig(
  t: { after(fn: () => Promise<void>): void },
  raw: Record<string, unknown>,
  opts: AssembleOptions = {},
): Promise<ConfigGateway> {
  const { log, records } = recordingLog();
  const config = validateConfig({ ...raw, listen: { host: '127.0.0.1', port: 0, ...(raw.listen as object | undefined) } }, 'test', { env: {} });
  const gw = await startGatewayFromConfig(config, log, opts);
  t.after(() => gw.close());
  return Object.assign(gw, { records });
}

/** Reloads `gw` with `raw`, validated as {@link gatewayFromConfig} validates it (listen forced to 127.0.0.1 port 0). */
export function reloadFromConfig(gw: Gateway, raw: Record<string, unknown>): ReturnType<Gateway['reload']> {
  return gw.reload(validateConfig({ ...raw, listen: { host: '127.0.0.1', port: 0, ...(raw.listen as object | undefined) } }, 'test', { env: {} }));
}

/**
 * A raw config whose one mount (`demo`, embedded) takes opaque bearer tokens, checked at the
 * introspection endpoint `endpoint` as client `rs` (secret `s`), `introspection` adding to that
 * (`cacheMaxMs`, `maxConcurrent`), with an issuer nothing listens at and a 3 s timeout. A reload
 * to another `clockToleranceSec` (seconds) changes the mount's `auth`, so it checks every open
 * stream's credential again.
 */
export function introspectionConfig(endpoint: string, clockToleranceSec: number, introspection: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    auth: {
      bearer: {
        issuer: 'http://127.0.0.1:1',
        timeoutMs: 3000,
        clockToleranceSec,
        introspection: { clientId: 'rs', clientSecret: 's', endpoint, ...introspection },
      },
    },
    upstreams: { demo: { transport: 'embedded' } },
  };
}

/** The four client kinds of the acceptance line: v2 pinned to 2026-07-28, v2 default, v1 Streamable HTTP, v1 HTTP+SSE offering 2024-11-05. */
export const AUTH_CLIENT_KINDS: readonly ClientKind[] = ['v2-2026', 'v2-default', 'v1-streamable', 'v1-sse-2024'];

/** A connected official client that sends `Authorization: Bearer <token>` on every request. */
export interface BearerClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(name: string, args: Record<string, unknown>): Promise<{ content?: Array<{ type: string; text?: string }>; isError?: boolean }>;
  close(): Promise<void>;
}

/** Connects one client of `kind` to `url` with a bearer token, built as each SDK documents (`requestInit` headers). */
export async function connectWithToken(kind: ClientKind, url: string, token: string): Promise<BearerClient> {
  const headers = { authorization: `Bearer ${token}` };
  const u = new URL(url);
  if (kind.startsWith('v2')) {
    const versionNegotiation = kind === 'v2-2026' ? { mode: { pin: '2026-07-28' as const } } : undefined;
    const client = new v2.Client({ name: `auth-${kind}`, version: '1.0.0' }, { ...(versionNegotiation ? { versionNegotiation } : {}) });
    await client.connect(new v2.StreamableHTTPClientTransport(u, { requestInit: { headers } }));
    return {
      listTools: () => client.listTools(),
      callTool: (name, args) => client.callTool({ name, arguments: args }),
      close: () => client.close(),
    };
  }
  const client = new V1Client({ name: `auth-${kind}`, version: '1.0.0' }, { capabilities: {} });
  const transport = kind === 'v1-sse-2024' ? new V1SSE(u, { fetch: fetch2024, requestInit: { headers } }) : new V1Streamable(u, { requestInit: { headers } });
  await client.connect(transport);
  return {
    listTools: () => client.listTools(),
    callTool: (name, args) => client.callTool({ name, arguments: args }) as never,
    close: () => client.close(),
  };
}

/** A 2026-07-28 request with an optional Authorization header. */
export function modernCall(url: string, id: number, method: string, params: Record<string, unknown>, authorization?: string): Promise<RawResponse> {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  return post(url, modernBody(id, method, params), { ...modernHeaders(method, name), ...(authorization ? { authorization } : {}) });
}

/** The headers of a 2025-era POST (Accept both, JSON), with a session and a token when given. */
export function sessionHeaders(session?: string, authorization?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' } : {}),
    ...(authorization ? { authorization } : {}),
  };
}

/** Opens a 2025-03-26 session with `initialize` (+ `notifications/initialized`); resolves with its id. */
export async function openSession(url: string, authorization?: string): Promise<string> {
  const init = await post(
    url,
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } } },
    sessionHeaders(undefined, authorization),
  );
  const sid = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sid !== 'string') throw new Error(`initialize answered ${init.status}: ${init.text}`);
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders(sid, authorization));
  return sid;
}

/** The JSON-RPC error body every refusal before MCP carries: id null, code -32000. */
export function refusalBody(message: string): unknown {
  return { jsonrpc: '2.0', id: null, error: { code: -32000, message } };
}
