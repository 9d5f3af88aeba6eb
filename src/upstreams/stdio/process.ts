// The stdio child process: spawned with an allowlisted environment, its stdout framed in bytes,
// restarted with backoff when it dies, and stopped in order (stdin, SIGTERM, SIGKILL).

import { LARGE_STRING_UNITS, type JsonBody } from '../../core/json-pieces.js';
import { LONG_STRING_BYTES, type JsonBytes } from '../../core/json-bytes.js';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import type { UpstreamStateMessage } from '../../core/diagnostics.js';
import type { CoreLog } from '../../core/exchange.js';
import { backoffDelayMs } from '../backoff.js';
import { publishState } from '../state.js';
import { operatorText, SwitchyardError } from '../../core/errors.js';
import type { Limits } from '../../core/limits.js';
import { afterLargeMessage } from '../../io/large-message.js';
import { LineSplitter } from '../../io/lines.js';
import { LineWriter } from '../../io/line-writer.js';
import { argForDisplay, argvForDisplay } from '../../core/url-text.js';

/** Longest stderr line kept for the log, bytes (longer ones are logged as cut). */
const MAX_STDERR_LINE_BYTES = 64 * 1024;
/** Characters of a stderr line that reach the log, and of the last one quoted when the child dies at start. */
const STDERR_EXCERPT = 2000;
/** Non-blank stderr lines kept to say why a child died at start (a Node crash's trailer is about 20). */
const STDERR_TAIL_LINES = 32;

/** Node's footer after an uncaught exception (`Node.js v20.20.2`), and the hint it prints above it for a thrown non-error. */
const CRASH_FOOTER = [/^Node\.js v\d+\.\d+\.\d+\s*$/, /^\(Use `node --trace-uncaught \.\.\.` to show where the exception was thrown\)\s*$/];
/** A stack frame (`    at Module._load (node:internal/…)`). */
const STACK_FRAME = /^\s+at\s/;
/**
 * What Node prints after an error's last stack frame: the thrown object's properties
 * (`  code: 'MODULE_NOT_FOUND',`, `  [cause]: Error: …`), values continued on their own lines
 * (`    '/srv/a.js',`), the frames of a nested cause, and lines of brackets alone (`}`).
 */
const ERROR_PROPERTIES = [/^\s+\[?[\w$]+\]?: /, /^\s+(['"`]).*\1,?\s*$/, /^[\s{}[\]()^~,]*$/, STACK_FRAME];

/**
 * The stderr line that says why a child died: the last of `tail` (non-blank lines, oldest first)
 * before Node's crash trailer, else the last line. A Node server that throws at start ends its
 * stderr with the error line (`Error: Cannot find module '…'`), then, for a module not found,
 * `Require stack:` and one `- /path` line per requiring module, then the stack frames, the error's
 * properties and the `Node.js v20.20.2` footer, which say nothing. Only that trailer is skipped,
 * read from the end: the footer; the properties, when stack frames come before them; the frames;
 * and `- ` lines only under a `Require stack:` line right above the frames. Anything else is the
 * reason, a child's own last words that merely look like a trailer line included (`- config
 * missing`, `  retry: never`).
 */
function stderrReason(tail: readonly string[]): string {
  let i = tail.length - 1;
  while (i >= 0 && CRASH_FOOTER.some((re) => re.test(tail[i]))) i--;
  // The properties and the frames above them, taken only when there is a frame among them.
  let j = i;
  let frames = false;
  while (j >= 0 && ERROR_PROPERTIES.some((re) => re.test(tail[j]))) {
    if (STACK_FRAME.test(tail[j])) frames = true;
    j--;
  }
  if (frames) {
    i = j;
    // MODULE_NOT_FOUND's message ends with its require stack, printed between the error line and the frames.
    let k = i;
    while (k >= 0 && /^- \S/.test(tail[k])) k--;
    if (k < i && k >= 0 && /^Require stack:\s*$/.test(tail[k])) i = k - 1;
  }
  return i >= 0 ? tail[i] : (tail.at(-1) ?? '');
}

/**
 * Variables a child inherits from the gateway: the MCP SDK's default list, so that a child finds
 * its tools and home but sees none of the gateway's secrets. The config's `env` adds to it.
 * @see MCP TypeScript SDK packages/client/src/client/stdio.ts DEFAULT_INHERITED_ENV_VARS
 */
export const INHERITED_ENV_VARS: readonly string[] =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'COMSPEC',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'PROGRAMDATA',
        'PROGRAMFILES',
        'PROGRAMFILES(X86)',
        'PROGRAMW6432',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
        'WINDIR',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/**
 * The environment of a child: the allowlisted variables of `from` (values that look like shell
 * functions, `()…`, are skipped as the SDK does), then `extra` over them.
 * @see MCP TypeScript SDK packages/client/src/client/stdio.ts getDefaultEnvironment()
 */
export function childEnvironment(extra: Readonly<Record<string, string>> = {}, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV_VARS) {
    const value = from[key];
    if (value === undefined || value.startsWith('()')) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Splits a command line into argv: whitespace separates words; single quotes keep text
 * literally; double quotes keep whitespace and allow `\"`; a backslash escapes one character.
 * @throws SwitchyardError SWY_ERR_CLI_USAGE on an unterminated quote or an empty command
 */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
    }
  }
  if (quote) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'unterminated quote in --stdio command' });
  if (has || cur) out.push(cur);
  if (out.length === 0) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'empty --stdio command' });
  return out;
}

/** The bounds a child process uses. */
export type ProcessLimits = Pick<
  Limits,
  'maxUpstreamMessageBytes' | 'upstreamBackoffMinMs' | 'upstreamBackoffMaxMs' | 'upstreamStableAfterMs' | 'upstreamStopTimeoutMs' | 'upstreamStartTimeoutMs'
>;

/** How a child is run, and who hears from it. */
export interface ChildOptions {
  /** Program and arguments (no shell runs them). */
  argv: readonly string[];
  /** Variables set over the allowlisted ones. */
  env?: Readonly<Record<string, string>>;
  /** Working directory. */
  cwd?: string;
  /** Name in logs. */
  name: string;
  log: CoreLog;
  limits: ProcessLimits;
  /**
   * Each complete stdout line, as bytes without its `\n` (so that decoding never splits a
   * character): one buffer, or a long line (`LONG_STRING_BYTES` and more) as the chunks it arrived in.
   */
  onLine(line: JsonBytes): void;
  /**
   * Hears every chunk the child writes on stdout, before its lines (if any) go to `onLine`: a
   * child in the middle of a long line is writing, though no line is complete yet.
   */
  onOutput?: () => void;
  /**
   * Hears the running child's stdin drain (its 'drain' event: it had asked the writer to wait, and
   * has taken everything written since), once the writer's own answer to it (the next pieces of a
   * large line, the lines behind it) is written: its backlog may be under its bound again.
   */
  onDrain?: () => void;
  /** Runs after every spawn (the handshake); the child serves once it resolves, with the revision it speaks. */
  onSpawn(): Promise<string>;
  /** The child is gone (exit, spawn failure, kill): everything in flight fails with `err`. */
  onExit(err: SwitchyardError): void;
  /** Hears every lifecycle change published for this child (its supervisor). */
  onState?: (m: UpstreamStateMessage) => void;
  /**
   * Where its lifecycle messages go (default `publishState`: the switchyard:upstream:* channels).
   * The runtime mutes a reload's new instance of a changed upstream here until the reload has kept
   * or replaced the running one, whose state and labels those messages would otherwise overwrite.
   */
  publish?: (m: UpstreamStateMessage) => void;
  /** Source of restart jitter in [0, 1) (default `Math.random`). */
  random?: () => number;
}

/** A supervised child: one at a time, restarted with backoff after it served. */
export interface ChildSupervisor {
  /** The running child's process id (undefined while restarting). */
  readonly pid: number | undefined;
  /**
   * Spawns the child and runs `onSpawn`. A child that cannot start is not restarted.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE (the command and the spawn error, or the exit status; the last stderr
   *   line only in its `operatorMessage`)
   */
  start(): Promise<void>;
  /**
   * Resolves when a child serves; during a restart waits up to `upstreamStartTimeoutMs`, or until
   * `signal` aborts (then rejects with its reason at once: a call whose client gave up waits no more).
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE; `signal.reason` when it aborted
   */
  ready(signal?: AbortSignal): Promise<void>;
  /** Writes one line (`\n` appended): one string, or the pieces of a large message; false when no child can take it. */
  write(line: JsonBody): boolean;
  /** Bytes written to the child's stdin that it has not read yet (0 without a child). */
  backlog(): number;
  /** Kills the running child (it broke the protocol); it is restarted as after a crash. */
  kill(reason: string): void;
  /**
   * Ordered shutdown: stdin closed, SIGTERM after `stepMs` (default `upstreamStopTimeoutMs`),
   * SIGKILL after twice that; resolves when the child exited, or after three times that.
   */
  stop(stepMs?: number): Promise<void>;
}

/** Children running now, of every supervisor in this process. */
const liveChildren = new Set<ChildProcessWithoutNullStreams>();
let exitHookSet = false;

/**
 * Registers a running child so that it does not outlive this process: on `process.exit` (and a
 * normal end) every child still running gets SIGKILL, synchronously, as the 'exit' event allows.
 * A gateway that exits before an ordered stop finished (a second signal while shutting down)
 * would otherwise leave a child that ignores stdin EOF running as an orphan. A gateway killed by
 * a signal it does not handle, or by SIGKILL, runs no hook (docs/upstreams.md, Shutdown).
 */
function track(c: ChildProcessWithoutNullStreams): void {
  liveChildren.add(c);
  c.once('exit', () => liveChildren.delete(c));
  if (exitHookSet) return;
  exitHookSet = true;
  process.once('exit', () => {
    for (const child of liveChildren) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Why a spawn failed, in words: for a client without the program (`cannot run the command:
 * ENOENT (command not found)`), and with it, as {@link argForDisplay} shows it, for the operator
 * (`operatorDetail`: the log, `lastError`, the CLI's start-failure line). The gateway host's paths
 * are the operator's, as an HTTP upstream's address is (docs/security.md, threat model).
 */
function spawnFailure(argv0: string, err: NodeJS.ErrnoException, cwd: string | undefined): SwitchyardError {
  const hint =
    err.code === 'ENOENT'
      ? cwd === undefined
        ? ' (command not found)'
        : ' (command not found, or no such working directory)'
      : err.code === 'EACCES'
        ? ' (not executable)'
        : '';
  // A relative path (`./server.sh`, `../bin/srv`) runs from the child's working directory, not
  // from PATH nor beside the config file: the operator is told which directory that was (the
  // client is not: the gateway host's paths are the operator's).
  const relative = err.code === 'ENOENT' && !path.isAbsolute(argv0) && /[/\\]/.test(argv0);
  const operatorHint = relative
    ? ` (a relative command runs from the child's working directory, ${cwd ?? process.cwd()}: no such file there${cwd === undefined ? '' : ', or no such directory'}; give an absolute path, or set \`cwd\`, which is relative to the config file)`
    : hint;
  const why = `${err.code ?? 'spawn failed'}${hint}`;
  return new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
    detail: `cannot run the command: ${why}`,
    operatorDetail: `cannot run ${argForDisplay(argv0)}: ${err.code ?? err.message}${operatorHint}`,
  });
}

/**
 * Runs the child `o` describes. `start` spawns it and waits for `onSpawn`; after it served,
 * a child that exits is restarted after a backoff with jitter (see {@link backoffDelayMs}:
 * `upstreamBackoffMinMs`, doubling up to `upstreamBackoffMaxMs`, starting over after
 * `upstreamStableAfterMs` of uptime).
 * @see 2025-11-25 basic/transports#stdio (stderr is logging, not a failure signal); MCP SDK client stdio.ts (ordered shutdown)
 */
export function createChildSupervisor(o: ChildOptions): ChildSupervisor {
  const { log, limits } = o;
  const shownArgv = argvForDisplay(o.argv);
  const toChannels = o.publish ?? publishState;
  const publish = (m: UpstreamStateMessage) => {
    toChannels(m);
    o.onState?.(m);
  };
  let child: ChildProcessWithoutNullStreams | undefined;
  /** The running child's stdin, line by line (a large line in pieces, with backpressure). */
  let stdin: LineWriter | undefined;
  let serving = false;
  let stopping = false;
  let served = false;
  /** Restarts since the child last ran stably (the backoff exponent). */
  let restarts = 0;
  let startedAt = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  /** Settles when the child being started serves (or its start failed). */
  let starting: Promise<void> | undefined;
  /** The child's last non-blank stderr lines, oldest first (at most STDERR_TAIL_LINES). */
  let stderrTail: string[] = [];
  /** Children stopped by `kill` for breaking the protocol, with the reason. */
  const brokeProtocol = new WeakMap<ChildProcessWithoutNullStreams, string>();

  const launch = (): Promise<void> => {
    let c: ChildProcessWithoutNullStreams;
    try {
      c = spawn(o.argv[0], o.argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: childEnvironment(o.env), cwd: o.cwd });
    } catch (err) {
      return Promise.reject(spawnFailure(o.argv[0], err as NodeJS.ErrnoException, o.cwd));
    }
    child = c;
    if (c.pid !== undefined) track(c);
    // A large line is at least LARGE_STRING_UNITS bytes (a JsonPieces message holds a string that long).
    stdin = new LineWriter(c.stdin, LARGE_STRING_UNITS);
    startedAt = Date.now();
    stderrTail = [];
    publish({ upstream: o.name, state: 'spawn', transport: 'stdio' });
    // A long line stays in the chunks it arrived in (each its own buffer): never joined into one more copy.
    const out = new LineSplitter(limits.maxUpstreamMessageBytes, { partsFrom: LONG_STRING_BYTES });
    c.stdout.on('data', (chunk: Buffer) => {
      o.onOutput?.();
      for (const ev of out.push(chunk)) {
        if (ev.kind === 'line') o.onLine(ev.bytes);
        else if (ev.kind === 'long-line') {
          o.onLine(ev.parts);
          afterLargeMessage(ev.length);
        } else {
          log.error({ upstream: o.name, maxBytes: limits.maxUpstreamMessageBytes }, 'upstream sent an invalid message');
          if (child === c) kill(`a stdout line over maxUpstreamMessageBytes (${limits.maxUpstreamMessageBytes} bytes)`);
        }
      }
    });
    // A child whose stdout ended can never answer again: one that goes on running (it closed
    // fd 1, or its output broke) would hold every call until its deadline, and never be
    // restarted. It gets upstreamStopTimeoutMs to exit by itself (an exiting child's stdout
    // ends first), then is killed and restarted like one that broke the protocol.
    c.stdout.once('end', () => {
      if (child !== c || stopping) return;
      const t = setTimeout(() => {
        if (child === c && !stopping && c.exitCode === null && c.signalCode === null) kill('it closed its stdout');
      }, limits.upstreamStopTimeoutMs);
      t.unref();
      c.once('exit', () => clearTimeout(t));
    });
    const err = new LineSplitter(MAX_STDERR_LINE_BYTES);
    c.stderr.on('data', (chunk: Buffer) => {
      for (const ev of err.push(chunk)) {
        // stderr is logging, not a failure signal (basic/transports#stdio).
        const line = ev.kind === 'line' ? ev.bytes.toString('utf8').slice(0, STDERR_EXCERPT) : `(a stderr line over ${MAX_STDERR_LINE_BYTES} bytes)`;
        if (line.trim() !== '') {
          stderrTail.push(line);
          if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
        }
        log.debug({ upstream: o.name, line }, 'upstream stderr');
      }
    });
    c.stdin.on('error', () => {});
    // After the writer's own drain listeners (registered later, as its lines need them) have run.
    c.stdin.on('drain', () => setImmediate(() => child === c && o.onDrain?.()));
    let failStart!: (e: SwitchyardError) => void;
    const died = new Promise<never>((_, reject) => (failStart = reject));
    died.catch(() => {});
    c.once('error', (e: NodeJS.ErrnoException) => {
      // Spawn failures come here (ENOENT, EACCES), and the child never runs.
      const why =
        c.pid === undefined
          ? spawnFailure(o.argv[0], e, o.cwd)
          : new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
              detail: `the command failed (${e.code ?? 'error'})`,
              operatorDetail: `${argForDisplay(o.argv[0])}: ${e.message}`,
            });
      failStart(why);
      if (c.pid === undefined) gone(c, why, null, null);
    });
    c.once('exit', (code, signal) => {
      const status = signal ?? code;
      // The last stderr line usually says why (Node's crash trailer skipped), and may say it with a secret (`token=… rejected`):
      // it is the operator's (the log, /status.json, the CLI's last line), never a client's
      // (basic/transports#stdio: stderr is for logging), so it stays out of the message.
      const exited = new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `child exited during start (${status})` });
      const reason = stderrReason(stderrTail);
      failStart(
        reason
          ? new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
              message: exited.message,
              operatorMessage: `${exited.message}; last stderr line: ${reason.slice(0, 200)}`,
            })
          : exited,
      );
      // A child we stopped for breaking the protocol fails its calls with that, not with its exit.
      const broke = brokeProtocol.get(c);
      const why =
        broke !== undefined && !stopping
          ? new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `${broke}; the child was stopped and is restarted` })
          : new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: stopping ? 'shutting down' : `child exited (${status})` });
      gone(c, why, code, signal);
    });
    return Promise.race([o.onSpawn(), died]).then((revision) => {
      if (child !== c) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'child exited during start' });
      serving = true;
      served = true;
      publish({ upstream: o.name, state: 'ready', revision, transport: 'stdio' });
    });
  };

  /** Child `c` is gone: fail what it had, and restart it unless stopping or it never served. */
  const gone = (c: ChildProcessWithoutNullStreams, why: SwitchyardError, code: number | null, signal: NodeJS.Signals | null) => {
    if (child !== c) return;
    child = undefined;
    stdin = undefined;
    serving = false;
    publish({ upstream: o.name, state: 'down', transport: 'stdio', error: why });
    o.onExit(why);
    if (stopping || !served) return;
    log.error({ upstream: o.name, code, signal }, 'upstream exited');
    if (Date.now() - startedAt > limits.upstreamStableAfterMs) restarts = 0;
    const delay = backoffDelayMs(restarts++, limits.upstreamBackoffMinMs, limits.upstreamBackoffMaxMs, o.random);
    log.info({ upstream: o.name, delayMs: delay }, 'upstream restarting');
    let settle!: () => void;
    starting = new Promise<void>((r) => (settle = r));
    restartTimer = setTimeout(() => {
      launch().then(settle, (err: unknown) => {
        // An expected event, said once as text (its exit, if any, is logged by `gone`): no stack.
        log.warn({ upstream: o.name, err: operatorText(err) }, 'upstream restart failed');
        // A child that runs but failed its handshake is stopped, and so restarted again.
        if (child) kill('its handshake failed');
        settle();
      });
    }, delay);
    restartTimer.unref();
  };

  const kill = (reason: string) => {
    const c = child;
    if (!c) return;
    brokeProtocol.set(c, reason);
    log.warn({ upstream: o.name, reason }, 'upstream killed');
    c.kill('SIGKILL');
  };

  return {
    get pid() {
      return child?.pid;
    },
    async start() {
      // Arguments may carry credentials (a database URL, `--api-key=…`): they are logged redacted.
      log.info({ upstream: o.name, argv: shownArgv }, 'upstream starting');
      starting = launch();
      try {
        await starting;
      } catch (err) {
        // A child that cannot start is not restarted: the gateway fails to start instead.
        stopping = true;
        clearTimeout(restartTimer);
        child?.kill('SIGKILL');
        throw err;
      }
    },
    async ready(signal) {
      if (signal?.aborted) throw signal.reason;
      if (serving) return;
      if (!starting || stopping) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: stopping ? 'shutting down' : 'not started' });
      let t: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<void>((r) => signal?.addEventListener('abort', (onAbort = () => r()), { once: true }));
      await Promise.race([starting.catch(() => {}), new Promise<void>((r) => (t = setTimeout(r, limits.upstreamStartTimeoutMs))), aborted]);
      clearTimeout(t);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) throw signal.reason;
      if (!serving) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'child is restarting' });
    },
    write(line) {
      const c = child;
      if (!c || !stdin || c.stdin.destroyed || !c.stdin.writable) return false;
      // A large message goes piece by piece as the pipe takes it: never one string, nor one buffer, of the whole line.
      return stdin.write(line);
    },
    backlog() {
      const c = child;
      return c && stdin && !c.stdin.destroyed ? stdin.backlog : 0;
    },
    kill,
    async stop(stepMs?: number) {
      stopping = true;
      clearTimeout(restartTimer);
      const c = child;
      // A child that never started (spawn failed) or already exited has nothing to stop.
      if (!c || c.pid === undefined || c.exitCode !== null || c.signalCode !== null) {
        if (c) gone(c, new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'shutting down' }), null, null);
        return;
      }
      // Ordered shutdown, as the MCP SDK's stdio client does: close stdin, then SIGTERM, then SIGKILL.
      // Each escalation is a warn with the time waited since stdin was closed: a child that
      // ignores EOF (or SIGTERM) costs every stop that long, and only the log says why.
      const step = stepMs ?? limits.upstreamStopTimeoutMs;
      const endedAt = Date.now();
      const escalate = (signal: 'SIGTERM' | 'SIGKILL') => {
        log.warn({ upstream: o.name, pid: c.pid, signal, waitedMs: Date.now() - endedAt }, 'upstream stop escalated');
        c.kill(signal);
      };
      await new Promise<void>((resolve) => {
        const t1 = setTimeout(() => escalate('SIGTERM'), step);
        const t2 = setTimeout(() => escalate('SIGKILL'), 2 * step);
        // Bounded: a child whose SIGKILL is not reaped does not hold shutdown.
        const t3 = setTimeout(() => done(), 3 * step);
        const done = () => {
          clearTimeout(t1);
          clearTimeout(t2);
          clearTimeout(t3);
          resolve();
        };
        c.once('exit', done);
        // After the line being written, if any (it is not cut in half).
        if (stdin && child === c) stdin.end();
        else c.stdin.end();
      });
      gone(c, new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'shutting down' }), null, null);
    },
  };
}
