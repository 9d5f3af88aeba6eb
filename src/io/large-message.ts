// After a large message, the memory it came in is given back before the next one arrives.
//
// A message of megabytes arrives as many buffers (node:http's body chunks, libuv's reads of a
// child's stdout, undici's chunks of an upstream's answer), each freed only when V8 next collects
// its young generation. Between two large messages little else is allocated, so often no
// collection runs: the next message then finds none of the last one's memory free and takes
// fresh memory for all of it, and the process holds three copies of a payload where one
// collection would leave two (docs/performance.md, "Large messages give their memory back").
// So, once a message of at least LARGE_MESSAGE_BYTES has been parsed (its buffers are garbage
// from then on), one young-generation collection is asked for on the next turn of the event loop,
// after the turn's own work (the answer written). A collection of the young generation costs
// about a millisecond; parsing a message of a mebibyte costs more, so the cost stays a fraction of
// the work it follows, whatever the traffic.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The size from which a parsed message asks for a collection, bytes (1 MiB). */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;

/** V8's `gc` function of a context made for it (`--expose-gc`): `type` minor is a scavenge of the young generation. */
type Collect = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

/** V8's collection function: undefined until first wanted, null when this V8 does not give one. */
let collect: Collect | null | undefined;
/** A collection is scheduled for the next turn: the messages of one turn share it. */
let pending = false;
/** Collections run by {@link afterLargeMessage} in this process (for tests). */
let runs = 0;

/**
 * V8's `gc` function: the process's own when it was started with `--expose-gc` (its flags left
 * as they are); else one never put on the process's global: `--expose-gc` is set while one new
 * context is made, and unset again at once, so contexts made later (by `vm`, or a host) get none.
 * @see Node.js v8.setFlagsFromString; V8 flag --expose-gc
 */
function collector(): Collect | null {
  if (collect !== undefined) return collect;
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return (collect = own as Collect);
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('typeof gc === "function" ? gc : null');
    collect = typeof gc === 'function' ? (gc as Collect) : null;
  } catch {
    collect = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/**
 * Notes that a message of `bytes` bytes (or UTF-16 units, for one parsed from a string) was
 * parsed, its buffers garbage from now on. From {@link LARGE_MESSAGE_BYTES} on, one
 * young-generation collection runs on the next turn of the event loop (`setImmediate`, unref'd),
 * unless one is already scheduled. Never throws; where V8 gives no collection function, does
 * nothing.
 */
export function afterLargeMessage(bytes: number): void {
  if (bytes < LARGE_MESSAGE_BYTES || pending) return;
  pending = true;
  setImmediate(() => {
    pending = false;
    const gc = collector();
    if (!gc) return;
    runs++;
    gc({ type: 'minor' });
  }).unref();
}

/** How many collections {@link afterLargeMessage} has run in this process. */
export function largeMessageCollections(): number {
  return runs;
}
