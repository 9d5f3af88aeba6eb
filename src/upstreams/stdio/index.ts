// The stdio upstream: an MCP server run as a child process and shared by every client; the
// process side (spawn, restart, shutdown) and the MCP side (ids, routing, handshake) joined.

import { HeldCalls, type CallHolder } from '../../core/calls.js';
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
import type { MessageValidator } from '../../core/strict.js';

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
   * `upstreamRequestTimeoutMs` (how long a silent child has to answer a ping), parse bounds.
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
  held?: CallHolder;
  /** What each era sends (built by the composition root from dialects/). */
  eras: Pick<EraClients, 'stateless' | 'sessions'>;
  /**
   * The era to speak: `auto` (default) probes with `server/discover`; a revision pins it.
   * `match-client` is refused: one child is one connection, in one era.
   */
  era?: StdioEra | 'match-client';
  /** Hears every lifecycle change this upstream publishes (its supervisor; see src/upstreams/supervisor.ts). */
  onState?: (m: UpstreamStateMessage) => void;
  /** Strict mode's validator: what the upstream sends for a call or outside one, and what the gateway sends it, are checked against its revision's schema (its handshake is checked by the era clients: strictEraClients in core/strict.ts; docs/strict.md, "Upstreams"); absent when strict mode is off. */
  strict?: MessageValidator;
  /**
   * Where its lifecycle messages go (default `publishState`: the switchyard:upstream:* channels).
   * The runtime mutes a reload's new instance of a changed upstream here until the reload has kept
   * or replaced the running one, whose state and labels those messages would otherwise overwrite.
   */
  publish?: (m: UpstreamStateMessage) => void;
}

/**
 * Creates a stdio upstream. `start()` spawns the child and finds its era; a dead child is
 * restarted with backoff, and its in-flight requests fail with SWY_ERR_UPSTREAM_UNAVAILABLE.
 * A child that is alive but silent is treated as broken: when a call reaches its deadline
 * (SWY_ERR_REQ_DEADLINE) while the child wrote nothing on stdout, it is sent a `ping`; if it then
 * writes nothing within `upstreamRequestTimeoutMs` either, it is killed and restarted like one
 * that broke the protocol (its other calls fail with SWY_ERR_UPSTREAM_PROTOCOL; its supervisor
 * marks it down until the restart serves). Anything it writes (the ping's answer, any answer, a
 * notification, a request, a piece of a long line) shows it alive: a child whose one tool hangs is left alone.
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
  /**
   * Output the children wrote on stdout, all together (chunks, so that a long line still being
   * written counts before it is complete): a call compares it before and after.
   */
  let outputHeard = 0;
  /** Children spawned so far: a liveness check acts only on the child it began with. */
  let spawned = 0;
  /** True while a liveness check (a ping after a silent deadline) runs; one at a time. */
  let checking = false;
  const child = createChildSupervisor({
    argv,
    env: opts.env,
    cwd: opts.cwd,
    name,
    log: opts.log,
    limits: opts.limits,
    onLine: (line) => conn.onLine(line),
    onOutput: () => {
      outputHeard++;
    },
    // A subscription change refused for the stdin backlog goes again once the child has read it.
    onDrain: () => conn.drained(),
    onSpawn: () => {
      spawned++;
      return conn.handshake();
    },
    onExit: (err) => conn.onExit(err),
    onState: opts.onState,
    publish: opts.publish,
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
    strict: opts.strict,
  });
  /**
   * After a call reached its deadline with no output from the child: a `ping`, and up to
   * `upstreamRequestTimeoutMs` (ms) for any output at all (a piece of a line counts); none, and the child is killed (then
   * restarted by its supervisor). A ping that could not be sent (the child not reading its stdin,
   * its table of calls full) waits out the same time.
   * @see 2025-11-25 basic/utilities/ping; docs/upstreams.md (Silent children)
   */
  const checkAlive = async (): Promise<void> => {
    if (checking) return;
    checking = true;
    const child0 = spawned;
    const heard0 = outputHeard;
    const waitMs = opts.limits.upstreamRequestTimeoutMs;
    const started = performance.now();
    let notSent: string | undefined;
    try {
      notSent = await conn.ping(waitMs);
      const left = waitMs - (performance.now() - started);
      if (outputHeard === heard0 && child0 === spawned && left > 0) await new Promise((r) => setTimeout(r, left).unref());
    } finally {
      checking = false;
    }
    if (outputHeard === heard0 && child0 === spawned)
      child.kill(
        notSent !== undefined
          ? `a call reached its deadline with no output from the child, and it wrote nothing in the ${waitMs} ms after (the ping was not sent: ${notSent})`
          : `a call reached its deadline with no output from the child, and a ping got no answer within ${waitMs} ms`,
      );
  };
  return {
    name,
    get pid() {
      return child.pid;
    },
    start: () => child.start(),
    describe: () => conn.describe(),
    async request(ctx) {
      // A call whose client gave up (cancelled, or past its deadline) while a restart was under
      // way is not sent: the client was answered already, and may call again. The wait itself
      // ends when the signal aborts.
      await child.ready(ctx.signal);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const heardBefore = outputHeard;
      try {
        return await conn.request(ctx);
      } catch (err) {
        // Alive, reading, and silent: no exit and no broken line will ever tell, so a deadline
        // asks. A call the child wrote anything during is no evidence (it was busy, or this one tool hangs).
        if (deadlineReached(ctx.signal) && outputHeard === heardBefore) void checkAlive();
        throw err;
      }
    },
    subscribe: (filter, sink) => conn.subscribe(filter, sink),
    release: (sessionKey) => conn.release(sessionKey),
    close: (o) => child.stop(o?.stopStepMs),
  };
}
