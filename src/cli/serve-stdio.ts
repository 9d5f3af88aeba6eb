// `switchyard --serve-stdio`: builds the upstream and the core, then serves one local client on
// this process's stdin/stdout until EOF.

import type { Readable, Writable } from 'node:stream';
import { SwitchyardError } from '../core/errors.js';
import { Executor } from '../core/executor.js';
import { DEFAULT_LIMITS, type Limits } from '../core/limits.js';
import { Router } from '../core/router.js';
import type { Upstream } from '../core/upstream.js';
import { MODERN_REVISION } from '../core/versions.js';
import { createLogger, type Logger } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { serveStdio } from '../transports/stdio.js';
import { createUpstream, heldCalls } from '../gateway.js';
import type { HttpEra } from '../upstreams/http.js';

/** Options of `runServeStdio`; every one has a default. */
export interface RunServeStdioOptions {
  /** Command line of a stdio MCP server to front; the embedded demo when neither this nor `upstreamUrl`. */
  stdio?: string;
  /** An HTTP MCP server of any era to front. */
  upstreamUrl?: string;
  /** Its era (`auto` probes). */
  upstreamEra?: HttpEra;
  /** Upstream session sharing for stateful eras. */
  isolation?: 'per-session' | 'shared';
  /** Headers sent to the HTTP upstream. */
  upstreamHeaders?: Record<string, string>;
  /** Secret for the HMAC of held calls' `requestState` (random at start when undefined). */
  requestStateKey?: string;
  /** pino level for the logs on stderr (default `info`). */
  logLevel?: string;
  /** Bounds (defaults: src/core/limits.ts). */
  limits?: Partial<Limits>;
  /** Longest input line, bytes (default 2,000,000). */
  maxLineBytes?: number;
  /** Time a blocked write to stdout may wait, ms (default 5,000). */
  writeTimeoutMs?: number;
  /** Logger to use instead of a new one on stderr. */
  log?: Logger;
  /** Input instead of process.stdin. */
  input?: Readable;
  /** Output instead of process.stdout. */
  output?: Writable;
}

/**
 * Serves the gateway over stdio: starts the upstream (the demo, or a stdio child), then serves
 * messages from stdin until EOF, finishing admitted requests; SIGINT/SIGTERM stop reading and
 * finish the same way (in-flight work gets `shutdownGraceMs`). Logs go to stderr; stdout
 * carries protocol messages only.
 * @returns the exit code: 0 after EOF or a signal, 1 when the upstream cannot start or the
 *   client stopped reading (SWY_ERR_STDIO_WRITE_STALLED).
 */
export async function runServeStdio(opts: RunServeStdioOptions = {}): Promise<number> {
  const limits: Limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const log = opts.log ?? createLogger(opts.logLevel ?? 'info');
  const flush = () => new Promise<void>((resolve) => (typeof log.flush === 'function' ? log.flush(() => resolve()) : resolve()));
  // Built as src/gateway.ts builds it: held calls let a legacy child's server requests reach
  // 2026-07-28 clients as input_required rounds.
  const held = heldCalls(opts.requestStateKey, limits);
  const upstream: Upstream = await createUpstream({ ...opts, limits }, log, held);
  try {
    await upstream.start();
  } catch (err) {
    const msg = err instanceof SwitchyardError ? `${err.code}: ${err.message}` : String(err);
    log.error({ err }, msg);
    await upstream.close().catch(() => {});
    await flush();
    return 1;
  }
  log.info({ upstream: upstream.name, revision: upstream.describe().upstreamRevision, transport: 'stdio' }, Lines.upstreamReady);
  const router = new Router(upstream, [MODERN_REVISION]);
  const invalidate = upstream.subscribe({ toolsListChanged: true }, () => router.invalidateTools());
  const executor = new Executor(router, limits);
  const transport = serveStdio({
    executor,
    limits,
    log,
    input: opts.input ?? process.stdin,
    output: opts.output ?? process.stdout,
    maxLineBytes: opts.maxLineBytes,
    writeTimeoutMs: opts.writeTimeoutMs,
    modernRevisions: [MODERN_REVISION],
  });
  const onSignal = (signal: string) => {
    log.info({ signal, inFlight: executor.inFlight }, Lines.shuttingDown);
    void executor.close(limits.shutdownGraceMs);
    void transport.close();
  };
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  let code = 0;
  try {
    await transport.done;
  } catch (err) {
    code = 1;
    log.error({ err }, 'stdio transport failed');
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
  await executor.close(limits.shutdownGraceMs);
  invalidate.close();
  await upstream.close();
  log.info({ code }, Lines.stopped);
  await flush();
  return code;
}
