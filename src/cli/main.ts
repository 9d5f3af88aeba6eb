#!/usr/bin/env node
// The `switchyard` command line: parses flags, starts the gateway, stops it on SIGINT/SIGTERM.

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { statSync } from 'node:fs';
import { SwitchyardError } from '../core/errors.js';
import { argForDisplay, serializedOrigin } from '../core/url-text.js';
import { DEFAULT_LIMITS, MAX_TIMER_MS, type Limits } from '../core/limits.js';
import type { FrozenConfig } from '../config/load.js';
import type { Gateway } from '../gateway.js';
import type { DialectFlag, GatewayOptions } from '../config/options.js';
import { HOST_PORT_PATTERN } from '../config/patterns.js';
import { createLogger, endLog, LOG_LEVEL_NAMES } from '../log/logger.js';
import { VERSION } from '../version.js';
import { registerEmulateCommand } from './emulate.js';
import { parseHeaderArgs } from './headers.js';
import { LISTENER_TODO, startFailureText } from './start-failure.js';
import type { Reloader } from '../reload.js';

function int(name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return Number(v);
  };
}

/**
 * An allowlist entry of `--allowed-origin` or `--allowed-host` (`key` is the config key it sets):
 * a host, optionally with `:port`, by the schema's own pattern, so that a flag and the file take
 * the same values (docs/config.md, "Hosts and URLs"). A URL is refused like any other value the
 * file refuses: reduced to its host it would allow every scheme and port of that host, wider than
 * the origin it names, so the message says which entry pins it.
 * @throws InvalidArgumentError (a usage error, exit 2) naming what is expected
 */
function hostEntry(key: 'allowedOrigins' | 'allowedHosts') {
  return (v: string, prev: string[] | undefined): string[] => {
    const host = v.trim();
    if (new RegExp(HOST_PORT_PATTERN, 'u').test(host)) return [...(prev ?? []), host];
    let hint = '';
    if (host.includes('://')) {
      const u = URL.parse(host);
      const port = u?.port || (u?.protocol === 'https:' ? '443' : u?.protocol === 'http:' ? '80' : '');
      hint = u?.hostname && port ? `, not a URL: for ${u.origin} give ${u.hostname}:${port} (or ${u.hostname} for every port)` : ', not a URL';
    }
    throw new InvalidArgumentError(`expected a host, optionally with :port (e.g. app.example.com:443 or [::1]), as ${key} in a config file${hint}`);
  };
}

/**
 * A `--cors-origin` entry: a serialized origin as browsers send it (`https://app.example`), as in
 * `cors.origins`; another spelling of one is refused naming the form to give. Whether
 * `allowedOrigins` lets it through is checked with the rest of the config.
 * @throws InvalidArgumentError (a usage error, exit 2) naming what is expected
 */
function corsOrigin(v: string, prev: string[] | undefined): string[] {
  const form = serializedOrigin(v.trim());
  if (form === true) return [...(prev ?? []), v.trim()];
  throw new InvalidArgumentError(
    `expected an origin as browsers send it (e.g. https://app.example or http://localhost:5173)${typeof form === 'string' ? `: give ${form}` : ''}`,
  );
}

/** `--trust-proxy`: `false`, a hop count, or addresses/CIDRs (comma-separated, repeatable). */
function trustProxyArg(v: string, prev: false | number | string[] | undefined): false | number | string[] {
  const t = v.trim();
  if (t === 'false' || t === 'off') return false;
  if (/^\d+$/.test(t)) return Number(t);
  const list = t.split(',').map((x) => x.trim());
  if (list.some((x) => x === '')) throw new InvalidArgumentError(`expected false, a hop count, or addresses/CIDRs separated by commas, got ${v}`);
  return [...(Array.isArray(prev) ? prev : []), ...list];
}

function limitPair(v: string, prev: Partial<Limits> | undefined): Partial<Limits> {
  const m = /^([A-Za-z]+)=(\d+)$/.exec(v);
  const named = /^([A-Za-z]+)=(.*)$/.exec(v);
  if (!m && named && named[1] in DEFAULT_LIMITS) throw new InvalidArgumentError(`${named[1]} must be an integer of at least 1, got ${named[2]}`);
  if (!m || !(m[1] in DEFAULT_LIMITS)) throw new InvalidArgumentError(`expected NAME=INTEGER with NAME one of: ${Object.keys(DEFAULT_LIMITS).join(', ')}`);
  if (Number(m[2]) < 1) throw new InvalidArgumentError(`${m[1]} must be at least 1`);
  return { ...prev, [m[1]]: Number(m[2]) };
}

/**
 * Builds the command-line parser. Options have no commander defaults: a flag that was not given
 * leaves its config key to the environment, the file or the schema's default (docs/config.md,
 * "Precedence").
 * @returns a commander Command whose action starts the gateway.
 */
export function buildCli(): Command {
  const program = new Command();
  // Usage errors throw a CommanderError instead of exiting 1; `main` exits 2 for them. Set before
  // any subcommand is added: commander copies it to each subcommand when `command()` creates it.
  program.exitOverride();
  program
    .name('switchyard')
    .description(
      'A gateway for the Model Context Protocol: serves MCP clients of every wire era (2024-11-05 HTTP+SSE, 2025 Streamable HTTP, 2026-07-28 stateless) in front of one upstream, or of every upstream of a config file.',
    )
    .version(VERSION, '-V, --version')
    .option('--host <host>', 'interface to bind (default 127.0.0.1)')
    .option('--port <port>', 'TCP port, 0 picks a free one (default 7600)', int('--port', 0, 65535))
    .option('--path <path>', "MCP endpoint path of the single upstream (default /mcp; with --config, set each upstream's path in the file)")
    .option('--stdio <command>', 'run this MCP server as a stdio child and front it (default: the embedded demo server)')
    .addOption(
      new Option(
        '--strict [mode]',
        "validate every client message both ways against its era's JSON schema: log violations, or also reject invalid client messages",
      )
        .choices(['off', 'log', 'reject'])
        .preset('log'),
    )
    .option('--serve-stdio', 'serve one local client over stdin/stdout instead of HTTP (any era; see docs/stdio.md)')
    .option(
      '--config <file>',
      'serve every upstream of a config file (YAML or JSON, or an mcpServers file); flags given with it override its values; see docs/config.md',
    )
    .option('--upstream <url>', 'front an HTTP MCP server of any era (probed: server/discover, then initialize, then GET for HTTP+SSE)')
    .addOption(
      new Option(
        '--upstream-era <era>',
        "the era to speak to --upstream or --stdio: auto probes (default), match-client speaks each client's own era (HTTP only), or a revision",
      ).choices(['auto', 'match-client', '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']),
    )
    .addOption(
      new Option('--isolation <mode>', 'stateful upstreams: one upstream session per client session, or one shared (default per-session)').choices([
        'per-session',
        'shared',
      ]),
    )
    .option('--upstream-header <k:v>', 'header sent to the HTTP upstream (repeatable)', (v: string, p: string[] | undefined) => [...(p ?? []), v])
    .option('--legacy-sse', 'also serve 2024-11-05 HTTP+SSE clients (GET /sse, POST /messages, and GET on the MCP path)')
    .option('--no-modern', 'do not serve 2026-07-28 stateless requests')
    .option('--no-streamable', 'do not serve 2025-era (initialize + Mcp-Session-Id) requests')
    .option(
      '--allowed-origin <host>',
      'host an Origin header may name, optionally with :port (repeatable; replaces the default localhost, 127.0.0.1, [::1])',
      hostEntry('allowedOrigins'),
    )
    .option(
      '--cors-origin <origin>',
      'let pages of this origin (https://app.example) read answers: CORS, off by default (repeatable; each must pass the --allowed-origin list)',
      corsOrigin,
    )
    .option(
      '--allow-unauthenticated',
      'serve mounts without `auth` on a non-loopback --host (refused otherwise; same as `auth: { none: true }` for those mounts; see docs/security.md)',
    )
    .option(
      '--allowed-host <host>',
      'require the Host header to be one of these (repeatable; default on a loopback bind: localhost, 127.0.0.1 and [::1] at the bound port)',
      hostEntry('allowedHosts'),
    )
    .option(
      '--trust-proxy <value>',
      'peers allowed to set X-Forwarded-Proto/-Host/-Prefix: false (default), a hop count, or addresses/CIDRs (comma-separated, repeatable)',
      trustProxyArg,
    )
    .option('--public-base-url <url>', "the URL clients reach this listener's root at (https://mcp.example.com/tenant-7); overrides X-Forwarded-*")
    .option('--max-body-bytes <n>', `largest request body, bytes (default ${DEFAULT_LIMITS.maxBodyBytes})`, int('--max-body-bytes', 1))
    .option('--max-connections <n>', `open TCP connections (default ${DEFAULT_LIMITS.maxConnections})`, int('--max-connections', 1))
    .option('--head-timeout-ms <n>', `time to receive request headers, ms (default ${DEFAULT_LIMITS.headTimeoutMs})`, int('--head-timeout-ms', 1))
    .option('--body-timeout-ms <n>', `time to receive a body, ms (default ${DEFAULT_LIMITS.bodyTimeoutMs})`, int('--body-timeout-ms', 1))
    .option('--max-subscriptions <n>', `open subscriptions/listen streams (default ${DEFAULT_LIMITS.maxSubscriptions})`, int('--max-subscriptions', 1))
    .option('--max-sessions <n>', `live sessions per dialect (default ${DEFAULT_LIMITS.maxSessions})`, int('--max-sessions', 1))
    .option('--request-timeout-ms <n>', `deadline per request, ms (default ${DEFAULT_LIMITS.requestTimeoutMs})`, int('--request-timeout-ms', 1))
    .option('--limit <name=value>', 'set any bound from docs/config.md (repeatable), e.g. --limit sessionIdleMs=60000', limitPair)
    .addOption(new Option('--log-level <level>', 'log level; logs go to stderr (default info)').choices([...LOG_LEVEL_NAMES]))
    .option(
      '--admin-port <port>',
      'port of the admin listener (/healthz, /readyz, /metrics, the status page); 0 picks a free one (default 7601)',
      int('--admin-port', 0, 65535),
    )
    .option('--no-admin', 'do not start the admin listener')
    .option('--require-upstreams', 'fail the start when an upstream cannot start (default: mark it down and reconnect in the background)')
    .option('--watch', 'reload the --config file when it changes (SIGHUP reloads it too); not with --serve-stdio, which never reloads')
    .option(
      '--redis <url>',
      'share sessions with other replicas through this Redis (redis:// or rediss://); the sealing key comes from SWITCHYARD_CLUSTER_KEY (docs/scaling.md)',
    )
    .addHelpText(
      'after',
      `
Examples:
  switchyard                                   embedded demo on http://127.0.0.1:7600/mcp
  switchyard --stdio "npx -y @modelcontextprotocol/server-everything" --legacy-sse
  switchyard --config switchyard.yaml --port 8080
  switchyard --port 0 --allowed-origin app.example.com:443

Precedence: a flag, then the environment (SWITCHYARD_HOST, SWITCHYARD_PORT, SWITCHYARD_LOG_LEVEL,
SWITCHYARD_REQUEST_STATE_KEY, SWITCHYARD_STRICT, SWITCHYARD_CLUSTER_KEY, SWITCHYARD_REPLICA_ID),
then the config file, then the default.
Signals: SIGINT/SIGTERM stop accepting, let in-flight work finish (shutdownGraceMs), close streams, stop the child, exit 0;
a second SIGINT/SIGTERM while that runs exits at once (130 / 143), cutting what is still in flight.
While the start still waits on its upstreams, SIGINT/SIGTERM stop those started so far and exit 0.
SIGHUP reloads the --config file (an invalid file is logged and the running config stays; one sent
during the start reloads once the gateway listens); --serve-stdio logs and ignores it.
Errors: docs/errors.md. Dialect selection: docs/dialects.md.`,
    );
  return program;
}

/** The flags the main command parses (absent: not given). */
export interface CliFlags {
  strict?: 'off' | 'log' | 'reject';
  serveStdio?: boolean;
  config?: string;
  upstream?: string;
  upstreamEra?: string;
  isolation?: 'per-session' | 'shared';
  upstreamHeader?: string[];
  host?: string;
  port?: number;
  path?: string;
  stdio?: string;
  legacySse?: boolean;
  modern?: boolean;
  streamable?: boolean;
  allowedOrigin?: string[];
  corsOrigin?: string[];
  allowedHost?: string[];
  allowUnauthenticated?: boolean;
  trustProxy?: false | number | string[];
  publicBaseUrl?: string;
  maxBodyBytes?: number;
  maxConnections?: number;
  headTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxSubscriptions?: number;
  maxSessions?: number;
  requestTimeoutMs?: number;
  limit?: Partial<Limits>;
  logLevel?: string;
  adminPort?: number;
  admin?: boolean;
  requireUpstreams?: boolean;
  watch?: boolean;
  redis?: string;
}

/**
 * Flags that configure only the HTTP listener (its address, path, eras, edge checks and bounds)
 * or the admin listener, which `--serve-stdio` does not run: given with it, they would do
 * nothing, so they are a usage error (docs/stdio.md). The stdio front door serves every era by
 * message, so the era switches are among them. `--no-admin` is not: it asks for what
 * `--serve-stdio` does anyway.
 */
const HTTP_ONLY_FLAGS: ReadonlyArray<readonly [keyof CliFlags, string]> = [
  ['host', '--host'],
  ['port', '--port'],
  ['path', '--path'],
  ['legacySse', '--legacy-sse'],
  ['modern', '--no-modern'],
  ['streamable', '--no-streamable'],
  ['allowedOrigin', '--allowed-origin'],
  ['corsOrigin', '--cors-origin'],
  ['allowedHost', '--allowed-host'],
  ['allowUnauthenticated', '--allow-unauthenticated'],
  ['trustProxy', '--trust-proxy'],
  ['publicBaseUrl', '--public-base-url'],
  ['adminPort', '--admin-port'],
];

/**
 * The bounds only the HTTP listener applies (its connections, head and body), with the flag that
 * sets each besides `--limit NAME=N` (the flag's CliFlags key is the limit's name). With `--serve-stdio` they are refused however they are
 * given: a trial found `--limit maxConnections=5` accepted where `--max-connections 5` was not.
 */
const LISTENER_ONLY_LIMITS: ReadonlyArray<readonly [keyof Limits, string | undefined]> = [
  ['maxBodyBytes', '--max-body-bytes'],
  ['maxConnections', '--max-connections'],
  ['headTimeoutMs', '--head-timeout-ms'],
  ['bodyTimeoutMs', '--body-timeout-ms'],
  ['firstByteTimeoutMs', undefined],
  ['maxConnectionsPerAddress', undefined],
  ['streamReserveDivisor', undefined],
  ['lingerTimeMs', undefined],
  ['lingerIdleMs', undefined],
  ['lingerMaxBytes', undefined],
];

/**
 * Turns the flags that were given into options (flags not given stay absent). `given(name)`
 * says whether a flag came from the command line (commander's option value source), which is
 * what tells `--no-modern` left alone from `--no-modern` given.
 * @throws SwitchyardError SWY_ERR_CLI_USAGE on contradicting or malformed flags (an HTTP listener
 *   flag, or `--watch`, with `--serve-stdio` among them)
 */
export function optionsFromFlags(f: CliFlags, given: (name: keyof CliFlags) => boolean = (n) => f[n] !== undefined): Partial<GatewayOptions> {
  const o: Partial<GatewayOptions> = {};
  const limits: Partial<Limits> = { ...f.limit };
  for (const k of ['maxBodyBytes', 'maxConnections', 'headTimeoutMs', 'bodyTimeoutMs', 'maxSubscriptions', 'maxSessions', 'requestTimeoutMs'] as const) {
    if (f[k] !== undefined) limits[k] = f[k];
  }
  if (Object.keys(limits).length > 0) o.limits = limits;
  if (f.serveStdio) {
    const http = HTTP_ONLY_FLAGS.filter(([key]) => given(key)).map(([, flag]) => flag);
    // A bound's own flag is named when it was given (it sets the same key as `--limit NAME=N`).
    for (const [name, flag] of LISTENER_ONLY_LIMITS)
      if (limits[name] !== undefined) http.push(flag !== undefined && given(name as keyof CliFlags) ? flag : `--limit ${name}`);
    if (http.length > 0)
      throw new SwitchyardError('SWY_ERR_CLI_USAGE', {
        detail:
          http.length === 1
            ? `${http[0]} is an HTTP listener flag, and --serve-stdio serves one client over stdin/stdout instead: drop ${http[0]}, or --serve-stdio to serve HTTP`
            : `${http.join(', ')} are HTTP listener flags, and --serve-stdio serves one client over stdin/stdout instead: drop them, or --serve-stdio to serve HTTP`,
      });
    // runServeStdio keeps the config it started with (no reloader, no SIGHUP handler): --watch would do nothing.
    if (given('watch'))
      throw new SwitchyardError('SWY_ERR_CLI_USAGE', {
        detail: '--watch reloads the config of the HTTP gateway, and --serve-stdio never reloads: drop --watch, or --serve-stdio to serve HTTP',
      });
  }
  if (f.path !== undefined && !f.path.startsWith('/')) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--path must start with /' });
  if (f.config !== undefined && (f.upstream !== undefined || f.stdio !== undefined)) {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--config names the upstreams; drop --upstream/--stdio' });
  }
  if (f.config !== undefined && f.path !== undefined) {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', {
      detail: "--path is the single upstream's path; with --config set upstreams.NAME.path or listen.path in the file",
    });
  }
  // The single upstream's own flags: dropped without a word where they had no upstream to apply to.
  const upstreamFlags = (
    [
      ['--upstream-era', f.upstreamEra, 'era'],
      ['--isolation', f.isolation, 'isolation'],
      ['--upstream-header', f.upstreamHeader, 'headers'],
    ] as const
  ).filter(([, v]) => v !== undefined);
  if (f.config !== undefined && upstreamFlags.length > 0) {
    const [flag, , key] = upstreamFlags[0];
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', {
      detail: `${flag} sets the single upstream's ${key}; with --config set upstreams.NAME.${key} in the file`,
    });
  }
  if (f.upstream !== undefined) {
    try {
      const u = new URL(f.upstream);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: `--upstream needs an http(s) URL, got ${argForDisplay(f.upstream)}` });
    }
    if (f.stdio !== undefined) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--upstream and --stdio exclude each other' });
    o.upstreamUrl = f.upstream;
  }
  if (f.stdio !== undefined) {
    if (f.stdio.trim() === '') throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--stdio needs a command' });
    o.stdio = f.stdio;
  }
  if (given('modern') || given('streamable') || given('legacySse')) {
    const dialects: DialectFlag[] = [];
    if (f.modern !== false) dialects.push('2026-07-28');
    if (f.streamable !== false) dialects.push('2025-03-26');
    if (f.legacySse) dialects.push('2024-11-05');
    if (dialects.length === 0)
      throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'every dialect is off; keep at least one of 2026-07-28, 2025 or --legacy-sse' });
    o.dialects = dialects;
  }
  if (f.upstreamHeader !== undefined) {
    try {
      o.upstreamHeaders = parseHeaderArgs(f.upstreamHeader, '--upstream-header');
    } catch (err) {
      throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: (err as Error).message });
    }
  }
  if (f.upstream === undefined) {
    for (const [flag] of upstreamFlags)
      if (flag !== '--upstream-era') throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: `${flag} applies to an HTTP upstream: give --upstream URL` });
    // The embedded demo speaks every era itself: an era for it was dropped without a word.
    if (f.upstreamEra !== undefined && f.stdio === undefined)
      throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--upstream-era applies to an upstream: give --upstream URL or --stdio COMMAND' });
  }
  if (f.host !== undefined) o.host = f.host;
  if (f.port !== undefined) o.port = f.port;
  if (f.path !== undefined) o.path = f.path;
  if (f.strict !== undefined) o.strict = f.strict;
  if (f.upstreamEra !== undefined) o.upstreamEra = f.upstreamEra;
  if (f.isolation !== undefined) o.isolation = f.isolation;
  if (f.allowedOrigin !== undefined) o.allowedOrigins = f.allowedOrigin;
  if (f.corsOrigin !== undefined) o.corsOrigins = f.corsOrigin;
  if (f.allowedHost !== undefined) o.allowedHosts = f.allowedHost;
  if (f.trustProxy !== undefined) o.trustProxy = f.trustProxy;
  if (f.publicBaseUrl !== undefined) o.publicBaseUrl = f.publicBaseUrl;
  if (f.logLevel !== undefined) o.logLevel = f.logLevel;
  if (given('admin') && f.admin === false) {
    if (f.adminPort !== undefined) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--admin-port and --no-admin exclude each other' });
    o.admin = false;
  }
  if (f.adminPort !== undefined) o.adminPort = f.adminPort;
  if (f.requireUpstreams) o.requireUpstreams = true;
  if (f.watch && f.config === undefined) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--watch needs --config (the file to watch)' });
  if (f.redis !== undefined) o.redis = f.redis;
  return o;
}

/**
 * The effective config of a command line: the config file (when `--config`) or the flags'
 * single upstream, with the environment over the file and the flags over both, validated by the
 * schema like any file.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (every failing path listed), SWY_ERR_CLI_USAGE
 */
export async function effectiveConfig(
  options: Partial<GatewayOptions>,
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<FrozenConfig> {
  const { configFromOptions, envOverrides, overlay, topLevelOf } = await import('../config/options.js');
  const { loadConfig, validateConfig } = await import('../config/load.js');
  if (file === undefined)
    return validateConfig(overlay(envOverrides(env), configFromOptions(options)), 'command line', { expandEnv: false, writtenAs: 'flags' });
  // Read as `switchyard validate` reads it (bounded by MAX_CONFIG_FILE_BYTES; a refused file's
  // policy rules compiled, so that their errors are listed with the others).
  // ${VAR} in the file expands as usual; the values flags and the environment set are literal.
  return loadConfig(file, { env, overrides: overlay(envOverrides(env), topLevelOf(options)) });
}

/**
 * Writes a config refusal to stderr, the loader's and the start's alike (the start compiles the
 * policy: `source` `policy`): one line naming the source and the count, then each issue on its
 * own line (the error's message holds them all on one line, for logs; printed here too, it said
 * each one twice). An error without issues is its message alone.
 */
function printConfigError(err: SwitchyardError): void {
  const issues = (err.data?.errors as Array<{ path: string; message: string }> | undefined) ?? [];
  const source = err.data?.source;
  if (issues.length === 0 || typeof source !== 'string') {
    process.stderr.write(`switchyard: ${err.message}\n`);
    return;
  }
  const head = `${err.entry.message}: ${source}: ${issues.length} error${issues.length === 1 ? '' : 's'}`;
  process.stderr.write(`switchyard: ${head}\n${issues.map((i) => `  ${i.path || '(file)'}: ${i.message}\n`).join('')}`);
}

/**
 * After a usage error (an unknown option, a bad value, a missing argument), `cmd` and each of its
 * subcommands print the error line and where their help is: the whole `--help` text after it
 * (commander's `showHelpAfterError()`) buried the one useful line (found by a trial). `name` is
 * how `cmd` is typed, `switchyard` for the program.
 */
function hintHelpAfterError(cmd: Command, name: string): void {
  cmd.showHelpAfterError(`(run \`${name} --help\` for usage)`);
  for (const sub of cmd.commands) hintHelpAfterError(sub, `${name} ${sub.name()}`);
}

/**
 * The config file's modification time and size as one string (`mtimeMs:size`, the target of a
 * symbolic link), or `missing` when it cannot be read: compared before the start and after it, so
 * that `--watch` notices an edit made meanwhile.
 */
function fileStamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.mtimeMs}:${st.size}`;
  } catch {
    return 'missing';
  }
}

async function main(argv: string[]): Promise<void> {
  // stderr's reader may go away (a log collector that died, `switchyard … 2>&1 | head`): a write
  // to it then fails with EPIPE, which, unhandled, ended the process with code 1 and no word (found
  // by a trial). Lines written after that have no reader; the gateway goes on serving. pino's own
  // stream handles EPIPE by itself (src/log/logger.ts, endLog).
  process.stderr.on('error', () => {});
  const program = buildCli();
  registerEmulateCommand(program);
  program
    .command('validate <file>')
    .description('check a config file against the schema; lists every failing path on stdout; exit 0 when valid')
    .option('--effective', 'print the effective config (file, environment and defaults merged) as JSON')
    .option('--allow-unauthenticated', 'accept a non-loopback listener with a mount that has no auth, as the start does with this flag')
    .action(async (file: string, o: { effective?: boolean; allowUnauthenticated?: boolean }) =>
      process.exit(await (await import('./validate.js')).runValidate(file, o)),
    );
  program
    .command('probe <url>')
    .description("find which MCP era an HTTP server speaks, by the spec's client fallback rule; exit 0 when an era was found")
    .option('--json', 'print the verdict as JSON')
    .option('--header <k:v>', 'extra request header (repeatable)', (v: string, p: string[] | undefined) => [...(p ?? []), v])
    // The gateway's own default (upstreamProbeTimeoutMs): a server slower than that per step gets
    // the verdict a default gateway in front of it acts on, not a more patient one.
    .option('--timeout-ms <n>', 'time for each step, ms', int('--timeout-ms', 1, MAX_TIMER_MS), DEFAULT_LIMITS.upstreamProbeTimeoutMs)
    .action(async (url: string, o: { json?: boolean; header?: string[]; timeoutMs: number }) => {
      const { checkProbeArgs, runProbe } = await import('./probe.js');
      let headers: Record<string, string>;
      try {
        headers = checkProbeArgs(url, o.header ?? []);
      } catch (err) {
        process.stderr.write(`switchyard probe: ${(err as Error).message}\n`);
        process.exit(2);
      }
      process.exit(await runProbe(url, { ...o, headers }));
    });
  program.action(async (flags: CliFlags) => {
    let opts: Partial<GatewayOptions>;
    try {
      opts = optionsFromFlags(flags, (n) => program.getOptionValueSource(n) === 'cli');
    } catch (err) {
      process.stderr.write(`switchyard: ${(err as Error).message}\n`);
      process.exit(2);
    }
    let config: FrozenConfig;
    // With --watch, the file as it was before it was read: an edit made while the start waits on
    // its upstreams (up to upstreamStartTimeoutMs) comes before the watch begins, and is applied
    // once the gateway listens (below) instead of being missed until the next edit.
    const readStamp = flags.watch === true && flags.config !== undefined ? fileStamp(flags.config) : undefined;
    try {
      config = await effectiveConfig(opts, flags.config, process.env);
    } catch (err) {
      if (err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID') printConfigError(err);
      else process.stderr.write(`switchyard: ${(err as Error).message}\n`);
      process.exit(flags.config === undefined ? 2 : 1);
    }
    const log = createLogger(config.logLevel);
    if (flags.serveStdio) process.exit(await (await import('./serve-stdio.js')).runServeStdio(config, { log }));
    // The handlers go in before the start, which waits for every upstream's first attempt (up to
    // upstreamStartTimeoutMs): without them a SIGHUP then ended the process (Node's default) and a
    // SIGTERM left behind a stdio child that does not exit at stdin EOF.
    const starting = new AbortController();
    let gw: Gateway | undefined;
    let reloader: Reloader | undefined;
    let reloadAfterStart = false;
    process.on('SIGHUP', () => {
      if (flags.config === undefined) return void log.warn({ signal: 'SIGHUP' }, 'nothing to reload without --config');
      if (stopping) return;
      if (!reloader) {
        // The file is read again once the gateway listens: what was read at the start may be older.
        reloadAfterStart = true;
        return void log.info({ signal: 'SIGHUP' }, 'reload requested while starting: it runs once the gateway listens');
      }
      log.info({ signal: 'SIGHUP' }, 'reloading the config');
      void reloader.reload();
    });
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        // A second signal (Ctrl-C pressed twice) does not wait for the drain: work still in
        // flight is cut, and the exit code says which signal ended it (128 + its number).
        try {
          log.warn({ signal }, 'second signal while shutting down: exiting now');
        } catch {
          // The log has already ended (the drain was over): nothing more is written.
        }
        void endLog(log, 500).then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
        return;
      }
      stopping = true;
      // Still starting: the start stops what it started, logs `shutting down` and rejects (below).
      if (!gw) return void starting.abort(signal);
      reloader?.close();
      // The gateway's close logs `shutting down` (with the signal and the calls in flight).
      gw.close({ signal }).then(
        () => void endLog(log).then(() => process.exit(0)),
        (err: unknown) => {
          log.error({ err }, 'internal error');
          void endLog(log).then(() => process.exit(1));
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    try {
      const { startGatewayFromConfig } = await import('../gateway.js');
      gw = await startGatewayFromConfig(config, log, {
        operations: true,
        env: process.env,
        allowUnauthenticated: flags.allowUnauthenticated === true,
        signal: starting.signal,
      });
      // SIGHUP (and --watch) read the file again: flags and the environment apply over it as at start.
      const { createReloader } = await import('../reload.js');
      const running = gw;
      reloader = createReloader({
        load: () => effectiveConfig(opts, flags.config, process.env),
        apply: (next) => running.reload(next),
        log,
        file: flags.config,
        watch: flags.watch === true,
      });
      if (stopping) {
        // The signal came after the start's last look at it: stop as after the start.
        stopping = false;
        return stop(String(starting.signal.reason));
      }
      if (reloadAfterStart) {
        log.info({ signal: 'SIGHUP' }, 'reloading the config');
        void reloader.reload();
      } else if (readStamp !== undefined && fileStamp(flags.config!) !== readStamp) {
        log.info({ source: flags.config }, 'config file changed during the start: reloading');
        void reloader.reload();
      }
      // Printed once SIGHUP, --watch, SIGINT and SIGTERM are in place (a supervisor may stop it at once): these lines say the gateway is ready.
      running.mounts.forEach((m, i) => {
        const url = running.urls[i];
        const sse = m.registry.httpSse ? ` (HTTP+SSE clients: ${url.replace(/\/[^/]*$/, '')}${m.ssePath.slice(m.ssePath.lastIndexOf('/'))})` : '';
        process.stderr.write(`switchyard ${VERSION} listening on ${url}${running.mounts.length > 1 ? ` (${m.name})` : ''}${sse}\n`);
      });
      if (running.admin) process.stderr.write(`switchyard admin listener on ${running.admin.address().url}\n`);
    } catch (err) {
      // A start stopped by SIGINT/SIGTERM has stopped what it started and logged `stopped`.
      if (stopping && err instanceof SwitchyardError && err.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN') return void endLog(log).then(() => process.exit(0));
      // A config the start refused (its policy rules, limit names and renames are compiled there)
      // is printed as the loader's refusal is: one line per error, not all of them on one.
      // A refusal without a list of issues (a cluster key, say) keeps its one line, with its code.
      if (err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID' && Array.isArray(err.data?.errors) && err.data.errors.length > 0)
        printConfigError(err);
      else process.stderr.write(`switchyard: ${startFailureText(err, LISTENER_TODO)}\n`);
      void endLog(log).then(() => process.exit(1));
    }
  });
  hintHelpAfterError(program, 'switchyard');
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // Usage errors of the main command and of every subcommand (a missing argument, an unknown
    // option, an invalid value) exit 2; help and version exit 0 (their exitCode).
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    process.stderr.write(`switchyard: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

void main(process.argv);
