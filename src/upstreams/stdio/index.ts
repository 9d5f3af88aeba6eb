// The stdio upstream: an MCP server run as a child process and shared by every client; the
// process side (spawn, restart, shutdown) and the MCP side (ids, routing, handshake) joined.

import { HeldCalls } from '../../core/calls.js';
import { deadlineReached } from '../../core/cancel.js';
import type { UpstreamStateMessage } from '../../core/diagnostics.js';
import type { CoreLog } from '../../core/exchange.js';
import type { EraClients } from '../../core/era.js';
import { SwitchyardError } from '../../core/errors.js';
import type { Limits } from '../../core/limits.js';
import type { Implementation } from '../../core/request.js';
import type { Upstream } from '../../core/upstream.js';
import { createStdioConnection, type StdioEra } from './connection.js';
import { createChildSupervisor, splitCommand } from './process.js';
import { argForDisplay } from '../../core/url-text.js';

export { childEnvironment, INHERITED_ENV_VARS, splitCommand } from './process.js';
export type { StdioEra } from './connection.js';

/** A stdio upstream; `pid` is the running child's process id (undefined while restarting). */
export interface StdioUpstream extends Upstream {
  readonly pid: number | undefined;
}

/** Options of a stdio upstream. */
export interface StdioOptions {
  /** The command line, split like a shell would (quotes, backslashes); not run through a shell. */
  command: string;
  /** argv to run instead of splitting `command` (config files give program and args apart). */
  argv?: string[];
  log: CoreLog;
  /**
   * Bounds: `upstream*` timeouts and backoff, `maxUpstreamMessageBytes`, `maxInFlightPerUpstream`,
   * `upstreamBreakerFailures` (silent deadlines before a restart), parse bounds.
   */
  limits: Limits;
  /** The gateway's own Implementation, sent when a client has none. */
  clientInfo: Implementation;
  /**
   * Variables for the child, over the allowlisted ones it inherits (HOME, LOGNAME, PATH, SHELL,
   * TERM, USER on POSIX): nothing else of the gateway's environment reaches it.
   */
  env?: Record<string, string>;
  /** Working directory of the child. */
  cwd?: string;
  /** Name in logs (default `stdio:<program>`). */
  name?: string;
  /** Holds calls waiting for a 2026 client's input (server requests from an initialize-era child). */
  held?: HeldCalls;
  /** What each era sends (built by the composition root from dialects/). */
  eras: Pick<EraClients, 'stateless' | 'sessions'>;
  /**
   * The era to speak: `auto` (default) probes with `server/discover`; a revision pins it.
   * `match-client` is refused: one child is one connection, in one era.
   */
  era?: StdioEra | 'match-client';
  /** Hears every lifecycle change this upstream publishes (its supervisor; see src/upstreams/supervisor.ts). */
  onState?: (m: UpstreamStateMessage) => void;
}

/**
 * Creates a stdio upstream. `start()` spawns the child and finds its era; a dead child is
 * restarted with backoff, and its in-flight requests fail with SWY_ERR_UPSTREAM_UNAVAILABLE.
 * A child that is alive but silent is treated as broken: after `upstreamBreakerFailures` calls in
 * a row reached their deadline (SWY_ERR_REQ_DEADLINE) while it wrote no line on stdout, it is
 * killed and restarted like one that broke the protocol (its other calls fail with
 * SWY_ERR_UPSTREAM_PROTOCOL; its supervisor marks it down until the restart serves). Any line it
 * writes (an answer, a notification, a request) starts that count over.
 * Resuming held calls is the executor's business, not the upstream's.
 * @see 2025-11-25 basic/transports#stdio (newline-delimited JSON-RPC, stderr is logging); docs/upstreams.md (Silent children)
 * @throws SwitchyardError SWY_ERR_CLI_USAGE (a command that does not split), SWY_ERR_CONFIG_INVALID (`era: match-client`)
 */
export function createStdioUpstream(opts: StdioOptions): StdioUpstream {
  const argv = opts.argv ?? splitCommand(opts.command);
  const name = opts.name ?? `stdio:${argForDisplay(argv[0])}`;
  const era = opts.era ?? 'auto';
  if (era === 'match-client')
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', {
      detail: `upstream ${name}: era match-client needs an HTTP upstream; a stdio child is one connection in one era`,
    });
  const held = opts.held ?? new HeldCalls(undefined, 1024, opts.limits.clientRequestTimeoutMs);
  /** Lines the children wrote on stdout, all together: a call compares it before and after. */
  let linesHeard = 0;
  /** Calls in a row that reached their deadline while the child wrote nothing; any line resets it. */
  let silentDeadlines = 0;
  const child = createChildSupervisor({
    argv,
    env: opts.env,
    cwd: opts.cwd,
    name,
    log: opts.log,
    limits: opts.limits,
    onLine: (line) => {
      linesHeard++;
      silentDeadlines = 0;
      conn.onLine(line);
    },
    onSpawn: () => {
      silentDeadlines = 0;
      return conn.handshake();
    },
    onExit: (err) => conn.onExit(err),
    onState: opts.onState,
  });
  const conn = createStdioConnection({
    name,
    fallbackName: argForDisplay(argv[0]),
    log: opts.log,
    limits: opts.limits,
    clientInfo: opts.clientInfo,
    held,
    eras: opts.eras,
    era,
    write: (line) => child.write(line),
    backlog: () => child.backlog(),
  });
  return {
    name,
    get pid() {
      return child.pid;
    },
    start: () => child.start(),
    describe: () => conn.describe(),
    async request(ctx) {
      await child.ready();
      const heardBefore = linesHeard;
      try {
        return await conn.request(ctx);
      } catch (err) {
        // Alive, reading, and silent: no exit and no broken line will ever tell, so the deadlines
        // do. A call the child wrote anything during is no evidence (it was busy, or this one tool hangs).
        if (deadlineReached(ctx.signal) && linesHeard === heardBefore && ++silentDeadlines >= opts.limits.upstreamBreakerFailures) {
          const n = silentDeadlines;
          silentDeadlines = 0;
          child.kill(`${n} calls in a row reached their deadline with no output from the child`);
        }
        throw err;
      }
    },
    subscribe: (filter, sink) => conn.subscribe(filter, sink),
    release: (sessionKey) => conn.release(sessionKey),
    close: (o) => child.stop(o?.stopStepMs),
  };
}
