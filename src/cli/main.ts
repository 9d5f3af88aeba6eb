#!/usr/bin/env node
// The `switchyard` command line: parses flags, starts the gateway, stops it on SIGINT/SIGTERM.

import { Command, InvalidArgumentError, Option } from 'commander';
import type { DialectId } from '../../dialects/index.js';
import { SwitchyardError } from '../core/errors.js';
import { DEFAULT_LIMITS, type Limits } from '../core/limits.js';
import { DEFAULT_OPTIONS, startGateway, type GatewayOptions } from '../gateway.js';
import { createLogger, LOG_LEVEL_NAMES } from '../log/logger.js';
import { VERSION } from '../version.js';

function int(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return Number(v);
  };
}

function collect(v: string, prev: string[] | undefined): string[] {
  return [...(prev ?? []), v];
}

function limitPair(v: string, prev: Partial<Limits> | undefined): Partial<Limits> {
  const m = /^([A-Za-z]+)=(\d+)$/.exec(v);
  if (!m || !(m[1] in DEFAULT_LIMITS)) throw new InvalidArgumentError(`expected NAME=INTEGER with NAME one of: ${Object.keys(DEFAULT_LIMITS).join(', ')}`);
  return { ...prev, [m[1]]: Number(m[2]) };
}

/**
 * Builds the command-line parser.
 * @returns a commander Command whose action starts the gateway.
 */
export function buildCli(): Command {
  const program = new Command();
  program
    .name('switchyard')
    .description(
      'A gateway for the Model Context Protocol: serves MCP clients of every wire era (2024-11-05 HTTP+SSE, 2025 Streamable HTTP, 2026-07-28 stateless) in front of one upstream.',
    )
    .version(VERSION, '-V, --version')
    .option('--host <host>', 'interface to bind', DEFAULT_OPTIONS.host)
    .option('--port <port>', 'TCP port (0 picks a free one)', int('--port'), DEFAULT_OPTIONS.port)
    .option('--path <path>', 'MCP endpoint path', DEFAULT_OPTIONS.path)
    .option('--stdio <command>', 'run this MCP server as a stdio child and front it (default: the embedded demo server)')
    .option('--legacy-sse', 'also serve 2024-11-05 HTTP+SSE clients (GET /sse, POST /messages, and GET on the MCP path)', false)
    .option('--no-modern', 'do not serve 2026-07-28 stateless requests')
    .option('--no-streamable', 'do not serve 2025-era (initialize + Mcp-Session-Id) requests')
    .option('--allowed-origin <host>', 'host an Origin header may name, optionally with :port (repeatable; default localhost, 127.0.0.1, [::1])', collect)
    .option('--allowed-host <host>', 'require the Host header to be one of these (repeatable; off by default)', collect)
    .option('--max-body-bytes <n>', `largest request body, bytes (default ${DEFAULT_LIMITS.maxBodyBytes})`, int('--max-body-bytes'))
    .option('--max-connections <n>', `open TCP connections (default ${DEFAULT_LIMITS.maxConnections})`, int('--max-connections'))
    .option('--head-timeout-ms <n>', `time to receive request headers, ms (default ${DEFAULT_LIMITS.headTimeoutMs})`, int('--head-timeout-ms'))
    .option('--body-timeout-ms <n>', `time to receive a body, ms (default ${DEFAULT_LIMITS.bodyTimeoutMs})`, int('--body-timeout-ms'))
    .option('--max-subscriptions <n>', `open subscriptions/listen streams (default ${DEFAULT_LIMITS.maxSubscriptions})`, int('--max-subscriptions'))
    .option('--max-sessions <n>', `live sessions per dialect (default ${DEFAULT_LIMITS.maxSessions})`, int('--max-sessions'))
    .option('--request-timeout-ms <n>', `deadline per request, ms (default ${DEFAULT_LIMITS.requestTimeoutMs})`, int('--request-timeout-ms'))
    .option('--limit <name=value>', 'set any bound from docs/config.md (repeatable), e.g. --limit sessionIdleMs=60000', limitPair)
    .addOption(new Option('--log-level <level>', 'log level (logs go to stderr)').choices([...LOG_LEVEL_NAMES]).default('info'))
    .showHelpAfterError()
    .addHelpText(
      'after',
      `
Examples:
  switchyard                                   embedded demo on http://127.0.0.1:7600/mcp
  switchyard --stdio "npx -y @modelcontextprotocol/server-everything" --legacy-sse
  switchyard --port 0 --allowed-origin app.example.com:443

Signals: SIGINT/SIGTERM stop accepting, let in-flight work finish (shutdownGraceMs), close streams, stop the child, exit 0.
Errors: docs/errors.md. Dialect selection: docs/dialects.md.`,
    );
  return program;
}

interface CliFlags {
  host: string;
  port: number;
  path: string;
  stdio?: string;
  legacySse: boolean;
  modern: boolean;
  streamable: boolean;
  allowedOrigin?: string[];
  allowedHost?: string[];
  maxBodyBytes?: number;
  maxConnections?: number;
  headTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxSubscriptions?: number;
  maxSessions?: number;
  requestTimeoutMs?: number;
  limit?: Partial<Limits>;
  logLevel: string;
}

/** Turns parsed flags into gateway options. */
export function optionsFromFlags(f: CliFlags): Partial<GatewayOptions> {
  const dialects: DialectId[] = [];
  if (f.modern) dialects.push('2026-07-28');
  if (f.streamable) dialects.push('2025-03-26');
  if (f.legacySse) dialects.push('2024-11-05');
  const limits: Limits = { ...DEFAULT_LIMITS, ...f.limit };
  for (const k of ['maxBodyBytes', 'maxConnections', 'headTimeoutMs', 'bodyTimeoutMs', 'maxSubscriptions', 'maxSessions', 'requestTimeoutMs'] as const) {
    if (f[k] !== undefined) limits[k] = f[k];
  }
  if (!f.path.startsWith('/')) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--path must start with /' });
  return {
    host: f.host,
    port: f.port,
    path: f.path,
    stdio: f.stdio,
    dialects,
    allowedOrigins: f.allowedOrigin ?? DEFAULT_OPTIONS.allowedOrigins,
    allowedHosts: f.allowedHost ?? [],
    logLevel: f.logLevel,
    limits,
  };
}

async function main(argv: string[]): Promise<void> {
  const program = buildCli();
  program.action(async (flags: CliFlags) => {
    const log = createLogger(flags.logLevel);
    let opts: Partial<GatewayOptions>;
    try {
      opts = optionsFromFlags(flags);
    } catch (err) {
      process.stderr.write(`switchyard: ${(err as Error).message}\n`);
      process.exit(2);
    }
    try {
      const gw = await startGateway(opts, log);
      process.stderr.write(`switchyard ${VERSION} listening on ${gw.url}\n`);
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        gw.close().then(
          () => log.flush(() => process.exit(0)),
          (err: unknown) => {
            log.error({ err }, 'internal error');
            log.flush(() => process.exit(1));
          },
        );
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    } catch (err) {
      const msg = err instanceof SwitchyardError ? `${err.code}: ${err.message}${err.cause ? ` (${(err.cause as Error).message})` : ''}` : String(err);
      process.stderr.write(`switchyard: ${msg}\n`);
      log.flush(() => process.exit(1));
    }
  });
  await program.parseAsync(argv);
}

void main(process.argv);
