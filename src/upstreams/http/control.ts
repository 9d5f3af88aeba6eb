// The gateway's own (control) upstream session of a session-era connector, opened again when the
// upstream loses it: one rule for 2025 Streamable HTTP and 2024-11-05 HTTP+SSE, which HTTP+SSE also
// applies to a client's session with subscribers.

import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreLog } from '../../core/exchange.js';
import type { Limits } from '../../core/limits.js';
import type { NotificationHub } from '../../core/upstream.js';
import { backoffDelayMs } from '../backoff.js';
import { networkErrorText } from './transport.js';

/**
 * Tells `hub`'s subscribers every list may have changed (tools, prompts, resources): an upstream
 * that lost a session forgot what it had told us, so its list-changed notifications in between
 * are lost too (the list cache drops what it holds on them).
 */
export function listsMayHaveChanged(hub: NotificationHub): void {
  for (const list of ['tools', 'prompts', 'resources']) hub.emit({ method: `notifications/${list}/list_changed`, params: {} });
}

/** What {@link createControlReopener} is built with. */
export interface ControlReopenerOptions<S> {
  log: CoreLog;
  /** The upstream's name, on every log line. */
  name: string;
  /** `upstreamBackoffMinMs` and `upstreamBackoffMaxMs` (ms): the delays between attempts. */
  limits: Pick<Limits, 'upstreamBackoffMinMs' | 'upstreamBackoffMaxMs'>;
  /** Opens a new control session (initialize and all); throws when the upstream cannot open one. */
  open: () => Promise<S>;
  /** Takes the new session in: it becomes the control session, its subscriptions are sent again, its stream opened. */
  reopened: (s: S) => void;
  /** Ends a session opened while the connector was closing. */
  end: (s: S) => void;
  /** The subscribers (gateway-wide, or a client's), told every list may have changed once the new session is in. */
  hub: () => NotificationHub | undefined;
  /**
   * Which session, as its lines say it (`session` of the loss line) and how they name it:
   * `control` (the default: `upstream control session did not reopen` / `… reopened`), or a
   * client's session (its pool key for logs: `upstream session did not reopen` / `… reopened`).
   */
  session?: string;
}

/** Reopens the control session: `lost()` when the upstream lost it, `close()` when the connector closes. */
export interface ControlReopener {
  /** The upstream lost the control session: opens a new one (once, however often it is called while reopening). */
  lost(): void;
  /** Stops any reopening now (a backoff wait included); a session it opens afterwards is ended. */
  close(): void;
  /** The reopening under way, if any (tests and close wait for it). */
  readonly pending: Promise<void> | undefined;
}

/**
 * The control session's reopening after the upstream lost it (its stream ended, or it answered
 * that it no longer knows the session): a new session at once, then, while the upstream cannot
 * open one, again after a bounded backoff with jitter (`upstreamBackoffMinMs` doubling up to
 * `upstreamBackoffMaxMs`), until it opens or the connector closes. Logs once per loss (info
 * `upstream session lost: opening a new one`, `session: control`), once at warn when the first
 * attempt fails (`upstream control session did not reopen`; later failures at debug, so an
 * upstream down for hours writes no flood) and once per recovery (info `upstream control session
 * reopened`, with `attempts`). Once the new session is in (`reopened`), gateway-wide subscribers
 * are told every list may have changed ({@link listsMayHaveChanged}). A session lost again within
 * `upstreamBackoffMaxMs` of reopening (an upstream that drops every new stream, or forgets every
 * new session) counts as a failed attempt: the next one waits its backoff first, the delays go on
 * growing, and that loss and recovery are said at debug, so a flapping upstream costs neither a
 * tight loop of handshakes nor two info lines per turn.
 * @see 2025-11-25 basic/transports#session-management (404: start a new session); 2024-11-05 basic/transports (HTTP with SSE)
 */
export function createControlReopener<S>(o: ControlReopenerOptions<S>): ControlReopener {
  const stop = new AbortController();
  let pending: Promise<void> | undefined;
  /** Losses in a row, each within upstreamBackoffMaxMs of the reopening before it (0: a first loss). */
  let streak = 0;
  /** When the control session last reopened (ms since the epoch). */
  let reopenedAt = -Infinity;
  const session = o.session ?? 'control';
  const which = session === 'control' ? 'upstream control session' : 'upstream session';
  const run = async (first: number): Promise<void> => {
    // Said once at warn; the retries of a longer outage (every upstreamBackoffMaxMs at most) at debug.
    let said = false;
    for (let attempt = first; !stop.signal.aborted; attempt++) {
      if (attempt > 0)
        await sleep(backoffDelayMs(attempt - 1, o.limits.upstreamBackoffMinMs, o.limits.upstreamBackoffMaxMs), undefined, {
          signal: stop.signal,
          ref: false,
        }).catch(() => {});
      if (stop.signal.aborted) return;
      let s: S;
      try {
        s = await o.open();
      } catch (err) {
        if (stop.signal.aborted) return;
        o.log[said ? 'debug' : 'warn']({ upstream: o.name, err: networkErrorText(err) }, `${which} did not reopen`);
        said = true;
        continue;
      }
      if (stop.signal.aborted) return o.end(s);
      o.reopened(s);
      reopenedAt = Date.now();
      o.log[first === 0 ? 'info' : 'debug']({ upstream: o.name, session, attempts: attempt - first + 1 }, `${which} reopened`);
      const hub = o.hub();
      if (hub) listsMayHaveChanged(hub);
      return;
    }
  };
  return {
    lost() {
      if (stop.signal.aborted || pending) return;
      streak = Date.now() - reopenedAt < o.limits.upstreamBackoffMaxMs ? streak + 1 : 0;
      o.log[streak === 0 ? 'info' : 'debug']({ upstream: o.name, session }, 'upstream session lost: opening a new one');
      pending = run(streak).finally(() => (pending = undefined));
    },
    close() {
      stop.abort();
    },
    get pending() {
      return pending;
    },
  };
}
