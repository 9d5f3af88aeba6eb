// Test helper: the real `switchyard` command as a child process on 127.0.0.1 port 0.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import path from 'node:path';
import { REPO_ROOT } from './gateway.js';

/** The built CLI entry point. */
export const CLI = path.join(REPO_ROOT, 'dist/src/cli/main.js');

/** A `switchyard` process as {@link spawnCli} gives it: started, not yet known to listen (or ever to). */
export interface SpawnedCli {
  child: ChildProcess;
  /** Start-up lines and JSON log lines written so far. */
  stderr(): string;
  stdout(): string;
  /** Log records (JSON lines of stderr) written so far. */
  records(): Array<Record<string, unknown>>;
  /** The other lines of stderr written so far, blank ones left out: the `listening on` lines, a failed start's one line. */
  lines(): string[];
  /** Resolves with the exit code once the process exited and its stdout and stderr were read to their end. */
  exited: Promise<number | null>;
  /** Sends `signal` and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A running `switchyard`: {@link SpawnedCli} once its first mount listens. */
export interface RunningCli extends SpawnedCli {
  /** The first mount's URL from the start-up line (`http://127.0.0.1:PORT/mcp`). */
  url: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
}

/** How {@link spawnCli} runs the command. */
export interface SpawnCliOptions {
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /**
   * Put `--port 0` before `args`, and `--admin-port 0` unless `args` choose one or `--no-admin`
   * (default true); false runs `args` as given, e.g. a `--config` whose file sets the ports.
   */
  freePorts?: boolean;
}

/**
 * Starts `node dist/src/cli/main.js ...args` and returns at once, without waiting for anything:
 * for a start that is slow, or that fails (its `exited` and `lines()` then tell how). The process
 * is killed in `t.after` if it is still running.
 */
export function spawnCli(t: { after(fn: () => void | Promise<void>): void }, args: readonly string[], o: SpawnCliOptions = {}): SpawnedCli {
  const admin = o.freePorts === false || args.includes('--no-admin') || args.includes('--admin-port') ? [] : ['--admin-port', '0'];
  const ports = o.freePorts === false ? [] : ['--port', '0', ...admin];
  const child = spawn(process.execPath, [CLI, ...ports, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? process.env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // 'close', not 'exit': the last lines written before the exit may still be in the pipe then.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const all = () => err.split('\n').filter((l) => l !== '');
  return {
    child,
    stderr: () => err,
    stdout: () => out,
    records: () =>
      all()
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    lines: () => all().filter((l) => !l.startsWith('{')),
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Starts `node dist/src/cli/main.js --port 0 ...args` ({@link spawnCli}) and waits for its first
 * `listening on` line (20 s at most). Its admin listener takes a free port too (`--admin-port 0`)
 * unless `args` choose one or `--no-admin`. A start that is slow or fails: {@link spawnCli}.
 */
export async function startCli(t: { after(fn: () => void | Promise<void>): void }, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<RunningCli> {
  const cli = spawnCli(t, args, env ? { env } : {});
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s: ${cli.stderr()}`)), 20_000);
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(cli.stderr());
      if (m) {
        clearTimeout(timer);
        cli.child.stderr!.off('data', look);
        resolve(m[1]);
      }
    };
    cli.child.stderr!.on('data', look);
    void cli.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before listening: ${cli.stderr()}`));
    });
  });
  const u = new URL(url);
  return { ...cli, url, origin: u.origin, port: Number(u.port) };
}

/**
 * Runs `switchyard validate FILE` on a temporary file `name` holding `text` (removed at teardown).
 * Resolves with the exit code, stdout and the file's path.
 */
export async function validateFile(t: { after(fn: () => void): void }, name: string, text: string): Promise<{ code: number; stdout: string; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-validate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return promisify(execFile)(process.execPath, [CLI, 'validate', file]).then(
    (r) => ({ code: 0, stdout: r.stdout, file }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout, file }),
  );
}

/** Whether `pid` runs (a zombie, dead but not yet reaped by whoever adopted it, does not). Linux. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // Linux: the state follows the command name in parentheses.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Waits up to `ms` (default 1,000) for `pid` to be gone; resolves whether it still runs. */
export async function stillAlive(pid: number, ms = 1_000): Promise<boolean> {
  for (const end = Date.now() + ms; alive(pid) && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  return alive(pid);
}

/** A `switchyard` process whose start waits on a stdio child that never answers it. */
export interface StartingCli {
  child: ChildProcess;
  /** The exit code and signal, once it exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The stubborn child's pid (it said so on its stderr, which the gateway logs at debug). */
  childPid: number;
  stdout(): string;
  stderr(): string;
  /** Log records (JSON lines of stderr) written so far. */
  records(): Array<Record<string, unknown>>;
}

/**
 * Starts `node dist/src/cli/main.js ...args --log-level debug --stdio "<stubborn-server> hang-start"`:
 * a stdio child that never answers its start and ignores EOF (test/fixtures/stubborn-server.mjs),
 * and resolves once the child said its pid, while the start still waits on it. stdin is a pipe
 * (`--serve-stdio` reads it). At teardown the process and the child are killed if they still run.
 */
export async function startOnStubbornChild(t: { after(fn: () => void | Promise<void>): void }, args: readonly string[]): Promise<StartingCli> {
  const stubborn = path.join(REPO_ROOT, 'test/fixtures/stubborn-server.mjs');
  const child = spawn(process.execPath, [CLI, ...args, '--log-level', 'debug', '--stdio', `"${process.execPath}" "${stubborn}" hang-start`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const pidSeen = new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      const m = /"line":"pid (\d+)"/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`exited before the child started: ${err}`)));
  });
  const seen: { pid?: number } = {};
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    if (seen.pid !== undefined && alive(seen.pid)) process.kill(seen.pid, 'SIGKILL');
  });
  const childPid = (seen.pid = await pidSeen);
  return {
    child,
    exited,
    childPid,
    stdout: () => out,
    stderr: () => err,
    records: () =>
      err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
