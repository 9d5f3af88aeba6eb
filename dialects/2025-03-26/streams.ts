// A resumable SSE stream: events carry ids `<streamId>.<seq>`, the last N are kept for
// Last-Event-ID replay, and a new connection can take over a stream whose connection dropped.

import type { SseStream } from '../../src/core/exchange.js';
import { serialize, type RpcMessage } from '../../src/core/message.js';

/**
 * One logical stream of a 2025-era session (a POST's response stream or the GET stream).
 * The buffer holds at most `capacity` events; older ones are dropped (resumption from them
 * answers 400).
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (ids unique per session, encode the stream)
 */
export class LogicalStream {
  readonly id: string;
  private readonly capacity: number;
  private seq = 0;
  private readonly buffer: Array<{ seq: number; data: string }> = [];
  private live: SseStream | undefined;
  /** True once the stream's last message was sent. */
  done = false;

  constructor(id: string, capacity: number) {
    this.id = id;
    this.capacity = capacity;
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

  /** Sends (and buffers) one message. */
  send(msg: RpcMessage): void {
    const ev = { seq: ++this.seq, data: serialize(msg) };
    this.buffer.push(ev);
    if (this.buffer.length > this.capacity) this.buffer.shift();
    this.live?.send({ event: 'message', id: `${this.id}.${ev.seq}`, data: ev.data });
  }

  /**
   * Puts a connection under the stream: replays buffered events after `afterSeq`, then
   * carries new ones (or closes at once if the stream is done).
   * @param priming send an id-only priming event first (2025-11-25 clients only).
   */
  attach(live: SseStream, afterSeq: number, priming: boolean): void {
    this.live = live;
    if (priming) live.send({ id: `${this.id}.0`, data: '' });
    for (const ev of this.buffer) if (ev.seq > afterSeq) live.send({ event: 'message', id: `${this.id}.${ev.seq}`, data: ev.data });
    if (this.done) live.close();
    live.onClose(() => {
      if (this.live === live) this.live = undefined;
    });
  }

  /** Marks the stream finished and closes its connection. */
  end(): void {
    this.done = true;
    this.live?.close();
  }
}
