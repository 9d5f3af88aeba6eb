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
 * One logical stream of a 2025-era session (a POST's response stream or the GET stream).
 * The buffer holds at most `capacity` events; older ones are dropped (resumption from them
 * answers 400). With a mirror, each event is stored there first and sent after, in order, so
 * that an event a client has seen can always be replayed by another replica.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (ids unique per session, encode the stream)
 */
export class LogicalStream {
  readonly id: string;
  private readonly capacity: number;
  private seq = 0;
  private readonly buffer: Array<{ seq: number; data: string }> = [];
  private live: SseStream | undefined;
  private readonly mirror: StreamMirror | undefined;
  /** Mirrored streams: the store-then-send steps, in order. */
  private chain: Promise<void> = Promise.resolve();
  /** True once the stream's last message was sent. */
  done = false;

  constructor(id: string, capacity: number, mirror?: StreamMirror) {
    this.id = id;
    this.capacity = capacity;
    this.mirror = mirror;
  }

  /** True while a connection carries the stream. */
  get attached(): boolean {
    return this.live !== undefined && !this.live.closed;
  }

  /** True when event `seq` is the priming event or still buffered. */
  has(seq: number): boolean {
    if (seq === 0) return true;
    return this.buffer.length > 0 && seq >= this.buffer[0].seq - 1 && seq <= this.seq;
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
      this.buffer.push(ev);
      if (this.buffer.length > this.capacity) this.buffer.shift();
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
