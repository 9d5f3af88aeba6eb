// The one scheduler of an upstream connection's or session's resource subscriptions: stdio
// children, HTTP+SSE sessions and 2025 Streamable HTTP sessions send their `resources/subscribe`
// and `resources/unsubscribe` through it, one at a time.

import type { CoreLog } from '../core/exchange.js';
import { argForDisplay } from '../core/url-text.js';

/**
 * URIs one upstream connection or session keeps subscribed at most. The wants that reach it are
 * bounded already (at most `MAX_SUBSCRIBED_URIS` per subscriber, subscribers by `maxSubscriptions`
 * and `maxSessions`), but not by one number this small: past it a newly wanted URI is not
 * subscribed upstream ({@link SubscriptionSyncOptions.atBound}).
 */
export const MAX_UPSTREAM_SUBSCRIBED_URIS = 16_384;

/** What a {@link SubscriptionSync} is built with. */
export interface SubscriptionSyncOptions {
  /** Whether any subscriber wants `uri` now; read when the URI's turn comes, never before. */
  wanted(uri: string): boolean;
  /**
   * Sends one change: `resources/subscribe` for `subscribe` true, `resources/unsubscribe` for false.
   * Settles once the change was answered or failed; the next change waits for it. A rejection
   * goes to {@link failed}; the change is not retried.
   */
  send(uri: string, subscribe: boolean): Promise<unknown>;
  /**
   * False while nothing can be sent (a stdio child between restarts, or one that takes a
   * `subscriptions/listen` instead): a URI whose turn comes then is passed over, and
   * {@link SubscriptionSync.resync} sends it once there is a connection. Default: always true.
   */
  ready?(): boolean;
  /** A change whose `send` rejected (not called once the sync stopped, nor for one {@link notSent} says never left). Default: nothing. */
  failed?(uri: string, subscribe: boolean, err: unknown): void;
  /**
   * A change {@link notSent} says never left: it waits for another turn. Called for the first
   * such change of a walk only; the later ones of that walk wait without being tried (they would
   * be refused the same way), so that a connection kept full does not have every deferred URI
   * tried, and told of, at every call's end. Default: nothing.
   */
  deferred?(uri: string, subscribe: boolean, err: unknown): void;
  /**
   * Whether a rejection of `send` proves that nothing was sent (a stdio child's own admission
   * refusing it, SWY_ERR_UPSTREAM_OVERLOADED): the change is then not marked as made, and the URI
   * gets another turn at the next {@link SubscriptionSync.retry}, {@link SubscriptionSync.changed}
   * or {@link SubscriptionSync.resync}. Default: never (a rejected change counts as made).
   */
  notSent?(err: unknown): boolean;
  /** URIs kept subscribed at most (default {@link MAX_UPSTREAM_SUBSCRIBED_URIS}); at least 1. */
  maxUris?: number;
  /**
   * Called when a wanted URI is not subscribed because `maxUris` are (at its turn), or because
   * `maxUris` URIs not subscribed wait in the queue already (when it is queued): once, and again
   * only after there was room since (an unsubscribe was made, or the queue emptied with fewer than
   * `maxUris` subscribed), so that a stretch at the bound is said once however many URIs it turns
   * away. Default: nothing.
   */
  atBound?(uri: string, maxUris: number): void;
}

/**
 * One upstream connection's (or session's) resource subscriptions, brought in line with what its
 * subscribers want one change at a time. {@link changed} queues a URI whose want may have
 * changed; URIs take their turn in the order they were queued, and each one's want is read at its
 * turn: a subscribe that came and went before its turn sends nothing, and a URI queued twice
 * takes one turn. Each change is marked as made before it is sent (a failed one is not retried),
 * unless `notSent` says the rejection proves it never left: then the mark is taken back and the
 * URI waits, deferred, for its next turn ({@link retry}, or any {@link changed}).
 * {@link resync} starts over on a new connection (a restarted child, a re-initialized session):
 * nothing is subscribed there, and every URI still wanted is queued again.
 *
 * Bounds: the subscribed URIs, at most `maxUris` (past it a wanted URI is passed over, see
 * {@link SubscriptionSyncOptions.atBound}); the queue, at most `maxUris` URIs not subscribed plus
 * the subscribed ones (an unsubscribe always finds room, and queued unsubscribes take no room from
 * a subscribe: the subscribed URIs are counted at the turn, once those before it were made); a
 * change behind one refused unsent is deferred untried, never turned away at the bound (an
 * unsubscribe deferred before it may make room); the deferred URIs, at most `maxUris`
 * (past it one waits for its want's next change or a resync); the {@link idle} waiters, one per
 * caller waiting (a call in flight).
 *
 * Throws nothing: what `send` rejects with goes to `failed`.
 * @see 2025-06-18 and 2025-11-25 server/resources, Subscriptions (`resources/subscribe`,
 *   `resources/unsubscribe`, `notifications/resources/updated`)
 */
export class SubscriptionSync {
  private readonly o: SubscriptionSyncOptions;
  private readonly maxUris: number;
  /** URIs subscribed upstream, as far as this side asked. */
  private readonly subscribed = new Set<string>();
  /** URIs whose change `notSent` said never left, waiting for {@link retry} or the next {@link changed}. */
  private readonly deferred = new Set<string>();
  /** URIs waiting for their turn, with the number they were queued under (increasing, in order). */
  private readonly queued = new Map<string, number>();
  /** How many of {@link queued} are not in {@link subscribed}: what the queue's bound counts. */
  private queuedNew = 0;
  /** Callers of {@link idle}: each waits for the turn of the URI last queued when it asked. */
  private readonly waiters: Array<{ upTo: number; resolve: () => void }> = [];
  private seq = 0;
  /** The queue number whose turn is over: every earlier one's is too. */
  private done = 0;
  private walking = false;
  private stopped = false;
  /** Said at the bound since there was last room (see {@link SubscriptionSyncOptions.atBound}). */
  private full = false;

  /** @param o the wants, the send and the bound (see {@link SubscriptionSyncOptions}). */
  constructor(o: SubscriptionSyncOptions) {
    this.o = o;
    this.maxUris = Math.max(1, o.maxUris ?? MAX_UPSTREAM_SUBSCRIBED_URIS);
  }

  /** `uri`'s want may have changed: it gets a turn, unless it is waiting for one already. Nothing once stopped. */
  changed(uri: string): void {
    if (this.stopped) return;
    if (this.deferred.size > 0) this.requeueDeferred();
    if (!this.queued.has(uri)) {
      // Room for every unsubscribe; a URI not subscribed waits only while fewer than the bound do.
      if (!this.subscribed.has(uri) && this.queuedNew >= this.maxUris) return this.atBound(uri);
      this.enqueue(uri);
    }
    if (!this.walking) void this.walk();
  }

  /**
   * A new connection (a restarted child, a re-initialized session) holds no subscription: each of
   * `wanted` (the URIs subscribers want now) is queued to be subscribed again.
   */
  resync(wanted: Iterable<string>): void {
    this.subscribed.clear();
    this.queuedNew = this.queued.size;
    this.deferred.clear();
    this.full = false;
    for (const uri of wanted) this.changed(uri);
  }

  /**
   * The connection may have room again (a call of its own ended): every URI whose change was not
   * sent ({@link SubscriptionSyncOptions.notSent}) is queued for another turn, once. Nothing when
   * none waits or once stopped.
   */
  retry(): void {
    if (this.stopped || this.deferred.size === 0) return;
    this.requeueDeferred();
    if (!this.walking && this.queued.size > 0) void this.walk();
  }

  /**
   * Settles once every change queued before this call had its turn (its send settled, or it
   * sent nothing), or at once with none: a call that waits for it reaches the upstream after
   * those subscriptions. Never rejects.
   */
  idle(): Promise<void> {
    if (!this.walking || this.done >= this.seq) return Promise.resolve();
    const upTo = this.seq;
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /** Sends nothing more (the connection ended): the queue is dropped and every {@link idle} settles. */
  stop(): void {
    this.stopped = true;
    this.queued.clear();
    this.queuedNew = 0;
    this.deferred.clear();
    this.done = this.seq;
    this.wake();
  }

  /** How many URIs are subscribed upstream, as far as this side asked. */
  get size(): number {
    return this.subscribed.size;
  }

  /** Queues each deferred URI (within the queue's bound, as {@link changed} does) and forgets them. */
  private requeueDeferred(): void {
    const again = [...this.deferred];
    this.deferred.clear();
    for (const uri of again) {
      if (this.queued.has(uri)) continue;
      if (!this.subscribed.has(uri) && this.queuedNew >= this.maxUris) {
        this.atBound(uri);
        continue;
      }
      this.enqueue(uri);
    }
  }

  private enqueue(uri: string): void {
    this.queued.set(uri, ++this.seq);
    if (!this.subscribed.has(uri)) this.queuedNew++;
  }

  /** Marks `uri` subscribed (`on`) or not, keeping {@link queuedNew} right if it is queued (again) meanwhile. */
  private mark(uri: string, on: boolean): void {
    if (on === this.subscribed.has(uri)) return;
    if (on) this.subscribed.add(uri);
    else this.subscribed.delete(uri);
    if (this.queued.has(uri)) this.queuedNew += on ? -1 : 1;
  }

  private atBound(uri: string): void {
    if (this.full) return;
    this.full = true;
    this.o.atBound?.(uri, this.maxUris);
  }

  private wake(): void {
    while (this.waiters.length > 0 && this.waiters[0].upTo <= this.done) this.waiters.shift()!.resolve();
  }

  private async walk(): Promise<void> {
    this.walking = true;
    /** A change of this walk was refused unsent: the rest that would send wait for the next turn untried. */
    let blocked = false;
    /** Defers `uri` to its next turn (bounded: past it, it waits for its want's next change or a resync). */
    const defer = (uri: string) => {
      if (this.deferred.size < this.maxUris) this.deferred.add(uri);
    };
    try {
      // A Map visits what is added while it is walked, a URI taken out and queued again included.
      for (const [uri, n] of this.queued) {
        if (this.stopped) break;
        this.queued.delete(uri);
        if (!this.subscribed.has(uri)) this.queuedNew--;
        const want = this.o.wanted(uri);
        if ((this.o.ready?.() ?? true) && want !== this.subscribed.has(uri)) {
          // Untried and undecided: at its next turn the unsubscribes deferred before it go first.
          if (blocked) defer(uri);
          else if (want && this.subscribed.size >= this.maxUris) this.atBound(uri);
          else {
            // Marked before it is sent: a change queued meanwhile for the URI reads it.
            this.mark(uri, want);
            try {
              await this.o.send(uri, want);
              if (!want) this.full = false;
            } catch (err) {
              if (!this.stopped && this.o.notSent?.(err)) {
                // Nothing left: the upstream holds what it held before, and the URI waits for another turn.
                this.mark(uri, !want);
                defer(uri);
                blocked = true;
                this.o.deferred?.(uri, want, err);
              } else if (!this.stopped) {
                if (!want) this.full = false;
                this.o.failed?.(uri, want, err);
              }
            }
          }
        }
        this.done = Math.max(this.done, n);
        this.wake();
      }
      // The queue emptied with room: what made the bound said (a full queue, say) is over.
      if (this.subscribed.size < this.maxUris) this.full = false;
    } finally {
      this.walking = false;
      this.done = this.seq;
      this.wake();
    }
  }
}

/**
 * The log lines of an upstream's subscriptions, the same on every transport (docs/upstreams.md,
 * "Resource subscriptions upstream"), as {@link SubscriptionSyncOptions} callbacks: `failed` at
 * warn, `upstream subscription failed`; `deferred` at debug, `upstream subscription deferred`;
 * `atBound` at warn, `upstream subscriptions at their bound: …` with `maxUris`. Each names
 * `upstream`; the first two the URI as a stdio child's arguments are shown (a signed URL's
 * credential values `[redacted]`) and `err` as `errText` tells it.
 * @param log where they go; @param upstream the upstream's name; @param errText an error's text.
 */
export function subscriptionLines(
  log: Pick<CoreLog, 'warn' | 'debug'>,
  upstream: string,
  errText: (err: unknown) => string,
): Required<Pick<SubscriptionSyncOptions, 'failed' | 'deferred' | 'atBound'>> {
  return {
    failed: (uri, _subscribe, err) => log.warn({ upstream, uri: argForDisplay(uri), err: errText(err) }, 'upstream subscription failed'),
    deferred: (uri, _subscribe, err) => log.debug({ upstream, uri: argForDisplay(uri), err: errText(err) }, 'upstream subscription deferred'),
    atBound: (_uri, maxUris) => log.warn({ upstream, maxUris }, 'upstream subscriptions at their bound: further URIs are not subscribed'),
  };
}
