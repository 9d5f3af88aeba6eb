// A resumable SSE stream: events carry ids `<streamId>.<seq>`, the last N are kept for
// Last-Event-ID replay, and a new connection can take over a stream whose connection dropped.
// With replicas, every event is also stored in a shared buffer before it is sent.

import type { SseStream } from '../../src/core/exchange.js';
import { serialize, type RpcMessage } from '../../src/core/message.js';

/**
 * Decides, at each delivery, what of a kept message the client gets now: the message, another
 * one in its place, or null (nothing; the event's id is skipped). Synchronous; must not throw.
 */
export type Admit = (msg: RpcMessage) => RpcMessage | null;

/**
 * Event `data` as a client gets it when `admit` decides it now (parsed again from what was kept):
 * `data` itself, the serialization of what `admit` put in its place, or null. Data that is not a
 * JSON object (the priming event's empty data) passes as it is.
 */
export function admitted(data: string, admit: Admit | undefined): string | null {
  if (!admit || data === '') return data;
  let msg: RpcMessage;
  try {
    msg = JSON.parse(data) as RpcMessage;
  } catch {
    return data;
  }
  if (msg === null || typeof msg !== 'object') return data;
  const out = admit(msg);
  return out === null ? null : out === msg ? data : serialize(out);
}

/**
 * Where a stream's events are stored for other replicas (a shared resumption buffer). `put`
 * never rejects: a failed store is logged by the mirror and the event still goes out (local
 * work continues; only resumption elsewhere loses it).
 */
export interface StreamMirror {
  /** @param last true for the stream's final message (its buffer may then be kept for less long). */
  put(seq: number, data: string, last?: boolean): Promise<void>;
}

/** One event a stream keeps: its sequence number and data (as given, before any `admit`). */
interface KeptEvent {
  readonly seq: number;
  readonly data: string;
  /** True when `admit` refused it as it arrived: a drop of it is not an event the client lost. */
  hidden?: boolean;
}

/**
 * The resumption buffers' shared bound (`limits.resumeBufferBytes`): what every stream of a
 * mount's 2025 sessions keeps, together, in characters of serialized events.
 */
export interface ResumeBudget {
  used: number;
  readonly max: number;
}

/** What kind of stream a {@link LogicalStream} is: a POST's answer, or the session's GET stream. */
export type StreamKind = 'request' | 'get';

/** How a {@link LogicalStream} keeps its events. */
export interface LogicalStreamOptions {
  /**
   * `get`: the session's GET stream, which a `Last-Event-ID` older than its buffer still resumes
   * (with what it holds); `request`: a POST's answer, which it does not (its response must not be
   * skipped silently).
   */
  readonly kind: StreamKind;
  /** Events kept at most (`limits.resumeBufferEvents`); the oldest is dropped first. */
  readonly capacity: number;
  /** Where each event is stored for other replicas before it is sent. */
  readonly mirror?: StreamMirror;
  /** The shared bound on kept characters (none: only the stream's own bounds apply). */
  readonly budget?: ResumeBudget;
  /** Characters of serialized events this stream keeps at most (default: no bound of its own). */
  readonly maxChars?: number;
  /**
   * Decides each event at delivery, live or replayed from the buffer (the session's notification
   * filters for the identity in force then): the stream keeps what it is given, unfiltered, and
   * a resumption gets what the client may see when it resumes. Absent: every event as kept.
   */
  readonly admit?: Admit;
  /**
   * Told, after a message was handled, how many events were just dropped (oldest first, at a
   * bound) or not kept before any connection carried them: events a client resuming now never
   * gets. Events already written to a connection are not counted (they may have arrived).
   */
  readonly onDrop?: (events: number) => void;
}

/**
 * One logical stream of a 2025-era session (a POST's response stream or the GET stream).
 * Its buffer is a ring of the latest events (at most `capacity`, at most `maxChars` characters,
 * and within the `budget` it shares with the mount's other streams); the oldest is dropped first.
 * It keeps events while no connection carries it, so a client that comes back with
 * `Last-Event-ID` gets what it missed, then the rest live. A POST stream refuses a resumption
 * from before its buffer (400); a GET stream resumes it with what the buffer still holds (a gap,
 * never a duplicate or a reordering). With a mirror, each event is stored there first and sent
 * after, in order, so that an event a client has seen can always be replayed by another replica.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (ids unique per session, encode
 *   the stream; replay only that stream's messages); 2025-03-26 basic/transports#resumability-and-redelivery
 */
export class LogicalStream {
  readonly id: string;
  readonly kind: StreamKind;
  private readonly capacity: number;
  private readonly maxChars: number;
  private seq = 0;
  /** Kept events; `hidden`: one `admit` refused when it arrived (never counted as lost). */
  private readonly buffer: KeptEvent[] = [];
  private readonly budget: ResumeBudget | undefined;
  /** Characters of `buffer` (counted in `budget` too, when there is one). */
  private kept = 0;
  /** The last event that could not be kept: resuming a POST stream from before it is refused (0: none). */
  private floor = 0;
  /** The highest event written to a connection (0: none). */
  private sentSeq = 0;
  /** Unsent events dropped since the last report to `onDrop`. */
  private lost = 0;
  private readonly onDrop: ((events: number) => void) | undefined;
  private readonly admit: Admit | undefined;
  /** True once released: its events are sent, never kept. */
  private released = false;
  private live: SseStream | undefined;
  private readonly mirror: StreamMirror | undefined;
  /** Mirrored streams: the store-then-send steps, in order. */
  private chain: Promise<void> = Promise.resolve();
  /** True once the stream's last message was sent. */
  done = false;

  constructor(id: string, options: LogicalStreamOptions) {
    this.id = id;
    this.kind = options.kind;
    this.capacity = options.capacity;
    this.maxChars = options.maxChars ?? Infinity;
    this.mirror = options.mirror;
    this.budget = options.budget;
    this.onDrop = options.onDrop;
    this.admit = options.admit;
  }

  /**
   * Keeps `ev` for resumption within the capacity, the stream's own character bound and the
   * shared budget (oldest of this stream first).
   * @returns false when it could not be kept at all.
   */
  private keep(ev: KeptEvent): boolean {
    if (this.released) return false;
    const budget = this.budget;
    const size = ev.data.length;
    const over = () => this.kept + size > this.maxChars || (budget !== undefined && budget.used + size > budget.max);
    while (this.buffer.length > 0 && over()) this.dropOldest();
    if (over()) {
      // Not kept: no resumption can replay it, so a POST stream's may not start before it.
      this.floor = ev.seq;
      return false;
    }
    if (budget) budget.used += size;
    this.kept += size;
    this.buffer.push(ev);
    if (this.buffer.length > this.capacity) this.dropOldest();
    return true;
  }

  private dropOldest(): void {
    const ev = this.buffer.shift();
    if (!ev) return;
    if (this.budget) this.budget.used -= ev.data.length;
    this.kept -= ev.data.length;
    if (ev.seq > this.sentSeq && ev.hidden !== true) this.lost++;
  }

  /** Reports the unsent events dropped since the last report. */
  private reportLost(): void {
    const n = this.lost;
    if (n === 0) return;
    this.lost = 0;
    try {
      this.onDrop?.(n);
    } catch {
      // an observer must not break the stream
    }
  }

  /** Gives the kept events back to the budget (the stream was forgotten); later events are sent, not kept. */
  release(): void {
    if (this.budget) this.budget.used -= this.kept;
    this.kept = 0;
    this.buffer.length = 0;
    this.released = true;
  }

  /** True while a connection carries the stream. */
  get attached(): boolean {
    return this.live !== undefined && !this.live.closed;
  }

  /** True when event `seq` is the priming event or still buffered. */
  has(seq: number): boolean {
    if (seq < this.floor || seq > this.seq) return false;
    if (seq === 0) return true;
    return seq >= (this.buffer.length > 0 ? this.buffer[0].seq - 1 : this.seq);
  }

  /** True when event `seq` was issued on this stream (0, the priming event, up to the latest), kept or not. */
  issued(seq: number): boolean {
    return Number.isSafeInteger(seq) && seq >= 0 && seq <= this.seq;
  }

  /**
   * Events after `seq` that a resumption from it cannot replay any more (dropped from the buffer,
   * or never kept): 0 when it replays everything the stream sent after `seq`.
   */
  missedAfter(seq: number): number {
    // The buffer is contiguous: an event is not kept only once the stream's own are all dropped.
    const first = this.buffer.length > 0 ? this.buffer[0].seq : this.seq + 1;
    return Math.max(0, first - seq - 1);
  }

  /** Resolves once every event sent so far has been stored (mirrored streams) and written. */
  flushed(): Promise<void> {
    return this.chain;
  }

  /** Runs `step` now (no mirror) or after the stores and sends queued before it. */
  private then(step: () => void): void {
    if (!this.mirror) return step();
    this.chain = this.chain.then(step);
  }

  /** Writes `ev` (as `data`: what the client may see of it now) to the connection, if one carries the stream; true when it was written. */
  private write(live: SseStream | undefined, ev: KeptEvent, data = ev.data): boolean {
    if (!live?.send({ event: 'message', id: `${this.id}.${ev.seq}`, data })) return false;
    if (ev.seq > this.sentSeq) this.sentSeq = ev.seq;
    return true;
  }

  /**
   * Sends (and buffers) one message: written now while a connection carries the stream, else
   * only kept, for the connection that resumes it.
   * @param last the stream's final message (a POST stream's response).
   */
  send(msg: RpcMessage, last = false): void {
    const ev: KeptEvent = { seq: ++this.seq, data: serialize(msg) };
    const mirror = this.mirror;
    if (mirror) this.chain = this.chain.then(() => mirror.put(ev.seq, ev.data, last));
    this.then(() => {
      // Decided when it is written (kept as given, for a replay to decide again then).
      const shown = this.admit ? this.admit(msg) : msg;
      if (shown === null) ev.hidden = true;
      const kept = this.keep(ev);
      const written = shown !== null && this.write(this.live, ev, shown === msg ? ev.data : serialize(shown));
      if (!written && !kept && !this.released && shown !== null) this.lost++;
      this.reportLost();
    });
  }

  /**
   * Puts a connection under the stream: replays buffered events after `afterSeq`, then
   * carries new ones (or closes at once if the stream is done).
   * @param priming send an id-only priming event first (2025-11-25 clients only); mirrored
   *   streams store it first, so a resumption from it works on any replica.
   */
  attach(live: SseStream, afterSeq: number, priming: boolean): void {
    this.live = live;
    live.onClose(() => {
      if (this.live === live) this.live = undefined;
    });
    // The buffer holds only events already handled (stored first, when mirrored): replaying it
    // now and letting queued events follow sends each once, in order.
    const replay = () => {
      if (this.live !== live) return;
      if (priming) live.send({ id: `${this.id}.0`, data: '' });
      for (const ev of this.buffer) {
        if (ev.seq <= afterSeq) continue;
        // Decided again now: what the identity and policy in force may see, not what they were at its arrival.
        const data = admitted(ev.data, this.admit);
        if (data !== null) this.write(live, ev, data);
      }
      if (this.done) live.close();
    };
    const mirror = this.mirror;
    if (priming && mirror) this.chain = this.chain.then(() => mirror.put(0, '')).then(replay);
    else replay();
  }

  /** Marks the stream finished and closes its connection (after the events queued before it). */
  end(): void {
    this.then(() => {
      this.done = true;
      this.live?.close();
    });
  }
}
