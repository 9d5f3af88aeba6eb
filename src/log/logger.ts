// The one pino factory. Logs always go to stderr (fd 2) so that stdout stays free for protocol
// messages in stdio mode.

import { mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Log levels the CLI accepts. */
export const LOG_LEVEL_NAMES = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Creates the process logger: JSON lines on stderr, `authorization`, `cookie` and tokens
 * redacted.
 * @param level a pino level name (default `info`).
 */
export function createLogger(level: string = 'info'): Logger {
  const destination = pino.destination({ fd: 2, sync: false });
  const logger = pino(
    {
      level,
      base: { name: 'switchyard' },
      redact: {
        paths: [
          'headers.authorization',
          'headers.cookie',
          'headers["mcp-session-id"]',
          '*.token',
          '*.requestState',
          // A request context carries the client's Authorization as it came (for forwardAuthorization);
          // wherever a record nests a request (an access line's context, an error's data), its credentials stay out.
          'authorization',
          '*.authorization',
          '*.*.authorization',
          '*.headers.authorization',
          '*.headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

/** Each {@link createLogger} logger's stderr destination (sonic-boom), for {@link endLog}. */
const destinations = new WeakMap<Logger, ReturnType<typeof pino.destination>>();

/**
 * Ends `log`'s output before the process exits: resolves once every line it holds is written,
 * once stderr turns out to be a broken pipe (EPIPE: its reader is gone, and pino drops the rest),
 * or after `timeoutMs` (ms, default 2,000: a reader that stopped reading). Log lines after it are
 * dropped. A logger not made by {@link createLogger} is flushed instead.
 *
 * Why not `flush` then `process.exit`: flush answers at once while a line is still being written,
 * and pino then writes it synchronously from its exit hook; sonic-boom 4's `flushSync` retries a
 * failed write every 100 ms whatever the error, so with a broken stderr the process never exited
 * (found by a helper: SIGTERM hung a gateway whose log reader had gone).
 */
export function endLog(log: Logger, timeoutMs = 2_000): Promise<void> {
  const destination = destinations.get(log);
  if (!destination) return new Promise((resolve) => (typeof log.flush === 'function' ? log.flush(() => resolve()) : resolve()));
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    destination.once('close', done);
    destination.once('error', done);
    try {
      destination.end();
    } catch {
      // Already ended (or broken and disarmed by pino): nothing is left to write.
      done();
    }
  });
}

/**
 * A logger for records (one JSON line per record, no timestamp), written synchronously to `file`
 * (opened now, for appending, with its missing directories created) or to stderr: the
 * emulator's request log.
 * @throws the fs error (ENOENT, EACCES, ENOTDIR, …) when `file` cannot be created or opened
 */
export function createRecordLogger(base: Record<string, unknown>, file?: string): Logger {
  return pino({ level: 'info', base, timestamp: false }, pino.destination({ fd: file !== undefined ? openAppend(file) : 2, sync: true }));
}

/**
 * Opens `file` for appending, creating its missing directories first; returns the descriptor.
 * Not `mkdir(…, { recursive: true })` (nor pino's `mkdir` option, which uses it): under a parent
 * that exists but cannot hold children, such as /proc, Node steps back on ENOENT and forward on
 * EEXIST forever and never returns. Here each directory is tried at most twice.
 * @throws the fs error naming the path that failed
 */
function openAppend(file: string): number {
  const makeDir = (dir: string): void => {
    try {
      mkdirSync(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return;
      const parent = path.dirname(dir);
      if (code !== 'ENOENT' || parent === dir) throw err;
      makeDir(parent);
      try {
        mkdirSync(dir);
      } catch (again) {
        if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
      }
    }
  };
  makeDir(path.dirname(path.resolve(file)));
  return openSync(file, 'a');
}
