// Access log: one line per client request, written from the `requestEnd` channel through a given
// pino logger. The line carries no identity claim, no params, no session id and no token.

import type { Logger } from '../log/logger.js';
import { methodLiteral, revisionLabel } from './names.js';
import { subscribeChannels } from './subscribe.js';

/** pino levels an access line may use. */
export type AccessLogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** The constant message of every access line (fields vary, the message does not). */
export const ACCESS_LOG_MESSAGE = 'request';

/** Inputs of {@link createAccessLog}. */
export interface AccessLogOptions {
  /** The logger to write through (from src/log/logger.ts, or a child of it). */
  log: Logger;
  /** Level of every access line (default `info`). */
  level?: AccessLogLevel;
}

/** A running access log. */
export interface AccessLog {
  /** Unsubscribes; no line is written afterwards. */
  close(): void;
}

/**
 * The fields of one access line:
 * - `method`: the JSON-RPC method (known MCP methods and other well-formed names up to 64
 *   characters, else `_other`);
 * - `dialect`, `protocolVersion` (a known revision, else `_other`), `mount`, `upstream` (config names);
 * - `outcome`: `ok` or `error`; for errors `rpcCode` (the JSON-RPC code sent), `code` (the
 *   catalogue code, when Switchyard refused or failed it) and `fault`;
 * - `durationMs`: admission to answer, ms (three decimals).
 */
export interface AccessLine {
  method: string;
  dialect?: string;
  protocolVersion: string;
  mount?: string;
  upstream?: string;
  outcome: 'ok' | 'error';
  rpcCode?: number;
  code?: string;
  fault?: string;
  durationMs: number;
}

/**
 * Subscribes an access log to `requestEnd`: one line per client request, message
 * {@link ACCESS_LOG_MESSAGE}, fields {@link AccessLine}.
 * @see STYLE §6 (fields first, constant message; nothing secret)
 */
export function createAccessLog(options: AccessLogOptions): AccessLog {
  const level: AccessLogLevel = options.level ?? 'info';
  const log = options.log;
  const close = subscribeChannels(
    {
      requestEnd(m) {
        if (!log.isLevelEnabled(level)) return;
        const ctx = m.ctx;
        const error = m.code !== undefined || m.rpcCode !== undefined || m.error !== undefined;
        // Built in a fixed order so every line lists its fields alike.
        const line = { method: methodLiteral(ctx.method) } as AccessLine;
        if (ctx.dialect !== undefined) line.dialect = ctx.dialect;
        line.protocolVersion = revisionLabel(ctx.protocolVersion);
        if (ctx.mount !== undefined) line.mount = ctx.mount;
        if (ctx.upstream !== undefined) line.upstream = ctx.upstream;
        line.outcome = error ? 'error' : 'ok';
        if (m.rpcCode !== undefined) line.rpcCode = m.rpcCode;
        if (m.code !== undefined) line.code = m.code;
        if (m.fault !== undefined) line.fault = m.fault;
        line.durationMs = Math.round(m.durationMs * 1000) / 1000;
        log[level](line, ACCESS_LOG_MESSAGE);
      },
    },
    (err, channel) => log.error({ err, channel }, 'access log observer failed'),
  );
  return { close };
}
