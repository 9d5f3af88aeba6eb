// A resumable SSE stream: events carry ids `<streamId>.<seq>`, the last N are kept for
// Last-Event-ID replay, and a new connection can take over a stream whose connection dropped.
// With replicas, every event is also stored in a shared buffer before it is sent.

import type { SseStream } from '../../src/core/exchange.js';
import { serialize, type RpcMessage } from '../../src/core/message.js';

/**
 * Where a stream's events are stored for other replicas (a shared resumption buffer). `put`
 * never rejects: a failed store is logged by the mirror and the event still goes out (local
 * work continues; only resumption elsewhere loses it).
 */
export interface StreamMirror {
  /** @param last true for the stream's final message (its buffer may then be kept for less long). */
  put(seq: number, data: string, last?: boolean): Promise<void>;
}

/**
 * The resumption buffers' shared bound (`limits.resumeBufferBytes`): what every stream of a
 * mount's 2025 sessions keeps, together, in characters of serialized events.
 */
export interface ResumeBudget {
  used: number;
  readonly max: number;
}

/**
 * One logical stream of a 2025-era session (a POST's response stream or the GET stream).
 * The buffer holds at most `capacity` events, and shares `budget` with the mount's other
 * streams; older ones are dropped (resumption from them answers 400). With a mirror, each event is stored there first and sent after, in order, so
 * that an event a client has seen can always be replayed by another replica.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (ids unique per session, encode the stream)
 */
export class LogicalStream {
  readonly id: string;
  private readonly capacity: number;
  private seq = 0;
  private readonly buffer: Array<{ seq: number; data: string }> = [];
  private readonly budget: ResumeBudget | undefined;
  /** Characters of `buffer` counted in `budget`. */
  private kept = 0;
  /** The last event that could not be kept: resuming from before it is refused (0: none). */
  private floor = 0;
  /** True once released: its events are sent, never kept. */
  private released = false;
  private live: SseStream | undefined;
  private readonly mirror: StreamMirror | undefined;
  /** Mirrored streams: the store-then-send steps, in order. */
  private chain: Promise<void> = Promise.resolve();
  /** True once the stream's last message was sent. */
  done = false;

  /** @param budget the shared bound on kept characters (none: only `capacity` bounds the buffer). */
  constructor(id: string, capacity: number, mirror?: StreamMirror, budget?: ResumeBudget) {
    this.id = id;
    this.capacity = capacity;
    this.mirror = mirror;
    this.budget = budget;
  }

  /** Keeps `ev` for resumption within the capacity and the shared budget (oldest of this stream first). */
  private keep(ev: { seq: number; data: string }): void {
    const budget = this.budget;
    if (this.released) return;
    if (budget) {
      const size = ev.data.length;
      while (this.buffer.length > 0 && budget.used + size > budget.max) this.dropOldest();
      if (budget.used + size > budget.max) {
        // Sent, not kept: no resumption can replay it, so none may start before it.
        this.floor = ev.seq;
        return;
      }
      budget.used += size;
      this.kept += size;
    }
    this.buffer.push(ev);
    if (this.buffer.length > this.capacity) this.dropOldest();
  }

  private dropOldest(): void {
    const ev = this.buffer.shift();
    if (ev && this.budget) {
      this.budget.used -= ev.data.length;
      this.kept -= ev.data.length;
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

  /** Runs `step` now (no mirror) or after the stores and sends queued before it. */
  private then(step: () => void): void {
    if (!this.mirror) return step();
    this.chain = this.chain.then(step);
  }

  /**
   * Sends (and buffers) one message.
   * @param last the stream's final message (a POST stream's response).
   */
  send(msg: RpcMessage, last = false): void {
    const ev = { seq: ++this.seq, data: serialize(msg) };
    const mirror = this.mirror;
    if (mirror) this.chain = this.chain.then(() => mirror.put(ev.seq, ev.data, last));
    this.then(() => {
      this.keep(ev);
      this.live?.send({ event: 'message', id: `${this.id}.${ev.seq}`, data: ev.data });
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
    // The buffer holds only events already sent (stored first, when mirrored): replaying it now
    // and letting queued events follow sends each once.
    const replay = () => {
      if (this.live !== live) return;
      if (priming) live.send({ id: `${this.id}.0`, data: '' });
      for (const ev of this.buffer) if (ev.seq > afterSeq) live.send({ event: 'message', id: `${this.id}.${ev.seq}`, data: ev.data });
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
