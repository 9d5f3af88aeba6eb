// Child processes the bench starts: each in its own process group, all stopped on exit,
// on errors and on SIGINT/SIGTERM; listening sockets checked to be loopback-only.

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

const live = new Set();

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Stops every child still running (sync, SIGKILL): for process exit. */
export function killAllNow() {
  for (const c of live) killGroup(c, 'SIGKILL');
  live.clear();
}

let cleanupInstalled = false;
/** Installs exit/signal handlers once. `onAbort` runs before the process exits on a signal. */
export function installCleanup() {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping ${live.size} process(es)\n`);
      killAllNow();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    killAllNow();
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    killAllNow();
    process.exit(1);
  });
}

/** A free loopback TCP port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a process in its own group. stdout/stderr are kept in a bounded tail for errors.
 * @returns {{child, pid, startedAt: bigint, tail(): string, stop(): Promise<void>, exited: Promise<number|null>}}
 */
export function start(name, cmd, args, { env = {}, cwd } = {}) {
  const startedAt = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  live.add(child);
  let buf = '';
  const keep = (d) => {
    buf = (buf + d.toString()).slice(-8000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) =>
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    }),
  );
  child.once('error', (err) => keep(`spawn error: ${err.message}`));
  return {
    name,
    child,
    pid: child.pid,
    startedAt,
    exited,
    tail: () => buf,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(child, 'SIGTERM');
      const t = setTimeout(() => killGroup(child, 'SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
      // anything left in the group (children of children)
      killGroup(child, 'SIGKILL');
    },
  };
}

/** Resolves when `probe()` resolves truthy; polls every `everyMs` up to `timeoutMs`. */
export async function waitFor(probe, { timeoutMs = 20_000, everyMs = 20, what = 'condition', proc } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastErr;
  while (Date.now() < deadline) {
    if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) {
      throw new Error(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}) while waiting for ${what}:\n${proc.tail()}`);
    }
    try {
      const ok = await probe();
      if (ok) return ok;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${lastErr.message}` : ''}${proc ? `\n${proc.tail()}` : ''}`);
}

/** All pids in the process tree rooted at `pid` (from /proc). */
export function treePids(pid) {
  const parents = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!parents.has(ppid)) parents.set(ppid, []);
      parents.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const c of parents.get(out[i]) ?? []) out.push(c);
  return out;
}

let clkTck;
/** CPU time (user + system) used so far by a process tree, µs (from /proc, clock-tick resolution). */
export function treeCpuUs(pid) {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  let ticks = 0;
  for (const p of treePids(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
    } catch {
      // gone
    }
  }
  return (ticks * 1e6) / clkTck;
}

/** Resident set size of a process tree, KiB. */
export function treeRssKib(pid) {
  let kib = 0;
  for (const p of treePids(pid)) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kib += Number(m[1]);
    } catch {
      // gone
    }
  }
  return kib;
}

/** Throws unless every listening TCP socket of the tree rooted at `pid` is bound to loopback. */
export function assertLoopbackOnly(pid, name) {
  const inodes = new Set();
  for (const p of treePids(pid)) {
    try {
      for (const fd of readdirSync(`/proc/${p}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${p}/fd/${fd}`));
          if (m) inodes.add(m[1]);
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // gone
    }
  }
  const bad = [];
  let listening = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9])) continue; // 0A = LISTEN
      listening++;
      const addr = f[1].split(':')[0];
      const loop = addr === '0100007F' || addr === '00000000000000000000000001000000' || /^0000000000000000FFFF00000100007F$/i.test(addr);
      if (!loop) bad.push(`${file} ${f[1]}`);
    }
  }
  if (bad.length) throw new Error(`${name} listens beyond loopback: ${bad.join(', ')}`);
  return listening;
}
