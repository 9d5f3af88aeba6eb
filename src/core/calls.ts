// One upstream call as a stream of events, and the driver that turns its server-to-client
// requests into whatever the client's era can take: real requests (`ctx.ask`) or
// `input_required` rounds over a held call (2026-07-28 clients).

import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { SwitchyardError, toRpcError, type RpcErrorObject } from './errors.js';
import { idKey, isJsonObject, textOf, type JsonObject, type RequestId } from './message.js';
import { principalKey } from './identity.js';
import type { RequestContext } from './request.js';
import type { StateSeal } from './replica.js';
import { capabilityNames, INPUT_METHODS, missingCapabilities } from './gate.js';
import { watchAbort } from './cancel.js';
import { drainThenCut } from './drain.js';
import { upstreamError, upstreamResult } from './upstream-answers.js';
import type { MessageValidator } from './strict.js';
import { canonicalJson } from './canonical-json.js';
import { approxJsonBytes } from './json-size.js';

/** Server requests gathered into one `input_required` round at most; later ones go in the next round. */
export const MAX_INPUT_REQUESTS = 32;

/** How long to wait for further server requests before an input_required round is sent, ms. */
const GATHER_MS = 50;

/** What an upstream call can produce, in order. */
export type CallEvent =
  | { kind: 'progress'; params: JsonObject }
  | { kind: 'log'; params: JsonObject }
  /**
   * A server request. `duplicate`: set by {@link CallQueue.push} when the upstream reused the id
   * of one of its requests still open; the driver refuses it (-32600) and the first goes on.
   */
  | { kind: 'request'; id: RequestId; method: string; params: JsonObject; duplicate?: true }
  /** The response's `result` as it arrived (not yet checked: `driveCall` checks it with `upstreamResult`). */
  | { kind: 'result'; result: JsonObject }
  | { kind: 'error'; error: RpcErrorObject }
  /**
   * The upstream cancelled its own server request `requestId` (basic/utilities/cancellation).
   * Never queued: {@link CallQueue.push} applies it at once.
   */
  | { kind: 'cancelled'; requestId: RequestId; reason?: string };

/**
 * Bytes of progress, log messages and server requests one call buffers at most (as
 * {@link eventBytes} counts them) while its driver does not take them: above all while the call is
 * held for a 2026-07-28 client's `input_required` retry, when nothing takes them. Past it the call
 * fails (SWY_ERR_UPSTREAM_PROTOCOL), as past the count bound. Counted by events alone, an upstream
 * that sent 64 KiB progress messages to a held call made one call hold 640 MB
 * (test/regressions/held-call-event-bytes.test.ts).
 */
export const MAX_QUEUED_EVENT_BYTES = 16 * 1024 * 1024;

/** What a buffered event counts against {@link MAX_QUEUED_EVENT_BYTES}: its params; a result or error (one per call, which ends it) counts nothing. */
function eventBytes(e: CallEvent): number {
  return e.kind === 'progress' || e.kind === 'log' || e.kind === 'request' ? approxJsonBytes(e.params) : 0;
}

/** Characters of an upstream's cancellation reason passed on to its client at most. */
export const MAX_CANCEL_REASON_CHARS = 1_000;

/**
 * Why a server request the client holds is taken back: the upstream cancelled it, with the reason
 * it gave (basic/utilities/cancellation: a reason MAY be logged or shown to the user), which the
 * client is told in its `notifications/cancelled`.
 */
export class ServerCancelled extends SwitchyardError {
  /** The upstream's reason, at most `MAX_CANCEL_REASON_CHARS` characters; undefined when it gave none. */
  readonly reason: string | undefined;

  constructor(reason: string | undefined) {
    super('SWY_ERR_REQ_CANCELLED', { detail: 'the server cancelled its request' });
    this.reason = reason?.slice(0, MAX_CANCEL_REASON_CHARS);
  }
}

/** Answers one server-to-client request of the upstream (by its id). */
export type Respond = (id: RequestId, answer: { result: JsonObject } | { error: RpcErrorObject }) => void;

/**
 * A bounded queue of one call's events. The producer (an upstream's reader) pushes; the
 * driver pulls. `fail` ends it with an error (the upstream went away). It also keeps the
 * call's server requests that are not answered yet, so that the upstream's cancellation of one
 * takes it back from wherever it is: still queued (dropped), sent to the client, or in a held
 * call's round (the watcher the driver set), and so that no answer goes upstream for it.
 * @see 2025-11-25 basic/utilities/cancellation (the receiver stops; no response is sent for a cancelled request)
 */
export class CallQueue {
  private readonly items: CallEvent[] = [];
  /**
   * Server requests pushed and not answered or cancelled yet, by `idKey` (1 and "1" are
   * different ids): undefined until the driver watches one (`watchAsk`), then what takes it back
   * from the client. Made with its first entry; at most `max` entries (past them the call fails,
   * as for events).
   * @see JSON-RPC 2.0 §4 (id: a string or a number)
   */
  private asks: Map<string, ((reason: string | undefined) => void) | undefined> | undefined;
  private waiter: ((e: CallEvent) => void) | undefined;
  /** The first failure, boxed so that a falsy or undefined reason still counts as one. */
  private failure: { reason: unknown } | undefined;
  private failWaiter: ((e: unknown) => void) | undefined;
  private readonly max: number;
  private readonly maxBytes: number;
  /** What the buffered events count (`eventBytes`), bytes. */
  private bytes = 0;

  /**
   * @param max events buffered before the call is failed (a client that never reads).
   * @param maxBytes bytes of buffered events (`eventBytes`) before the call is failed.
   */
  constructor(max = 10_000, maxBytes = MAX_QUEUED_EVENT_BYTES) {
    this.max = max;
    this.maxBytes = maxBytes;
  }

  /**
   * Adds an event; a cancellation of a server request takes effect at once, ahead of what is
   * queued. A server request whose id one still open already has is queued marked `duplicate`
   * (the open one is left as it is).
   * @see MCP 2025-11-25 basic#requests (the requestor MUST NOT reuse an id in the same session)
   */
  push(e: CallEvent): void {
    if (e.kind === 'cancelled') return void this.cancelAsk(e.requestId, e.reason);
    // A failed call takes nothing more: what it buffered stays within the bounds.
    if (this.failure !== undefined) return;
    if (e.kind === 'request') {
      const asks = (this.asks ??= new Map());
      const key = idKey(e.id);
      if (asks.has(key)) e = { ...e, duplicate: true };
      else if (asks.size >= this.max)
        return this.fail(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'too many server requests open for one call' }));
      else asks.set(key, undefined);
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      this.failWaiter = undefined;
      w(e);
      return;
    }
    if (this.items.length >= this.max) return this.fail(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: 'too many events buffered for one call' }));
    const size = eventBytes(e);
    if (this.bytes + size > this.maxBytes)
      return this.fail(new SwitchyardError('SWY_ERR_UPSTREAM_PROTOCOL', { detail: `more than ${this.maxBytes} bytes of events buffered for one call` }));
    this.bytes += size;
    this.items.push(e);
  }

  /** Takes the first buffered event off the queue, and its bytes off the count. */
  private take(): CallEvent | undefined {
    const e = this.items.shift();
    if (e) this.bytes -= eventBytes(e);
    return e;
  }

  /** True when server request `id` of this call is neither answered nor cancelled. */
  isOpen(id: RequestId): boolean {
    return this.asks?.has(idKey(id)) ?? false;
  }

  /**
   * Sets what takes server request `id` back from the client when the upstream cancels it.
   * @returns false when it is no longer open (cancelled already: do not send it).
   */
  watchAsk(id: RequestId, takeBack: (reason: string | undefined) => void): boolean {
    const key = idKey(id);
    if (!this.asks?.has(key)) return false;
    this.asks.set(key, takeBack);
    return true;
  }

  /**
   * Marks server request `id` answered.
   * @returns false when the upstream cancelled it (or it was answered already): send no answer.
   */
  settle(id: RequestId): boolean {
    if (!this.asks?.delete(idKey(id))) return false;
    if (this.asks.size === 0) this.asks = undefined;
    return true;
  }

  /**
   * The upstream cancelled server request `id`: a queued one is dropped, one the client has is
   * taken back (its watcher runs, with the upstream's `reason`). No answer goes upstream for it
   * afterwards.
   * @returns false when it was not open.
   */
  cancelAsk(id: RequestId, reason?: string): boolean {
    const key = idKey(id);
    if (!this.asks?.has(key)) return false;
    const takeBack = this.asks.get(key);
    this.settle(id);
    if (takeBack) takeBack(reason);
    else {
      const i = this.items.findIndex((e) => e.kind === 'request' && !e.duplicate && idKey(e.id) === key);
      if (i >= 0) this.bytes -= eventBytes(this.items.splice(i, 1)[0]);
    }
    return true;
  }

  /** Ends the call with an error. */
  fail(err: unknown): void {
    this.failure ??= { reason: err };
    const f = this.failWaiter;
    this.waiter = undefined;
    this.failWaiter = undefined;
    f?.(err);
  }

  /** The next event if one comes within `ms`, else undefined. */
  async within(ms: number, signal: AbortSignal): Promise<CallEvent | undefined> {
    if (this.items.length > 0) return this.take();
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), ms);
    const onAbort = () => ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.next(ac.signal);
    } catch (err) {
      if (signal.aborted || this.failure !== undefined) throw err;
      return undefined;
    } finally {
      clearTimeout(t);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Puts an event back at the front (one read ahead too far). */
  unshift(e: CallEvent): void {
    this.bytes += eventBytes(e);
    this.items.unshift(e);
  }

  /** The next event; rejects when the call failed or `signal` aborts. */
  next(signal: AbortSignal): Promise<CallEvent> {
    const e = this.take();
    if (e) return Promise.resolve(e);
    if (this.failure !== undefined) return Promise.reject(this.failure.reason);
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<CallEvent>((resolve, reject) => {
      const onAbort = () => {
        this.waiter = undefined;
        this.failWaiter = undefined;
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = (ev) => {
        signal.removeEventListener('abort', onAbort);
        resolve(ev);
      };
      this.failWaiter = (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      };
    });
  }
}

/** A call the gateway holds open while a 2026 client answers an `input_required` round. */
export interface HeldCall {
  queue: CallQueue;
  respond: Respond;
  /** Cancels the upstream call (sends its cancellation). */
  cancel(reason: string): void;
  /** Server requests awaiting answers, by the input key handed to the client (one the upstream cancels leaves). */
  pending: Map<string, RequestId>;
  /** The requests as handed to the client (re-sent when an answer is missing; one the upstream cancels leaves). */
  inputRequests: Record<string, { method: string; params: JsonObject }>;
  /**
   * The upstream instance the call runs on (its supervisor), set by the {@link CallHolder} of
   * {@link HeldCalls.scoped} and kept round after round, so that a reload that retires that instance
   * cancels the call ({@link HeldCalls.cancelOwned}); undefined for a holder without a scope.
   */
  owner?: object;
  /**
   * The mount the call was made through (`RequestContext.mount`: an upstream's own mount, by its
   * name, or `aggregate`), so that a reload that cancels it names that mount.
   */
  mount?: string;
}

/**
 * What an upstream connector holds calls with ({@link driveCall}): the gateway's {@link HeldCalls},
 * or a scope of them naming the upstream instance ({@link HeldCalls.scoped}).
 */
export interface CallHolder {
  /**
   * Holds `call` and returns the `requestState` naming it.
   * @throws SwitchyardError SWY_ERR_ADMISSION_BUSY (too many calls held)
   */
  hold(call: HeldCall, method: string, params: JsonObject, binding?: string): string;
}

/**
 * How held calls are sealed when replicas share them: `requestState` is sealed with the cluster
 * key and names the replica that holds the call, so a retry that lands elsewhere is sent there.
 */
export interface HeldCallsSealing {
  /** The cluster's sealer (AES-256-GCM). */
  seal: StateSeal;
  /** This replica's id, sealed into every state it issues. */
  replicaId: string;
}

/**
 * Resumes a call that another replica holds: sends the retry (`state` and the request in `ctx`)
 * to replica `replicaId` and resolves with its answer.
 * @throws SwitchyardError as the replica answered, or `SWY_ERR_CLUSTER_OWNER_GONE` when it is gone
 */
export type ResumeElsewhere = (replicaId: string, state: string, ctx: RequestContext) => Promise<JsonObject>;

/** Where a `requestState` leads: a call held here, or the replica that holds it. */
export type HeldCallLocation = { call: HeldCall } | { replica: string };

/** Sealing purpose of held-call states. */
const STATE_PURPOSE = 'request-state';

/**
 * Held calls, bounded in count and time, addressed by an integrity-protected `requestState`
 * bound to the hold id, the method, a digest of the original params and an expiry, so that a
 * client cannot forge, reuse for another request, or keep one past `ttlMs`. Alone, the state is
 * an HMAC-SHA256 token (`swy1.`); with {@link HeldCallsSealing} it is sealed with AES-256-GCM
 * (`swy2.`) and also names the replica holding the call.
 * @see 2026-07-28 basic/patterns/mrtr (requestState is attacker-controlled: integrity-protect,
 *   bind to the request, short expiry, single use)
 */
export class HeldCalls {
  private readonly key: Buffer;
  private readonly max: number;
  private readonly ttlMs: number;
  private readonly sealing: HeldCallsSealing | undefined;
  private elsewhere: ResumeElsewhere | undefined;
  /** Held calls by hold id, each with its expiry timer and its state's expiry (epoch ms); at most `max`. */
  private readonly calls = new Map<string, { call: HeldCall; timer: NodeJS.Timeout; exp: number }>();
  /**
   * Calls the gateway cancelled (a shutdown's grace ended, a reload retired their upstream), by
   * hold id, with the error a retry naming one gets instead of "requestState is unknown" and the
   * state's expiry (epoch ms), after which the entry is dropped. At most `max`: the oldest goes.
   */
  private readonly gone = new Map<string, { err: SwitchyardError; exp: number }>();
  /** Retries resumed here for another replica (the cluster's bus), running now: work a drain waits for. */
  private resuming = 0;
  /**
   * What stops each of those retries that can be stopped ({@link track}'s `cut`), for a drain's
   * end ({@link cutResumed}), with the upstream instance it runs on and the mount the call was
   * made through (for {@link retireResumed}). As many as {@link resuming} at most, which the bus
   * bounds (the messages it handles at once for other replicas, 1,024 by default).
   */
  private readonly cuts = new Map<(err: SwitchyardError) => void, { owner: object | undefined; mount: string | undefined }>();
  /** The error of the drain that called {@link cutResumed}: a resume tracked after it is cut at once. */
  private cutWith: SwitchyardError | undefined;
  /** Told each time a call stops being held or a resume for another replica ends (a drain's wait). */
  private readonly settleListeners = new Set<() => void>();

  /**
   * @param key HMAC key (32 random bytes when not configured); unused with `sealing`.
   * @param max held calls at once; one more is refused with SWY_ERR_ADMISSION_BUSY.
   * @param ttlMs how long a held call waits for the client's retry, ms.
   * @param sealing seal states with the cluster key and name this replica in them.
   */
  constructor(key: Buffer | undefined, max = 1024, ttlMs = 120_000, sealing?: HeldCallsSealing) {
    this.key = key ?? randomBytes(32);
    this.max = max;
    this.ttlMs = ttlMs;
    this.sealing = sealing;
  }

  /** Held calls now. */
  get size(): number {
    return this.calls.size;
  }

  /**
   * Work of held calls a drain waits for: the calls held now, and the retries this replica is
   * resuming for another replica's client ({@link track}). A retry resumed through an executor is
   * that executor's own request, counted there.
   */
  get busy(): number {
    return this.calls.size + this.resuming;
  }

  /** Calls `fn` each time {@link busy} may have fallen; returns what stops it. */
  onSettle(fn: () => void): () => void {
    this.settleListeners.add(fn);
    return () => this.settleListeners.delete(fn);
  }

  /** Tells the listeners after the current turn's synchronous work: a call taken to be resumed is counted again by then (an executor's request, {@link track}). */
  private settled(): void {
    if (this.settleListeners.size > 0) queueMicrotask(() => this.settleListeners.forEach((f) => f()));
  }

  /**
   * Counts `work` (a retry resumed here for another replica's client, which no executor runs) in
   * {@link busy} until it settles.
   * @param cut stops `work` with the error given (it should then settle with that error): called
   *   by {@link cutResumed} when a drain's grace ends, as the executor aborts its own requests,
   *   and by {@link retireResumed} when a reload retires the upstream instance it runs on.
   * @param owner the upstream instance the call runs on (`HeldCall.owner`, see {@link scoped}).
   * @param mount the mount the call was made through (`HeldCall.mount`): what a reload's cut names.
   */
  async track<T>(work: Promise<T>, cut?: (err: SwitchyardError) => void, owner?: object, mount?: string): Promise<T> {
    this.resuming++;
    // A retry taken after the drain's grace ended (a message already on its way) gets no grace of its own.
    const late = this.cutWith;
    if (cut && late) queueMicrotask(() => cut(late));
    else if (cut) this.cuts.set(cut, { owner, mount });
    try {
      return await work;
    } finally {
      if (cut) this.cuts.delete(cut);
      this.resuming--;
      this.settled();
    }
  }

  /**
   * Stops every retry resumed here for another replica's client that is still running
   * ({@link track} with `cut`), with `err`: a shutdown's grace ended (`Executor.close` with
   * `held`), and such a retry is cut as the executor cuts its own requests, with the same error,
   * which goes back to the replica the client waits on. A resume tracked afterwards is cut with
   * `err` at once: the grace is over.
   * @returns how many were cut
   * @see docs/operations.md, "Held calls at shutdown and reload"
   */
  cutResumed(err: SwitchyardError): number {
    this.cutWith ??= err;
    const cuts = [...this.cuts.keys()];
    this.cuts.clear();
    for (const cut of cuts) cut(err);
    return cuts.length;
  }

  /**
   * A reload retired upstream instance `owner`: waits up to `graceMs` for the retries resumed on
   * it for another replica's client ({@link track} with `owner`), then cuts those still running
   * with `err`, or `err(mount)` (the mount the call was made through, as {@link cancelOwned}
   * names a held call's), as the reload cuts the requests of the mount it retires (`Executor.close`).
   * @returns how many were cut
   * @see docs/operations.md, "Held calls at shutdown and reload"
   */
  async retireResumed(owner: object, graceMs: number, err: SwitchyardError | ((mount: string | undefined) => SwitchyardError)): Promise<number> {
    const outcome = await drainThenCut({
      idle: () => ![...this.cuts.values()].some((c) => c.owner === owner),
      onSettle: (fn) => this.onSettle(fn),
      graceMs,
      cut: () => {
        const cuts = [...this.cuts].filter(([, c]) => c.owner === owner);
        for (const [cut, { mount }] of cuts) {
          this.cuts.delete(cut);
          cut(typeof err === 'function' ? err(mount) : err);
        }
        return cuts.length;
      },
    });
    return outcome.cut;
  }

  /**
   * A {@link CallHolder} that marks each call it holds as running on `owner` (an upstream
   * instance: its supervisor), for {@link cancelOwned}.
   */
  scoped(owner: object): CallHolder {
    return {
      hold: (call, method, params, binding) => {
        call.owner = owner;
        return this.hold(call, method, params, binding);
      },
    };
  }

  /** Sets how a retry for a call held by another replica is carried out (the cluster's bus). */
  resumeElsewhereWith(fn: ResumeElsewhere): void {
    this.elsewhere = fn;
  }

  private static digest(method: string, params: JsonObject, binding: string): string {
    const { inputResponses: _a, requestState: _b, _meta: _c, ...rest } = params;
    void _a;
    void _b;
    void _c;
    // By content (canonicalJson): a client that sends the retry's arguments with their keys in
    // another order sends the same request (found by h-trial4: such a retry was refused -32602).
    return createHash('sha256').update(binding).update('\0').update(method).update('\0').update(canonicalJson(rest)).digest('base64url');
  }

  /**
   * Holds `call` and returns the sealed `requestState` naming it.
   * @param binding what else the state is bound to: the mount and the principal (see {@link bindingOf}).
   * @throws SwitchyardError SWY_ERR_ADMISSION_BUSY
   */
  hold(call: HeldCall, method: string, params: JsonObject, binding = ''): string {
    if (this.calls.size >= this.max) throw new SwitchyardError('SWY_ERR_ADMISSION_BUSY', { detail: 'too many calls waiting for client input' });
    const id = randomUUID();
    const exp = Date.now() + this.ttlMs;
    const d = HeldCalls.digest(method, params, binding);
    let state: string;
    if (this.sealing) state = `swy2.${this.sealing.seal.seal(STATE_PURPOSE, { h: id, d, r: this.sealing.replicaId }, exp)}`;
    else {
      const body = Buffer.from(JSON.stringify({ h: id, d, x: exp })).toString('base64url');
      state = `swy1.${body}.${createHmac('sha256', this.key).update(body).digest('base64url')}`;
    }
    const timer = setTimeout(() => {
      this.calls.delete(id);
      call.cancel('client did not answer in time');
      this.settled();
    }, this.ttlMs);
    timer.unref();
    this.calls.set(id, { call, timer, exp });
    return state;
  }

  /** True when `state` looks like one of ours (so other states pass through to the upstream). */
  static isOurs(state: unknown): state is string {
    return typeof state === 'string' && (state.startsWith('swy1.') || state.startsWith('swy2.'));
  }

  /**
   * True when `state` was made here (its MAC is this gateway's key's, or it opens under this
   * cluster's seal), whatever it names or whether it expired. A state of the same shape made by
   * another gateway (a Switchyard upstream's) is not ours: it passes through to that upstream.
   */
  madeHere(state: string): boolean {
    return this.sealing ? this.opened(state) !== undefined : this.signedBody(state) !== undefined;
  }

  /** What a sealed state (`swy2.`) says, when it opens under this cluster's seal; undefined otherwise. */
  private opened(state: string): { h?: unknown; d?: unknown; r?: unknown } | undefined {
    if (!this.sealing || !state.startsWith('swy2.')) return undefined;
    return this.sealing.seal.open(STATE_PURPOSE, state.slice(5)) as { h?: unknown; d?: unknown; r?: unknown } | undefined;
  }

  /** The body of an HMAC state (`swy1.`) whose MAC is this gateway's key's; undefined otherwise. */
  private signedBody(state: string): string | undefined {
    const [prefix, body, mac] = state.split('.');
    if (prefix !== 'swy1' || !body || !mac) return undefined;
    // Compare the MAC as text: base64url decoding ignores the unused low bits of the last
    // character, so comparing decoded bytes would accept altered states.
    const want = Buffer.from(createHmac('sha256', this.key).update(body).digest('base64url'));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want) ? body : undefined;
  }

  /**
   * True when `state` is one of ours, authentic and unexpired, and names a call held here now (not
   * checked: the request it is bound to, which {@link resume} checks). A drain admits such a
   * retry until its grace ends (docs/operations.md, "Held calls at shutdown and reload").
   */
  heldHere(state: unknown): boolean {
    if (!HeldCalls.isOurs(state)) return false;
    let h: unknown;
    if (this.sealing) {
      const v = this.opened(state);
      if (v?.r !== this.sealing.replicaId) return false;
      h = v.h;
    } else {
      const body = this.signedBody(state);
      if (body === undefined) return false;
      try {
        const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { h?: unknown; x?: unknown };
        if (typeof s.x !== 'number' || s.x < Date.now()) return false;
        h = s.h;
      } catch {
        return false;
      }
    }
    return typeof h === 'string' && this.calls.has(h);
  }

  /** The hold id and replica a state names, when it is authentic, unexpired and bound to this request. */
  private verify(state: string, method: string, params: JsonObject, binding: string): { h: string; r: string | undefined } | undefined {
    if (this.sealing) {
      const v = this.opened(state);
      if (!v || typeof v.h !== 'string' || typeof v.r !== 'string' || v.d !== HeldCalls.digest(method, params, binding)) return undefined;
      return { h: v.h, r: v.r };
    }
    const body = this.signedBody(state);
    if (body === undefined) return undefined;
    let s: { h: string; d: string; x: number };
    try {
      s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof s;
    } catch {
      return undefined;
    }
    if (s.x < Date.now() || s.d !== HeldCalls.digest(method, params, binding)) return undefined;
    return { h: s.h, r: undefined };
  }

  /**
   * Where `state` leads, taking a call held here (once). Returns undefined when the state is
   * forged, expired, bound to another request, mount or principal, or already used.
   * @throws SwitchyardError the error the gateway cancelled the call with ({@link cancelWhere}):
   *   SWY_ERR_ADMISSION_SHUTTING_DOWN (a shutdown's grace ended), SWY_ERR_UPSTREAM_UNAVAILABLE
   *   (a reload retired its upstream)
   */
  locate(state: string, method: string, params: JsonObject, binding = ''): HeldCallLocation | undefined {
    const v = this.verify(state, method, params, binding);
    if (!v) return undefined;
    if (v.r !== undefined && v.r !== this.sealing?.replicaId) return { replica: v.r };
    const entry = this.calls.get(v.h);
    if (!entry) {
      const gone = this.gone.get(v.h);
      if (gone && gone.exp >= Date.now()) throw gone.err;
      return undefined;
    }
    this.calls.delete(v.h);
    clearTimeout(entry.timer);
    this.settled();
    return { call: entry.call };
  }

  /**
   * Takes the held call `state` names, once, when this replica holds it. Returns undefined when
   * the state is forged, expired, bound to another request, mount or principal, already used,
   * or names another replica.
   * @throws SwitchyardError as {@link locate}: the error a call the gateway cancelled was cancelled with
   */
  take(state: string, method: string, params: JsonObject, binding = ''): HeldCall | undefined {
    const found = this.locate(state, method, params, binding);
    return found && 'call' in found ? found.call : undefined;
  }

  /**
   * Continues the call a 2026-07-28 retry's `requestState` names: here, or on the replica that
   * holds it.
   * @throws SwitchyardError SWY_ERR_REQ_PARAMS (a state that is forged, expired, used, or bound
   *   elsewhere; `inputResponses` that are not an object of result objects, refused before the
   *   call is taken), SWY_ERR_CLUSTER_OWNER_GONE (held by a replica this one cannot reach)
   */
  async resume(state: string, ctx: RequestContext): Promise<JsonObject> {
    // Checked before the call is taken, so that a corrected retry with the same state still works.
    checkInputResponses(ctx.params.inputResponses);
    const found = this.locate(state, ctx.method, ctx.params, bindingOf(ctx));
    if (!found) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'requestState is unknown, expired, or bound to another request' });
    if ('call' in found) return resumeCall(found.call, ctx, this, progressOf);
    if (!this.elsewhere) throw new SwitchyardError('SWY_ERR_CLUSTER_OWNER_GONE', { detail: 'the call is held by another replica and no bus reaches it' });
    return this.elsewhere(found.replica, state, ctx);
  }

  /**
   * Cancels every held call that `which` picks: its upstream is told to cancel with `reason`
   * (basic/utilities/cancellation), and a retry naming it gets `err` (thrown by {@link locate})
   * until its state expires, not "requestState is unknown". `err` may be made per call (naming
   * the mount it came through, `HeldCall.mount`).
   * @returns how many were cancelled
   */
  cancelWhere(
    which: (call: HeldCall) => boolean,
    err: SwitchyardError | ((call: HeldCall) => SwitchyardError),
    reason: string | ((err: SwitchyardError) => string),
  ): number {
    let n = 0;
    for (const [id, entry] of this.calls) {
      if (!which(entry.call)) continue;
      this.calls.delete(id);
      clearTimeout(entry.timer);
      while (this.gone.size >= this.max) this.gone.delete(this.gone.keys().next().value!);
      const e = typeof err === 'function' ? err(entry.call) : err;
      this.gone.set(id, { err: e, exp: entry.exp });
      entry.call.cancel(typeof reason === 'function' ? reason(e) : reason);
      n++;
    }
    if (n > 0) this.settled();
    return n;
  }

  /**
   * Cancels the calls held on upstream instance `owner` (see {@link scoped}): a reload retired it.
   * A retry naming one gets `err`, or `err(call)` (which may name the mount the call came
   * through, `HeldCall.mount`); the upstream is told its message.
   * @returns how many were cancelled
   */
  cancelOwned(owner: object, err: SwitchyardError | ((call: HeldCall) => SwitchyardError)): number {
    return this.cancelWhere(
      (call) => call.owner === owner,
      err,
      (e) => e.message,
    );
  }

  /**
   * Cancels every held call (shutdown: the grace ended); a retry that still reaches this process
   * naming one gets `err` (default: SWY_ERR_ADMISSION_SHUTTING_DOWN).
   */
  clear(err = new SwitchyardError('SWY_ERR_ADMISSION_SHUTTING_DOWN', { detail: 'held call cancelled' })): void {
    this.cancelWhere(() => true, err, 'shutting down');
  }
}

/**
 * What a held call's `requestState` is bound to besides the request: the mount it was made on
 * and the principal who made it, so that a state from one mount or caller resumes nothing
 * elsewhere (2026-07-28 basic/patterns/mrtr: bind requestState to the request and the caller).
 */
export function bindingOf(ctx: Pick<RequestContext, 'mount' | 'identity'>): string {
  return `${ctx.mount ?? ''}\0${principalKey(ctx.identity)}`;
}

/**
 * An upstream progress notification's params as the client's sinks take them: `progress`,
 * `total`, `message` (the upstream's token is ours; the front door adds the client's own).
 * The `progressMap` of {@link driveCall} and {@link resumeCall} for every upstream.
 * @see 2025-11-25 basic/utilities/progress
 */
export function progressOf(p: JsonObject): JsonObject {
  const out: JsonObject = { progress: p.progress };
  if (p.total !== undefined) out.total = p.total;
  if (p.message !== undefined) out.message = p.message;
  return out;
}

/**
 * An upstream log message's params as the client's sinks take them: `level`, `logger` when it
 * has one, `data`. The same for every log event of a call, also those gathered into an
 * `input_required` round.
 * @see 2025-11-25 server/utilities/logging#log-message-notifications
 */
function logOf(p: JsonObject): { level: string; logger?: string; data: unknown } {
  return { level: String(p.level), ...(p.logger !== undefined ? { logger: textOf(p.logger) } : {}), data: p.data };
}

/** Sends the client a server notification (`RequestContext.notifyClient`); false when nothing carried it. */
export type NotifyClient = (method: string, params: JsonObject) => boolean;

/** URL-mode elicitations remembered per upstream connection at most; the oldest is forgotten first. */
export const MAX_ELICITATION_ROUTES = 1024;

/** How long a URL-mode elicitation's completion is waited for, ms (the interaction is the user's, out of band). */
export const ELICITATION_ROUTE_TTL_MS = 30 * 60_000;

/**
 * Where the completion of each URL-mode elicitation of one upstream connection goes: the client
 * that was sent the `elicitation/create` and accepted it, by its `elicitationId` (the upstream's,
 * which the client saw unchanged). Bounded in count ({@link MAX_ELICITATION_ROUTES}, oldest out)
 * and time ({@link ELICITATION_ROUTE_TTL_MS}); an entry goes when its completion is delivered,
 * when the client declined or failed the request, and when its client session ends.
 * @see 2025-11-25 client/elicitation#url-mode (notifications/elicitation/complete names the
 *   elicitationId; clients ignore unknown ones)
 */
export class ElicitationRoutes {
  private readonly routes = new Map<string, { notify: NotifyClient; sessionKey: string | undefined; expires: number }>();
  private readonly max: number;
  private readonly ttlMs: number;

  constructor(max = MAX_ELICITATION_ROUTES, ttlMs = ELICITATION_ROUTE_TTL_MS) {
    this.max = max;
    this.ttlMs = ttlMs;
  }

  /** Routes the completion of `elicitationId` to `notify` (client session `sessionKey`). */
  add(elicitationId: string, notify: NotifyClient, sessionKey: string | undefined): void {
    this.routes.delete(elicitationId);
    while (this.routes.size >= this.max) this.routes.delete(this.routes.keys().next().value!);
    this.routes.set(elicitationId, { notify, sessionKey, expires: Date.now() + this.ttlMs });
  }

  /** Forgets `elicitationId` when it still goes to `notify`. */
  delete(elicitationId: string, notify: NotifyClient): void {
    if (this.routes.get(elicitationId)?.notify === notify) this.routes.delete(elicitationId);
  }

  /** Where the completion of `elicitationId` goes, once (a completion is told once); undefined when unknown or expired. */
  take(elicitationId: string): NotifyClient | undefined {
    const r = this.routes.get(elicitationId);
    if (!r) return undefined;
    this.routes.delete(elicitationId);
    return r.expires >= Date.now() ? r.notify : undefined;
  }

  /** Forgets every elicitation of client session `sessionKey` (it ended). */
  dropSession(sessionKey: string): void {
    for (const [id, r] of this.routes) if (r.sessionKey === sessionKey) this.routes.delete(id);
  }

  /** Elicitations remembered now. */
  get size(): number {
    return this.routes.size;
  }
}

/**
 * The `elicitationId` of a URL-mode `elicitation/create`, whose completion the upstream may
 * announce later; undefined for anything else.
 * @see 2025-11-25 client/elicitation#url-mode
 */
function urlElicitationId(method: string, params: JsonObject): string | undefined {
  return method === 'elicitation/create' && params.mode === 'url' && typeof params.elicitationId === 'string' ? params.elicitationId : undefined;
}

/**
 * Before a server request goes to a client (inside a call or outside any): when it is a URL-mode
 * `elicitation/create` with an `elicitationId` and the client can be told of its completion
 * (`notify`), routes that completion to it in `routes`, for as long as it may come.
 * @param sessionKey the client session, whose end forgets the route ({@link ElicitationRoutes.dropSession}).
 * @returns what to call once the client answered: with its result (the route stays only when
 *   the client accepted), or with undefined for an error (the route goes).
 * @see 2025-11-25 client/elicitation#url-mode
 */
export function trackElicitation(
  routes: ElicitationRoutes | undefined,
  method: string,
  params: JsonObject,
  notify: NotifyClient | undefined,
  sessionKey: string | undefined,
): (result: JsonObject | undefined) => void {
  const eid = urlElicitationId(method, params);
  if (eid === undefined || !notify || !routes) return () => {};
  routes.add(eid, notify, sessionKey);
  return (result) => {
    if (result?.action !== 'accept') routes.delete(eid, notify);
  };
}

/** The parts of a call the driver needs. */
export interface DriveTarget {
  queue: CallQueue;
  /** Strict mode on this upstream: what it sends for the call is checked ({@link UpstreamStrict}). */
  strict?: UpstreamStrict;
  respond: Respond;
  cancel(reason: string): void;
  /** Called once when the call ends with a result or an error (the upstream can forget it). */
  finish?(): void;
  /** The connection's URL-mode elicitations, so that their completion reaches the client that accepted them. */
  elicitations?: ElicitationRoutes;
}

/**
 * Strict mode on an upstream: what it sends for a call (the response, its progress and log
 * notifications, its server requests) is checked against the official schema of the revision it
 * speaks, and each violation logged (`strict: schema violation`, direction `from-upstream`); nothing is
 * refused for it (docs/strict.md, "Upstreams"). The routing of what it sends outside a call
 * (routeUnlabelled, upstreams/routing.ts) checks that with the same pair.
 */
export interface UpstreamStrict {
  readonly validator: MessageValidator;
  /** The revision the upstream (its session) speaks. */
  readonly revision: string;
}

/** A call's {@link UpstreamStrict} on an upstream speaking `revision`: undefined when strict mode is off (no validator) or no revision is settled yet. */
export function upstreamStrict(validator: MessageValidator | undefined, revision: string | undefined): UpstreamStrict | undefined {
  return validator && revision !== undefined ? { validator, revision } : undefined;
}

/**
 * What `ev` came as on the wire, for strict mode: a response (its `result` or `error` as it
 * arrived; the id the upstream used is the connector's, so 0 stands in), a notification or a
 * server request. The method of a response is the call's. Nothing for a cancellation (applied by
 * the queue, never driven).
 */
function checkFromUpstream(s: UpstreamStrict, ev: CallEvent, method: string): void {
  let m: JsonObject;
  switch (ev.kind) {
    case 'result':
      m = { jsonrpc: '2.0', id: 0, result: ev.result };
      break;
    case 'error':
      m = { jsonrpc: '2.0', id: 0, error: ev.error };
      break;
    case 'progress':
      m = { jsonrpc: '2.0', method: 'notifications/progress', params: ev.params };
      break;
    case 'log':
      m = { jsonrpc: '2.0', method: 'notifications/message', params: ev.params };
      break;
    case 'request':
      m = { jsonrpc: '2.0', id: ev.id, method: ev.method, params: ev.params };
      break;
    default:
      return;
  }
  s.validator.check('from-upstream', s.revision, m, method);
}

/**
 * The reason the upstream's `notifications/cancelled` gives for a call stopped with `why` (its
 * signal's abort reason): `shutting down` for a drain's cut at the end of `shutdownGraceMs`
 * (SWY_ERR_ADMISSION_SHUTTING_DOWN; what {@link HeldCalls.clear} tells the upstream of a call
 * still held then), the error's message for a reload's cut (SWY_ERR_UPSTREAM_UNAVAILABLE, `… was
 * removed or replaced by a config reload; request aborted`, as {@link HeldCalls.cancelOwned}
 * tells it), `request timed out after <N> ms` for a deadline's cut (SWY_ERR_REQ_DEADLINE with
 * detail `<N> ms`, from `requestTimeoutMs`; also an aggregate member's own shorter deadline,
 * whose signal carries SWY_ERR_REQ_CANCELLED caused by it; `request timed out` when the error
 * names no duration), and `client cancelled` for anything else (the client cancelled or went away).
 * @see 2025-11-25 basic/utilities/cancellation (the reason MAY be logged or displayed)
 * @see docs/operations.md, "Held calls at shutdown and reload"
 */
export function cancelReasonOf(why: unknown): string {
  if (!(why instanceof SwitchyardError)) return 'client cancelled';
  if (why.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN') return 'shutting down';
  if (why.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE') return why.message;
  if (why.code === 'SWY_ERR_REQ_DEADLINE') return timedOutReason(why);
  const cause: unknown = why.cause;
  if (why.code === 'SWY_ERR_REQ_CANCELLED' && cause instanceof SwitchyardError && cause.code === 'SWY_ERR_REQ_DEADLINE') return timedOutReason(cause);
  return 'client cancelled';
}

/** `request timed out after <N> ms` for a deadline error whose detail is `<N> ms` (the executor's and a `Deadline`'s), else `request timed out`. */
function timedOutReason(deadline: SwitchyardError): string {
  const detail = deadline.detail;
  return detail !== undefined && /^\d+ ms$/.test(detail) ? `request timed out after ${detail}` : 'request timed out';
}

/**
 * Runs a call to its end for one client request: progress and log events go to the client's
 * sinks; server-to-client requests go to the client as real requests when its era has them
 * (`ctx.ask`), or, for `tools/call`, `prompts/get` and `resources/read` from a 2026-07-28
 * client, become an `input_required` result over a held call; otherwise the upstream gets a
 * -32603 error for them. Resolves with the call's result, checked (`upstreamResult`).
 * @throws PeerRpcError (the upstream's error), SwitchyardError (cancellation, upstream faults;
 *   SWY_ERR_UPSTREAM_PROTOCOL for a result or error that is not well formed)
 */
export async function driveCall(
  target: DriveTarget,
  ctx: RequestContext,
  held: CallHolder,
  progressMap: (p: JsonObject) => JsonObject | undefined,
): Promise<JsonObject> {
  // No answer goes upstream for a server request the upstream cancelled (basic/utilities/cancellation).
  const answer: Respond = (id, a) => {
    if (target.queue.settle(id)) target.respond(id, a);
  };
  for (;;) {
    let ev: CallEvent;
    try {
      ev = await target.queue.next(ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) target.cancel(cancelReasonOf(ctx.signal.reason));
      throw err;
    }
    if (target.strict) checkFromUpstream(target.strict, ev, ctx.method);
    switch (ev.kind) {
      case 'progress': {
        const p = progressMap(ev.params);
        if (p) ctx.onProgress(p as never);
        break;
      }
      case 'log':
        ctx.onLog(logOf(ev.params));
        break;
      case 'result':
        target.finish?.();
        return upstreamResult(ctx.method, ev.result);
      case 'error':
        target.finish?.();
        throw upstreamError(ev.error);
      case 'cancelled':
        break; // applied by the queue, never queued
      case 'request': {
        if (ev.duplicate) {
          refuseDuplicate(target, ev.id);
          break;
        }
        if (ev.method === 'ping') {
          answer(ev.id, { result: {} });
          break;
        }
        if (ctx.ask) {
          const id = ev.id;
          // A URL-mode elicitation's completion goes to this client (and no other) for as long as
          // it may come; one it declined or could not take has none.
          const settled = trackElicitation(target.elicitations, ev.method, ev.params, ctx.notifyClient, ctx.sessionKey);
          // The ask's own signal: the call's, and the upstream's cancellation of this one request,
          // which the client is then told of with the id it saw (the era's `ask` does that).
          const asked = new AbortController();
          const unwatch = watchAbort(ctx.signal, () => asked.abort(ctx.signal.reason));
          if (ctx.signal.aborted) asked.abort(ctx.signal.reason);
          target.queue.watchAsk(id, (reason) => asked.abort(new ServerCancelled(reason)));
          ctx
            .ask(ev.method, ev.params, asked.signal)
            .then(
              (result) => {
                settled(result);
                answer(id, { result });
              },
              // The client's own error, or ours (method not in the client's era: -32601; capability
              // not declared: -32602); anything else is -32603.
              (err: unknown) => {
                settled(undefined);
                answer(id, { error: toRpcError(err) });
              },
            )
            .finally(unwatch);
          break;
        }
        if (INPUT_METHODS.has(ctx.method)) {
          // Servers often ask several things at once (elicitation, sampling, roots): gather the
          // requests that follow within a short window into one input_required round.
          const asks: Array<Extract<CallEvent, { kind: 'request' }>> = [ev];
          for (let more = await target.queue.within(GATHER_MS, ctx.signal); more; more = await target.queue.within(GATHER_MS, ctx.signal)) {
            if (more.kind === 'request' && more.duplicate) refuseDuplicate(target, more.id);
            else if (more.kind === 'request' && more.method !== 'ping' && asks.length >= MAX_INPUT_REQUESTS) {
              // A round is bounded: the rest wait for the next one.
              target.queue.unshift(more);
              break;
            } else if (more.kind === 'request' && more.method !== 'ping') asks.push(more);
            else if (more.kind === 'progress') {
              const p = progressMap(more.params);
              if (p) ctx.onProgress(p as never);
            } else if (more.kind === 'log') ctx.onLog(logOf(more.params));
            else {
              target.queue.unshift(more);
              break;
            }
          }
          // Those the upstream cancelled while they were gathered are not asked; none left, no round.
          const open = asks.filter((a) => target.queue.isOpen(a.id));
          if (open.length === 0) break;
          // A server MUST NOT ask for capabilities the client did not declare (2026-07-28
          // basic/patterns/mrtr): the upstream's asks are refused and the call given up, and the
          // client learns which capabilities the call needs (-32021), as from a 2026 upstream.
          const missing = missingCapabilities(open, ctx.clientCapabilities);
          if (missing) {
            const refusal = new SwitchyardError('SWY_ERR_REQ_INPUT_UNSUPPORTED', { detail: `client did not declare ${capabilityNames(missing)}` });
            for (const a of open) answer(a.id, { error: refusal.toRpcError() });
            target.cancel('client did not declare a capability the call needs');
            throw new SwitchyardError('SWY_ERR_MODERN_CAPABILITY', { data: { requiredCapabilities: missing } });
          }
          const inputRequests: Record<string, { method: string; params: JsonObject }> = {};
          const pending = new Map<string, RequestId>();
          for (const a of open) {
            // `input-<id>`; ids that read the same (1 and "1") get `~2`, `~3`… after the first.
            let key = `input-${String(a.id)}`;
            for (let n = 2; key in inputRequests; n++) key = `input-${String(a.id)}~${n}`;
            inputRequests[key] = { method: a.method, params: a.params };
            pending.set(key, a.id);
            // A request the upstream cancels while the call is held leaves the round: the client,
            // which 2026-07-28 gives no cancellation of an input request, needs not answer it, and
            // an answer it sends all the same is ignored (basic/patterns/mrtr: extra entries are).
            target.queue.watchAsk(a.id, () => {
              pending.delete(key);
              delete inputRequests[key];
            });
          }
          const call: HeldCall = { ...target, pending, inputRequests, mount: ctx.mount };
          return { resultType: 'input_required', inputRequests, requestState: held.hold(call, ctx.method, ctx.params, bindingOf(ctx)) };
        }
        answer(ev.id, { error: { code: -32603, message: 'Switchyard cannot route this request to a client' } });
        break;
      }
    }
  }
}

/**
 * Checks a retry's `inputResponses`: absent, or an object whose every value is an object (each a
 * result: `ElicitResult`, `CreateMessageResult`, `ListRootsResult`).
 * @throws SwitchyardError SWY_ERR_REQ_PARAMS naming what is wrong
 * @see 2026-07-28 basic/patterns/mrtr; schema `InputResponses`
 */
function checkInputResponses(v: unknown): void {
  if (v === undefined) return;
  if (!isJsonObject(v)) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'inputResponses must be an object' });
  for (const [key, value] of Object.entries(v))
    if (!isJsonObject(value)) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `inputResponses.${key.slice(0, 64)} must be a result object` });
}

/**
 * Answers a server request whose id the upstream reused while its first request with that id is
 * open: -32600 (SWY_ERR_REQ_DUPLICATE_ID), sent straight away; the open one is not touched.
 * @see MCP 2025-11-25 basic#requests (an id MUST NOT be reused in the same session); JSON-RPC 2.0 §5.1
 */
function refuseDuplicate(target: DriveTarget, id: RequestId): void {
  target.respond(id, { error: new SwitchyardError('SWY_ERR_REQ_DUPLICATE_ID').toRpcError() });
}

/**
 * Continues a held call with a 2026 client's retry: answers the pending server requests from
 * `inputResponses`, then drives the call on. A missing answer returns the same
 * `input_required` round again (2026-07-28 basic/patterns/mrtr: missing responses ⇒ a new
 * InputRequiredResult, not an error).
 */
export async function resumeCall(
  call: HeldCall,
  ctx: RequestContext,
  held: CallHolder,
  progressMap: (p: JsonObject) => JsonObject | undefined,
): Promise<JsonObject> {
  const answers = (ctx.params.inputResponses ?? {}) as Record<string, JsonObject>;
  const missing = [...call.pending.keys()].filter((k) => answers[k] === undefined);
  if (missing.length > 0)
    return { resultType: 'input_required', inputRequests: call.inputRequests, requestState: held.hold(call, ctx.method, ctx.params, bindingOf(ctx)) };
  for (const [key, id] of call.pending) if (call.queue.settle(id)) call.respond(id, { result: answers[key] });
  return driveCall(call, ctx, held, progressMap);
}
