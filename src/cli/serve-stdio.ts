// `switchyard --serve-stdio`: assembles the gateway from its config and serves one local client on
// this process's stdin/stdout until EOF.

import type { Readable, Writable } from 'node:stream';
import type { FrozenConfig } from '../config/load.js';
import { operatorText, SwitchyardError } from '../core/errors.js';
import { localIdentity } from '../auth/stdio-identity.js';
import type { Logger } from '../log/logger.js';
import { createLogger, endLog } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { serveStdio, type StdioTransport } from '../transports/stdio.js';
import type { GatewayCore } from '../gateway.js';

/**
 * Longest step of a stdio child's ordered stop after our stdin ended, ms (`upstreamStopTimeoutMs`
 * when that is shorter): EOF is how the SDK stdio clients close us, and they send SIGTERM 2 s
 * later, SIGKILL 2 s after that. With steps of 600 ms a child that ignores its own EOF gets
 * SIGTERM at 0.6 s and SIGKILL at 1.2 s, and the gateway has exited before the client's SIGTERM
 * (docs/stdio.md, "Cancellation and ending").
 * @see MCP SDK client stdio.ts (StdioClientTransport.close); 2025-11-25 basic/lifecycle#stdio
 */
export const EOF_STOP_STEP_MS = 600;

/** Options of `runServeStdio`; every one has a default. */
export interface RunServeStdioOptions {
  /** Logger to use instead of a new one on stderr. */
  log?: Logger;
  /** Input instead of process.stdin. */
  input?: Readable;
  /** Output instead of process.stdout. */
  output?: Writable;
  /** Longest input line, bytes (default 2,000,000). */
  maxLineBytes?: number;
  /** Time a blocked write to stdout may wait, ms (default 5,000). */
  writeTimeoutMs?: number;
}

/**
 * Serves the gateway over stdio: assembles it from `config` (its first mount), starts the
 * upstreams, then serves messages from stdin until EOF, finishing admitted requests;
 * SIGINT/SIGTERM stop reading and finish the same way (in-flight work gets `shutdownGraceMs`);
 * SIGHUP is logged and ignored (nothing reloads here).
 * Logs go to stderr; stdout carries protocol messages only.
 * Without `requireUpstreams`, an upstream that cannot start is served as down (its requests get
 * SWY_ERR_UPSTREAM_DOWN while it reconnects); requests answered locally (`ping`) still work.
 * @returns the exit code: 0 after EOF or a signal, 1 when the gateway cannot start (with
 *   `requireUpstreams`, an upstream that cannot start) or the client stopped reading
 *   (SWY_ERR_STDIO_WRITE_STALLED), 2 when the config has several mounts.
 */
export async function runServeStdio(config: FrozenConfig, opts: RunServeStdioOptions = {}): Promise<number> {
  const log = opts.log ?? createLogger(config.logLevel);
  // Every return ends the process (the CLI exits with the code): the log is ended, not only flushed.
  const endOutput = () => endLog(log);
  const names = Object.keys(config.upstreams);
  if (names.length > 1 || config.aggregate) {
    log.error({ upstreams: names }, '--serve-stdio serves one upstream; this config names several');
    await endOutput();
    return 2;
  }
  // The handlers go in before the start, which waits for the upstream's first attempt (up to
  // upstreamStartTimeoutMs): without them a SIGTERM then (an SDK stdio client closing us 2 s after
  // our stdin ended) took Node's default action, exit 143 with nothing logged, and left behind a
  // stdio child that does not exit at its own EOF; a SIGHUP ended the process too. A signal during
  // the start closes the core (which ends the start's attempts and stops what started, in order)
  // and the process exits 0, as the HTTP gateway does (docs/stdio.md, "Cancellation and ending").
  // What the signal handlers stop, once it exists.
  const live: { core?: GatewayCore; transport?: StdioTransport } = {};
  let stopSignal: string | undefined;
  let shuttingDown = false;
  const onSignal = (signal: string) => {
    if (shuttingDown) {
      log.warn({ signal }, 'signal while shutting down: exiting now');
      void endOutput().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
      return;
    }
    shuttingDown = true;
    stopSignal = signal;
    // A failure surfaces from the `await core.close()` below (or, during the start, is the start's).
    live.core?.close({ signal }).catch(() => {});
    void live.transport?.close();
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  // The stdio front door keeps the config it started with; without a handler, SIGHUP (a reload
  // elsewhere, or a terminal hanging up) would end the process with its in-flight work.
  const onHup = () => log.warn({ signal: 'SIGHUP' }, '--serve-stdio does not reload its config: SIGHUP ignored');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onHup);
  const removeHandlers = () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onHup);
  };
  const { assemble } = await import('../gateway.js');
  const gateway = await assemble(config, { log });
  live.core = gateway;
  try {
    // A signal that came while the gateway was assembled: nothing is started.
    if (stopSignal === undefined) await gateway.start();
  } catch (err) {
    // A start ended by the signal (the core closed under it) is a stop, not a failure.
    if (stopSignal === undefined) {
      const msg = err instanceof SwitchyardError ? `${err.code}: ${operatorText(err)}` : String(err);
      log.error({ err }, msg);
      await gateway.close().catch(() => {});
      removeHandlers();
      await endOutput();
      return 1;
    }
  }
  if (stopSignal !== undefined) {
    try {
      await gateway.close({ signal: stopSignal });
    } finally {
      removeHandlers();
    }
    log.info({ code: 0 }, Lines.stopped);
    await endOutput();
    return 0;
  }
  const mount = gateway.mounts[0];
  // Without requireUpstreams an upstream that failed at start is served as down (its calls get
  // SWY_ERR_UPSTREAM_DOWN, its supervisor reconnects): the client is served all the same, as on
  // HTTP. The supervisor logs `upstream ready` when it serves.
  // 2025-11-25 basic/authorization: stdio takes its credentials from the environment, here `auth.stdio` and the OS user.
  const identity = localIdentity(config.auth?.stdio, process.env);
  const transport = (live.transport = serveStdio({
    limits: mount.limits,
    log,
    input: opts.input ?? process.stdin,
    output: opts.output ?? process.stdout,
    maxLineBytes: opts.maxLineBytes,
    writeTimeoutMs: opts.writeTimeoutMs,
    createPeer: (write) => gateway.peer(write, identity),
  }));
  let code = 0;
  try {
    await transport.done;
  } catch (err) {
    code = 1;
    log.error({ err }, 'stdio transport failed');
  }
  // Ended by the client (EOF, or its end of stdout gone) rather than by a signal: its stop is on
  // the client's clock, so a stdio child that does not exit at its own EOF is stopped sooner.
  const byClient = !shuttingDown;
  shuttingDown = true;
  try {
    await gateway.close(byClient ? { upstreamStopStepMs: Math.min(mount.limits.upstreamStopTimeoutMs, EOF_STOP_STEP_MS) } : undefined);
  } finally {
    removeHandlers();
  }
  log.info({ code }, Lines.stopped);
  await endOutput();
  return code;
}
