// The client-fallback emulator (src/emulate) in a test: in process, on loopback, cleaned up after.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startEmulator, type EmulateOptions, type Emulator } from '../../src/emulate/index.js';
import { CLI } from './cli.js';

/**
 * Starts an emulator on 127.0.0.1 at a port the OS picks, logging nothing, with its request lines
 * (JSON lines, `EmulateOptions.logFile`) in a file of a new temp directory; closes it and removes
 * the directory after the test.
 * @param o the emulator's other options (era, knobs, limits).
 * @returns the emulator and the path of its request lines.
 */
export async function testEmulator(
  t: { after(fn: () => Promise<void>): void },
  o: Omit<EmulateOptions, 'host' | 'port' | 'log' | 'logFile'>,
): Promise<{ emu: Emulator; logFile: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'emulate-'));
  const logFile = path.join(dir, 'requests.jsonl');
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), logFile, ...o });
  t.after(async () => {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { emu, logFile };
}

/** `p`, or a rejection naming `what` after `ms` ms (every client step of the emulate tests is bounded). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * `switchyard emulate --port 0 …args` as a real process, once it logged its `emulating … on URL`
 * line (15 s at most); killed after the test if still running. `stop()` sends SIGINT and resolves
 * with its stdout (the report) and exit code (10 s at most).
 */
export async function emulateProcess(
  t: { after(fn: () => Promise<void>): void },
  args: string[],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<{ stdout: string; code: number | null }> }> {
  const child = spawn(process.execPath, [CLI, 'emulate', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = await within(
    new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const m = /emulating \S+ on (http:\/\/\S+)/.exec(stderr);
        if (m) resolve(m[1]);
      });
      child.on('exit', () => reject(new Error(`emulate exited: ${stderr}`)));
    }),
    15_000,
    'emulate start',
  );
  return {
    url,
    child,
    async stop() {
      child.kill('SIGINT');
      const code = await within(exited, 10_000, 'emulate stop');
      return { stdout, code };
    },
  };
}
