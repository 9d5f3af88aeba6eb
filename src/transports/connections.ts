// The open-file limit and whether maxConnections fits under it.

import { readFileSync } from 'node:fs';

/**
 * Descriptors the gateway needs beside its client connections: stdio, the event loop, the
 * listeners, an upstream child's pipes, a few upstream sockets.
 */
export const DESCRIPTOR_HEADROOM = 64;

/**
 * The process's soft open-file limit (`RLIMIT_NOFILE`, which Node raises to the hard limit at
 * start), read from `/proc/self/limits`; undefined where that file does not exist (not Linux) or
 * says "unlimited".
 * @see getrlimit(2), proc(5) /proc/pid/limits
 */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+)/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * Whether `maxConnections` can hold under the open-file limit: each connection is a descriptor,
 * and past the limit accept() fails with EMFILE, which libuv answers by closing the connection
 * unread with nothing logged, so a raised bound would silently not apply.
 * @returns undefined when it fits (or the limit is unknown), else the limit and what is needed.
 */
export function descriptorShortfall(maxConnections: number, limit = openFileLimit()): { openFileLimit: number; needed: number } | undefined {
  const needed = maxConnections + DESCRIPTOR_HEADROOM;
  return limit !== undefined && needed > limit ? { openFileLimit: limit, needed } : undefined;
}
