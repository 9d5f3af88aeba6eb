// Test helper: a real redis-server (the Debian package) on 127.0.0.1, in a temp dir, with no
// persistence; it can be killed, paused and restarted on the same port to test outages.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';

/** A running redis-server under a test's control. */
export interface TestRedis {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** True while the process runs (a paused server still counts as running). */
  readonly running: boolean;
  /** Kills the server (SIGKILL by default) and waits for it to exit. Data is lost (no persistence). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port, empty; resolves once it accepts connections. */
  restart(): Promise<void>;
  /** Stops the process with SIGSTOP: connections stay open but nothing is answered (a hung server). */
  pause(): void;
  /** Continues a paused server (SIGCONT). */
  resume(): void;
}

/** A free TCP port on 127.0.0.1 (redis-server cannot bind port 0 and report it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function launch(port: number, dir: string, extraArgs: readonly string[]): Promise<ChildProcess> {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--loglevel',
    'notice',
    ...extraArgs,
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start: ${out}`));
    }, 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(timer);
        child.stdout?.removeListener('data', onData);
        child.stderr?.removeListener('data', onData);
        // Keep draining so a chatty server never blocks on a full pipe.
        child.stdout?.resume();
        child.stderr?.resume();
        child.removeListener('exit', onExit);
        resolve(child);
      }
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited ${code}: ${out}`));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts redis-server on a free loopback port in a fresh temp dir (`--save '' --appendonly no`),
 * stopped and removed in `t.after`.
 * @param extraArgs more redis-server options, e.g. `['--maxmemory', '10mb']`.
 */
export async function startRedis(t: { after(fn: () => void | Promise<void>): void }, extraArgs: readonly string[] = []): Promise<TestRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port, dir, extraArgs);
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c) return;
    // A stopped process does not act on SIGTERM until continued.
    c.kill('SIGCONT');
    c.kill(signal);
    await waitExit(c);
  };
  t.after(async () => {
    await stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get running() {
      return child !== undefined;
    },
    kill: (signal: NodeJS.Signals = 'SIGKILL') => stop(signal),
    async restart() {
      await stop('SIGKILL');
      child = await launch(port, dir, extraArgs);
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
  };
}

/** A pino logger whose JSON records land in `records`. */
export function recordingLog(records: Array<Record<string, unknown>> = []): { log: pino.Logger; records: Array<Record<string, unknown>> } {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) records.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, sink), records };
}
