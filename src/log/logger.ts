// The one pino factory. Logs always go to stderr (fd 2) so that stdout stays free for protocol
// messages in stdio mode.

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
  return pino(
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
    pino.destination({ fd: 2, sync: false }),
  );
}

/**
 * A logger for records (one JSON line per record, no timestamp), written synchronously to `file`
 * (created with its directory) or to stderr: the emulator's request log.
 */
export function createRecordLogger(base: Record<string, unknown>, file?: string): Logger {
  return pino(
    { level: 'info', base, timestamp: false },
    pino.destination(file !== undefined ? { dest: file, sync: true, mkdir: true } : { fd: 2, sync: true }),
  );
}
