// Test helper: starts a real gateway on 127.0.0.1 port 0, with a logger that keeps records.

import { Writable } from 'node:stream';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { startGateway, type Gateway, type GatewayOptions } from '../../src/gateway.js';

/** The repository root (tests find files relative to it). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const require = createRequire(import.meta.url);

/**
 * Environment entries that keep V8 coverage out of a child running none of Switchyard's code, when
 * test/coverage-preload.cjs cannot tell from its command line (a script outside node_modules and the
 * plain test/fixtures/, a program started through a shell, `spawnSync`). That preload hands
 * NODE_V8_COVERAGE to every other child, even one given an explicit environment, unless that
 * environment names it; an empty value turns collection off. It saves the child's coverage counters
 * and the report's parsing of its file. Works in a stdio upstream's `env` too (the gateway spawns
 * with an explicit environment).
 */
export const NO_COVERAGE_ENV: Readonly<Record<string, string>> = Object.freeze({ NODE_V8_COVERAGE: '' });

/** The command line that runs server-everything over stdio with this Node binary. */
export function everythingStdioCommand(): string {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  return `"${process.execPath}" "${entry}" stdio`;
}

/** A started gateway plus the log records it wrote. */
export interface TestGateway extends Gateway {
  records: Array<Record<string, unknown>>;
}

/** A pino logger (level `SWITCHYARD_TEST_LOG`, default debug) that pushes each record into `records`. */
export function recordingLogger(records: Array<Record<string, unknown>>): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) records.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return pino({ level: process.env.SWITCHYARD_TEST_LOG ?? 'debug' }, sink);
}

/** Starts a gateway on 127.0.0.1:0 (defaults otherwise) and registers teardown with `after`. */
export async function gateway(
  t: { after(fn: () => Promise<void>): void },
  opts: Partial<GatewayOptions> = {},
  records: Array<Record<string, unknown>> = [],
): Promise<TestGateway> {
  const gw = await startGateway({ host: '127.0.0.1', port: 0, ...opts }, recordingLogger(records));
  t.after(() => gw.close());
  return Object.assign(gw, { records });
}
