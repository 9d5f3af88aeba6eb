// Test helper for the operations tests: the real `switchyard` command as a child process, as a user runs it: its mount
// URLs and admin URL read back from stderr, its JSON log records kept, stopped at teardown.

import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { CLI } from './cli.js';

/** A running CLI, with its admin listener. */
export interface RunningOpsCli {
  child: ChildProcess;
  /** Mount URLs by mount name (`default` for a flag-configured gateway). */
  urls: Record<string, string>;
  /** The first mount's URL. */
  url: string;
  /** The admin listener's base URL (`http://127.0.0.1:PORT/`), unless `--no-admin`. */
  admin: string | undefined;
  /** Every JSON log record so far, in order. */
  records: Array<Record<string, unknown>>;
  /** Resolves with the first record (from `from` on) that `match` accepts. */
  waitFor(match: (r: Record<string, unknown>) => boolean, from?: number): Promise<Record<string, unknown>>;
  /** Stops it with SIGTERM and resolves with its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `switchyard ARGS` and resolves once it listens (every mount line and, unless
 * `--no-admin`, the admin line printed). Killed at teardown if still running.
 * @param env extra environment variables.
 */
export async function startOpsCli(
  t: { after(fn: () => Promise<void> | void): void },
  args: string[],
  env: Record<string, string> = {},
): Promise<RunningOpsCli> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  const records: Array<Record<string, unknown>> = [];
  const urls: Record<string, string> = {};
  const waiters = new Set<() => void>();
  let admin: string | undefined;
  let mountLines = 0;
  let paths: number | undefined;
  let tail = '';
  let err = '';
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exited = code;
      resolve(code);
      for (const w of [...waiters]) w();
    }),
  );
  child.stderr.on('data', (d: Buffer) => {
    tail += d.toString('utf8');
    err += d.toString('utf8');
    let nl;
    while ((nl = tail.indexOf('\n')) >= 0) {
      const line = tail.slice(0, nl);
      tail = tail.slice(nl + 1);
      if (line.startsWith('{')) {
        const r = JSON.parse(line) as Record<string, unknown>;
        records.push(r);
        if (r.msg === 'listening' && Array.isArray(r.paths)) paths = r.paths.length;
      }
      const m = /^switchyard \S+ listening on (\S+)(?: \(([^)]+)\))?/.exec(line);
      if (m) {
        urls[m[2] !== undefined && !m[2].startsWith('HTTP+SSE') ? m[2] : 'default'] = m[1];
        mountLines++;
      }
      const a = /^switchyard admin listener on (\S+)/.exec(line);
      if (a) admin = a[1];
    }
    for (const w of [...waiters]) w();
  });
  t.after(async () => {
    if (exited === undefined) {
      child.kill('SIGKILL');
      await exit;
    }
  });
  const noAdmin = args.includes('--no-admin');
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (exited !== undefined) {
        waiters.delete(check);
        reject(new Error(`switchyard exited ${exited}: ${err}`));
      } else if (paths !== undefined && mountLines >= paths && (noAdmin || admin !== undefined)) {
        waiters.delete(check);
        resolve();
      }
    };
    waiters.add(check);
  });
  return {
    child,
    urls,
    url: Object.values(urls)[0],
    admin,
    records,
    waitFor(match, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = records.slice(from).find(match);
          if (hit) {
            waiters.delete(check);
            resolve(hit);
          } else if (exited !== undefined) {
            waiters.delete(check);
            reject(new Error(`switchyard exited ${exited} before the awaited log record: ${err.slice(-2000)}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    async stop() {
      if (exited === undefined) child.kill('SIGTERM');
      return exit;
    },
  };
}

/**
 * Writes `config` (JSON) over `file`, sends SIGHUP, and resolves once the reload was refused: the
 * summary record (`config reload failed; the running config stays`) and its `config reload
 * refused` records (one per failing place: `path`, `problem`), in order.
 */
export async function refusedReload(
  cli: RunningOpsCli,
  file: string,
  config: unknown,
): Promise<{ summary: Record<string, unknown>; refused: Array<Record<string, unknown>> }> {
  writeFileSync(file, JSON.stringify(config, null, 2));
  const from = cli.records.length;
  cli.child.kill('SIGHUP');
  const summary = await cli.waitFor((r) => r.msg === 'config reload failed; the running config stays', from);
  return { summary, refused: cli.records.slice(from).filter((r) => r.msg === 'config reload refused') };
}
