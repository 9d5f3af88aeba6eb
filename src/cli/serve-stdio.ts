// `switchyard --serve-stdio`: assembles the gateway from its config and serves one local client on
// this process's stdin/stdout until EOF.

import type { Readable, Writable } from 'node:stream';
import type { FrozenConfig } from '../config/load.js';
import { operatorText, SwitchyardError } from '../core/errors.js';
import { localIdentity } from '../auth/stdio-identity.js';
import type { Logger } from '../log/logger.js';
import { createLogger, endLog } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { serveStdio } from '../transports/stdio.js';

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
  const { assemble } = await import('../gateway.js');
  const core = await assemble(config, { log });
  try {
    await core.start();
  } catch (err) {
    const msg = err instanceof SwitchyardError ? `${err.code}: ${operatorText(err)}` : String(err);
    log.error({ err }, msg);
    await core.close().catch(() => {});
    await endOutput();
    return 1;
  }
  const mount = core.mounts[0];
  // Without requireUpstreams an upstream that failed at start is served as down (its calls get
  // SWY_ERR_UPSTREAM_DOWN, its supervisor reconnects): the client is served all the same, as on
  // HTTP. The supervisor logs `upstream ready` when it serves.
  // 2025-11-25 basic/authorization: stdio takes its credentials from the environment, here `auth.stdio` and the OS user.
  const identity = localIdentity(config.auth?.stdio, process.env);
  const transport = serveStdio({
    limits: mount.limits,
    log,
    input: opts.input ?? process.stdin,
    output: opts.output ?? process.stdout,
    maxLineBytes: opts.maxLineBytes,
    writeTimeoutMs: opts.writeTimeoutMs,
    createPeer: (write) => core.peer(write, identity),
  });
  // The drain begins at the signal: the core's close (logged once, `shutting down` with the signal)
  // lets calls in flight finish within shutdownGraceMs, then stops the upstream; the `core.close()`
  // below then waits for the same close. A signal while the gateway is already shutting down (a
  // second Ctrl-C, or the SIGTERM an SDK stdio client sends 2 s after closing our stdin, while a
  // child that ignored its EOF is still being stopped) exits at once, as in HTTP mode: the
  // handlers stay until the close is over, since the default action would end the process without
  // stopping the child (the 'exit' hook of the stdio upstream kills a child still running).
  let shuttingDown = false;
  const onSignal = (signal: string) => {
    if (shuttingDown) {
      log.warn({ signal }, 'signal while shutting down: exiting now');
      void endOutput().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
      return;
    }
    shuttingDown = true;
    // A failure surfaces from the `await core.close()` below.
    core.close({ signal }).catch(() => {});
    void transport.close();
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  // The stdio front door keeps the config it started with; without a handler, SIGHUP (a reload
  // elsewhere, or a terminal hanging up) would end the process with its in-flight work.
  const onHup = () => log.warn({ signal: 'SIGHUP' }, '--serve-stdio does not reload its config: SIGHUP ignored');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  process.on('SIGHUP', onHup);
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
    await core.close(byClient ? { upstreamStopStepMs: Math.min(mount.limits.upstreamStopTimeoutMs, EOF_STOP_STEP_MS) } : undefined);
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    process.off('SIGHUP', onHup);
  }
  log.info({ code }, Lines.stopped);
  await endOutput();
  return code;
}
