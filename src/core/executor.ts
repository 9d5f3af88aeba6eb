// Bounded admission, per-request deadlines and cancellation in front of the router.

import { SwitchyardError } from './errors.js';
import type { JsonObject } from './message.js';
import type { CoreNotification, RequestContext, SubscriptionFilter } from './request.js';
import type { Router } from './router.js';
import type { Subscription } from './upstream.js';

/** Executor bounds (see limits.ts). */
export interface ExecutorLimits {
  /** Requests running at once. */
  maxConcurrent: number;
  /** Requests waiting for a slot; one more is refused with SWY_ERR_ADMISSION_BUSY. */
  maxQueued: number;
  /** Deadline per request, ms. */
  requestTimeoutMs: number;
  /** Open subscriptions; one more is refused with SWY_ERR_SUBSCRIPTION_LIMIT. */
  maxSubscriptions: number;
}

/** The part of a RequestContext the dialect supplies; the executor adds the signal. */
export type RequestInit = Omit<RequestContext, 'signal'>;

/**
 * Runs requests through the router with bounded admission (max concurrent, max queued), a
 * deadline per request, and cancellation that reaches the upstream through `ctx.signal`.
 */
export class Executor {
  readonly router: Router;
  private readonly limits: ExecutorLimits;
  private active = 0;
  private readonly queue: Array<() => void> = [];
  private subscriptions = 0;
  private closing_ = false;
  private readonly idle = new Set<() => void>();
  /** Aborts each running request with a reason (for shutdown past the grace period). */
  private readonly running = new Set<(why: SwitchyardError) => void>();

  constructor(router: Router, limits: ExecutorLimits) {
    this.router = router;
    this.limits = limits;
  }

  /** True once `close()` was called: new work is refused. */
  get closing(): boolean {
    return this.closing_;
  }

  /** Requests running now. */
  get inFlight(): number {
    return this.active;
  }

  /**
   * Runs one request. `clientSignal` aborts when the client cancels or goes away; the
   * request then rejects with SWY_ERR_REQ_CANCELLED (send nothing for it).
   * @throws SwitchyardError SWY_ERR_ADMISSION_BUSY, SWY_ERR_ADMISSION_SHUTTING_DOWN, SWY_ERR_REQ_DEADLINE,
   *   SWY_ERR_REQ_CANCELLED, SWY_ERR_REQ_METHOD_NOT_FOUND; upstream errors unchanged
   */
  async run(init: RequestInit, clientSignal: AbortSignal | undefined): Promise<JsonObject> {
    if (this.closing_) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
    if (!this.router.knows(init.method)) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: init.method });
    await this.admit(clientSignal);
    const ac = new AbortController();
    let why: SwitchyardError | undefined;
    // One promise settles the request: the work's outcome, or the first abort reason. Every abort
    // comes from here (client, deadline, shutdown), so it rejects directly instead of listening
    // on its own signal and racing a second promise.
    let resolveRun!: (result: JsonObject) => void;
    let rejectRun!: (reason: unknown) => void;
    const settled = new Promise<JsonObject>((resolve, reject) => {
      resolveRun = resolve;
      rejectRun = reject;
    });
    const abort = (reason: SwitchyardError) => {
      why ??= reason;
      if (!ac.signal.aborted) ac.abort(why);
      rejectRun(why);
    };
    const onClient = () => abort(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
    if (clientSignal) {
      if (clientSignal.aborted) onClient();
      else clientSignal.addEventListener('abort', onClient, { once: true });
    }
    const timer = setTimeout(
      () => abort(new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `${this.limits.requestTimeoutMs} ms` })),
      this.limits.requestTimeoutMs,
    );
    timer.unref();
    this.running.add(abort);
    try {
      this.router.dispatch({ ...init, signal: ac.signal }).then(resolveRun, rejectRun);
    } catch (err) {
      rejectRun(err);
    }
    try {
      return await settled;
    } catch (err) {
      throw why ?? err;
    } finally {
      clearTimeout(timer);
      clientSignal?.removeEventListener('abort', onClient);
      this.running.delete(abort);
      this.release();
    }
  }

  private admit(signal: AbortSignal | undefined): Promise<void> {
    if (this.active < this.limits.maxConcurrent) {
      this.active++;
      return Promise.resolve();
    }
    if (this.queue.length >= this.limits.maxQueued) return Promise.reject(new SwitchyardError('SWY_ERR_ADMISSION_BUSY'));
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', drop);
        this.active++;
        resolve();
      };
      const drop = () => {
        const i = this.queue.indexOf(go);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
      };
      signal?.addEventListener('abort', drop, { once: true });
      this.queue.push(go);
    });
  }

  private release(): void {
    this.active--;
    const next = this.queue.shift();
    if (next) next();
    else if (this.active === 0) for (const f of this.idle) f();
  }

  /**
   * Opens a subscription, counted against `maxSubscriptions`.
   * @throws SwitchyardError SWY_ERR_SUBSCRIPTION_LIMIT, SWY_ERR_ADMISSION_SHUTTING_DOWN
   */
  subscribe(filter: SubscriptionFilter, sink: (n: CoreNotification) => void): Subscription {
    if (this.closing_) throw new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN');
    if (this.subscriptions >= this.limits.maxSubscriptions) throw new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT');
    this.subscriptions++;
    const sub = this.router.subscribe(filter, sink);
    let open = true;
    return {
      close: () => {
        if (!open) return;
        open = false;
        this.subscriptions--;
        sub.close();
      },
    };
  }

  /** Reserves one subscription slot for a stream that is not an upstream subscription. @throws SwitchyardError SWY_ERR_SUBSCRIPTION_LIMIT */
  reserveStream(): () => void {
    if (this.subscriptions >= this.limits.maxSubscriptions) throw new SwitchyardError('SWY_ERR_SUBSCRIPTION_LIMIT');
    this.subscriptions++;
    let held = true;
    return () => {
      if (held) {
        held = false;
        this.subscriptions--;
      }
    };
  }

  /**
   * Stops admitting new work and resolves when in-flight requests finish. Requests still running
   * after `graceMs` are aborted with SWY_ERR_ADMISSION_SHUTTING_DOWN (so each gets an error
   * response, and its upstream is told to cancel).
   * @returns true when everything finished within the grace period.
   */
  async close(graceMs: number): Promise<boolean> {
    this.closing_ = true;
    for (const go of this.queue.splice(0)) go();
    const finished = await this.whenIdle(graceMs);
    if (finished) return true;
    const why = new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'request aborted' });
    for (const stop of [...this.running]) stop(why);
    await this.whenIdle(1_000);
    return false;
  }

  private whenIdle(ms: number): Promise<boolean> {
    if (this.active === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        this.idle.delete(onIdle);
        clearTimeout(t);
        resolve(ok);
      };
      const onIdle = () => done(true);
      const t = setTimeout(() => done(false), ms);
      this.idle.add(onIdle);
    });
  }
}
