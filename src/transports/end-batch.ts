// Whole responses ended together: the first one answered in an event-loop turn is written at
// once, the rest that turn answers are written one after another once the turn's I/O callbacks
// have run (`setImmediate`), instead of each between two requests' work.

import type { ServerResponse } from 'node:http';

/**
 * Responses a batch holds at most; the one that would go past it ends the batch at once (all of
 * it, in order). A batch is what one event-loop turn answers: with 32 connections, at most 32.
 */
export const MAX_BATCH = 256;

/** What the batch ends: a node:http response with its head already set (`writeHead`). */
export type Endable = Pick<ServerResponse, 'end' | 'destroy'>;

/** Responses waiting for the end of the turn, and their bodies: `[res, body, res, body, …]`. */
const held: Array<Endable | string | undefined> = [];
/** True from the first response of a turn until the batch is written. */
let inTurn = false;

/** The end of the turn: every held response is ended, in order. */
function endTurn(): void {
  inTurn = false;
  endHeld();
}

/**
 * Ends every held response now, in order (before a server closes its connections: a held
 * response would otherwise be cut unanswered). The turn's own `setImmediate` then finds none.
 */
export function endHeldNow(): void {
  endHeld();
}

function endHeld(): void {
  // The length is read each time round: a response that one of these ends adds is ended too.
  for (let i = 0; i < held.length; i += 2) endOne(held[i] as Endable, held[i + 1] as string | undefined);
  held.length = 0;
}

function endOne(res: Endable, body: string | undefined): void {
  try {
    if (body === undefined) res.end();
    else res.end(body);
  } catch {
    // A response that cannot be ended (its socket failed under it) is cut; the others still go.
    res.destroy();
  }
}

/**
 * Ends `res` with `body` (a whole JSON body, or none; the head is already set, with its
 * Content-Length when there is a body).
 * The first response of an event-loop turn is ended now; later ones in the same turn wait until
 * the turn's I/O callbacks have run (the check phase, `setImmediate`), then are ended in order.
 *
 * Why: each write wakes the reading process if it sleeps (on this 2-core VM the largest kernel
 * cost of a small request: docs/performance.md). Written one by one between requests' work, the
 * reader is woken for most of them; written together, about once a turn, and its next requests
 * arrive together too. Measured with `bench/ab.mjs` on the 2026-07-28 demo path at 16
 * connections: the load generator's context switches per request 0.53 → 0.12, server CPU per
 * request 0.84–0.90×, req/s 1.14–1.20×. At one connection nothing changes (each response is its
 * turn's first). A response waits at most for the rest of its turn's work, and a
 * batch never holds more than `MAX_BATCH`.
 * @see Node.js guide "The Node.js Event Loop" (the poll and check phases; setImmediate)
 */
export function endInTurn(res: Endable, body?: string): void {
  if (!inTurn) {
    inTurn = true;
    setImmediate(endTurn);
    endOne(res, body);
    return;
  }
  if (held.length >= 2 * MAX_BATCH) endHeld();
  held.push(res, body);
}
