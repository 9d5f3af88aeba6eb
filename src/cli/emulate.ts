// `switchyard emulate`: the client-fallback test bench (docs/testing-clients.md).

import { InvalidArgumentError, Option, type Command } from 'commander';
import { SwitchyardError } from '../core/errors.js';
import { argForDisplay } from '../core/url-text.js';
import { MAX_TIMER_MS } from '../core/limits.js';
import { isLoopbackHost } from '../core/loopback.js';
import {
  EMULATED_ERAS,
  ENDPOINT_MODES,
  POST_STATUSES,
  PROBE_BODIES,
  PROBE_STATUSES,
  type EmulatedEra,
  type EndpointMode,
  type PostStatus,
  type ProbeBody,
  type ProbeStatus,
} from '../emulate/knobs.js';
import type { EmulateOptions } from '../emulate/index.js';
import { formatReport } from '../emulate/report.js';
import { createLogger, endLog, LOG_LEVEL_NAMES } from '../log/logger.js';
import type { HttpEra } from '../upstreams/http/index.js';
import { VERSION } from '../version.js';
import { LISTENER_TODO, startFailureText } from './start-failure.js';

function int(name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return Number(v);
  };
}

function oneOf<T extends number>(name: string, allowed: readonly T[]) {
  return (v: string): T => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || !(allowed as readonly number[]).includes(n)) throw new InvalidArgumentError(`${name} must be one of ${allowed.join(', ')}`);
    return n as T;
  };
}

/** The flags `emulate` parses. */
export interface EmulateFlags {
  era: EmulatedEra;
  host: string;
  port: number;
  path: string;
  stdio?: string;
  upstream?: string;
  upstreamEra: HttpEra;
  probeStatus?: ProbeStatus;
  /** Absent when not given (the emulator's default is `json`): only meaningful with `probeStatus`. */
  probeBody?: ProbeBody;
  /** `false` with `--no-endpoint`. */
  endpoint: EndpointMode | false;
  endpointDelay?: number;
  dropStreamAfter?: number;
  postStatus?: PostStatus;
  sessionExpireAfter?: number;
  slowMs?: number;
  log?: string;
  report?: boolean;
  logLevel: string;
  /** `--allow-unauthenticated`: bind a `--host` that is not loopback. */
  allowUnauthenticated?: boolean;
}

/** Turns parsed flags into emulator options. @throws SwitchyardError SWY_ERR_CLI_USAGE */
export function emulateOptionsFromFlags(f: EmulateFlags): EmulateOptions {
  // The emulator authenticates no one and fronts a server (a stdio command, say) for whoever
  // reaches it: as the gateway, it binds beyond loopback only when told twice.
  // @see 2025-11-25 basic/transports#security-warning (bind to localhost); src/auth/open-listener.ts
  if (!f.allowUnauthenticated && !isLoopbackHost(f.host))
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', {
      detail: `--host ${f.host} is not a loopback address and the emulator has no authentication; pass --allow-unauthenticated to bind it there anyway`,
    });
  if (!f.path.startsWith('/')) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--path must start with /' });
  if (f.upstream !== undefined && f.stdio !== undefined)
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--upstream and --stdio exclude each other' });
  if (f.upstream !== undefined) {
    let ok: boolean;
    try {
      ok = ['http:', 'https:'].includes(new URL(f.upstream).protocol);
    } catch {
      ok = false;
    }
    if (!ok) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: `--upstream needs an http(s) URL, got ${argForDisplay(f.upstream)}` });
  }
  if (f.era !== '2024-11-05' && (f.endpoint !== 'relative' || f.endpointDelay !== undefined)) {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--endpoint, --no-endpoint and --endpoint-delay apply to --era 2024-11-05 only' });
  }
  // --probe-body shapes the --probe-status answer: alone it would change nothing, silently.
  if (f.probeBody !== undefined && f.probeStatus === undefined) {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--probe-body needs --probe-status (it is the body of that answer)' });
  }
  if (f.era === '2026-07-28' && f.sessionExpireAfter !== undefined) {
    throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: '--session-expire-after needs a sessionful era (2026-07-28 has no sessions)' });
  }
  return {
    era: f.era,
    host: f.host,
    port: f.port,
    path: f.path,
    stdio: f.stdio,
    upstreamUrl: f.upstream,
    upstreamEra: f.upstreamEra,
    probeStatus: f.probeStatus,
    probeBody: f.probeBody,
    endpoint: f.endpoint,
    endpointDelayMs: f.endpointDelay,
    dropStreamAfter: f.dropStreamAfter,
    postStatus: f.postStatus,
    sessionExpireAfter: f.sessionExpireAfter,
    slowMs: f.slowMs,
    logFile: f.log,
    logLevel: f.logLevel,
  };
}

/**
 * Adds `emulate` to `program`. Turns on positional options for `program`, so that flags after
 * `emulate` (`--port`, `--host`, `--stdio`, …) belong to it and not to the gateway's own flags
 * of the same names.
 */
export function registerEmulateCommand(program: Command): Command {
  program.enablePositionalOptions();
  const cmd = program
    .command('emulate')
    .description('serve exactly one MCP era, with knobs, and report whether a client falls back (docs/testing-clients.md)')
    .addOption(new Option('--era <era>', 'the era to behave as').choices([...EMULATED_ERAS]).makeOptionMandatory())
    .option('--host <host>', 'interface to bind (loopback unless --allow-unauthenticated)', '127.0.0.1')
    .option('--allow-unauthenticated', 'allow a --host that is not loopback (the emulator authenticates no one)')
    .option('--port <port>', 'TCP port (0 picks a free one)', int('--port', 0, 65535), 7700)
    .option('--path <path>', 'MCP endpoint path', '/mcp')
    .option('--stdio <command>', 'front this stdio MCP server (default: the embedded demo)')
    .option('--upstream <url>', 'front this HTTP MCP server (default: the embedded demo)')
    .addOption(
      new Option('--upstream-era <era>', 'skip the probe of --upstream')
        .choices(['auto', '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'])
        .default('auto'),
    )
    .option(
      '--probe-status <status>',
      `answer the first POST on the MCP path (the 2026 probe or initialize) with this status: ${PROBE_STATUSES.join('|')}`,
      oneOf('--probe-status', PROBE_STATUSES),
    )
    // No commander default: a --probe-body given without --probe-status must be told apart (a usage error).
    .addOption(new Option('--probe-body <shape>', 'body of the --probe-status answer (default: json)').choices([...PROBE_BODIES]))
    .addOption(new Option('--endpoint <mode>', 'how the endpoint event names the POST URI (2024-11-05)').choices([...ENDPOINT_MODES]).default('relative'))
    .option('--no-endpoint', 'never send the endpoint event (2024-11-05)')
    .option('--endpoint-delay <ms>', 'delay the endpoint event (2024-11-05)', int('--endpoint-delay', 0, MAX_TIMER_MS))
    .option('--drop-stream-after <n>', 'cut every SSE stream after N message events', int('--drop-stream-after', 1))
    .option(
      '--post-status <status>',
      `status of accepted POSTs that carry no reply: ${POST_STATUSES.join('|')} (default 202)`,
      oneOf('--post-status', POST_STATUSES),
    )
    .option('--session-expire-after <n>', "404 a session's POSTs after N of them (initialize included)", int('--session-expire-after', 1))
    .option('--slow-ms <ms>', 'delay every request, ms', int('--slow-ms', 0, MAX_TIMER_MS))
    .option('--log <file>', 'write the request lines (JSON) to this file instead of stderr')
    .option('--report', "print the client's path and a verdict on stdout when stopped (SIGINT/SIGTERM)")
    .addOption(
      new Option('--log-level <level>', 'level of the gateway pieces (request lines are always written)').choices([...LOG_LEVEL_NAMES]).default('warn'),
    )
    .addHelpText(
      'after',
      `
Examples:
  switchyard emulate --era 2024-11-05 --port 0 --report
  switchyard emulate --era 2024-11-05 --probe-status 400 --report       mcp-remote http-first gives up here
  switchyard emulate --era 2025-11-25 --probe-status 404 --probe-body html
  switchyard emulate --era 2024-11-05 --endpoint cross-origin --log requests.jsonl`,
    )
    .action(async (flags: EmulateFlags) => {
      await runEmulate(flags);
    });
  return cmd;
}

/** Runs the emulator until SIGINT/SIGTERM; prints the report (with `--report`) and exits. */
export async function runEmulate(flags: EmulateFlags): Promise<void> {
  let opts: EmulateOptions;
  try {
    opts = emulateOptionsFromFlags(flags);
  } catch (err) {
    process.stderr.write(`switchyard emulate: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const log = createLogger(flags.logLevel);
  // The handlers go in before the start, which waits for the upstream's first attempt (up to
  // upstreamStartTimeoutMs for a stdio child): without them a SIGINT or SIGTERM then (a CI script's
  // `kill -INT` after too short a sleep) ended the process by the default action, with no report,
  // and left a stdio child that does not exit at its own EOF running. Now the start is aborted,
  // what started is stopped, and the process exits 0 (with --report, a report of no requests).
  const starting = new AbortController();
  let stop = (signal: string) => starting.abort(signal);
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  let emu;
  try {
    // Loaded here, not with the CLI: the emulator brings the gateway (fastify, every front door).
    const { startEmulator } = await import('../emulate/index.js');
    emu = await startEmulator({ ...opts, log, signal: starting.signal });
  } catch (err) {
    if (starting.signal.aborted && err instanceof SwitchyardError && err.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN') {
      process.stderr.write(`switchyard emulate: stopped by ${String(starting.signal.reason)} before it listened\n`);
      if (flags.report) {
        const paths = { mcpPath: opts.path ?? '/mcp', ssePath: '/sse', messagePaths: [] };
        process.stdout.write(formatReport([], paths, `switchyard emulate --era ${flags.era} (stopped before it listened)`));
      }
      void endLog(log).then(() => process.exit(0));
      return;
    }
    // emulate has no admin listener: only the MCP listener's advice applies.
    // An upstream that did not start fails the start (startEmulator): say what to do about it.
    const todo =
      err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE'
        ? `; emulate does not start without its upstream: start it first, or leave out ${flags.upstream !== undefined ? '--upstream' : '--stdio'} to front the embedded demo`
        : '';
    process.stderr.write(`switchyard emulate: ${startFailureText(err, { 'MCP listener': LISTENER_TODO['MCP listener'] })}${todo}\n`);
    // A usage error found while starting (a --stdio command that does not split) exits 2, as the others.
    const usage = err instanceof SwitchyardError && err.code === 'SWY_ERR_CLI_USAGE';
    void endLog(log).then(() => process.exit(usage ? 2 : 1));
    return;
  }
  process.stderr.write(`switchyard ${VERSION} emulating ${flags.era} on ${emu.url}\n`);
  const running = emu;
  let stopping = false;
  stop = () => {
    if (stopping) return;
    stopping = true;
    const report = running.report();
    running.close().then(
      () => {
        if (flags.report) process.stdout.write(report);
        void endLog(log).then(() => process.exit(0));
      },
      (err: unknown) => {
        if (flags.report) process.stdout.write(report);
        log.error({ err }, 'internal error');
        void endLog(log).then(() => process.exit(1));
      },
    );
  };
}
