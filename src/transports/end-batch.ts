// Whole responses ended together: the first one answered in an event-loop turn is written at
// once, the rest that turn answers are written one after another once the turn's I/O callbacks
// have run (`setImmediate`), instead of each between two requests' work. Before connections are
// closed, the held ones are ended and the answers still going out are waited for (`settleAnswers`):
// those queued behind others on their connection, those a slow reader has not taken yet, and
// large answers still being written in pieces (`trackDelivery`).

import type { ServerResponse } from 'node:http';

/**
 * Responses a batch holds at most; the one that would go past it ends the batch at once (all of
 * it, in order). A batch is what one event-loop turn answers: with 32 connections, at most 32.
 */
export const MAX_BATCH = 256;

/**
 * Answers still going out that are tracked until they have (see `trackDelivery`); past this many,
 * further ones are not waited for at shutdown.
 */
export const MAX_QUEUED = 10_000;

/** How long `settleAnswers` waits at most for answers still going out by default, ms. */
export const SETTLE_ANSWERS_MS = 1_000;

/** What the batch ends: a node:http response with its head already set (`writeHead`). */
export type Endable = Pick<ServerResponse, 'end' | 'destroy' | 'destroyed' | 'socket' | 'once'>;

/** What `trackDelivery` watches: a response that emits `finish` once its last byte is handed to the OS, or `close`. */
export interface Deliverable {
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/** Responses waiting for the end of the turn, and their bodies: `[res, body, res, body, …]`. */
const held: Array<Endable | string | undefined> = [];
/** True from the first response of a turn until the batch is written. */
let inTurn = false;

/** The end of the turn: every held response is ended, in order. */
function endTurn(): void {
  inTurn = false;
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
    return;
  }
  // Not yet out: an answer to a later request on a connection has no socket until Node has sent
  // the earlier ones (HTTP/1.1 pipelining), and a reader that does not keep up leaves the rest of
  // an answer in the socket's buffer. Shutdown waits for both (settleAnswers), else they are cut.
  const socket = res.socket;
  if ((socket === null || socket.writableLength > 0) && !res.destroyed) trackDelivery(res);
}

/** Answers still going out: ended but not yet handed to the OS whole, or being written in pieces. */
const queued = new Set<Deliverable>();
/** Resolves the pending `settleAnswers` calls; run when `queued` empties. */
let settled: Array<() => void> = [];

/**
 * Tracks an answer that is still going out until it emits `finish` (its last byte handed to the
 * OS) or `close`, so that `settleAnswers` waits for it before the connections are closed. Past
 * `MAX_QUEUED` tracked answers, `res` is not tracked (it may then be cut at shutdown).
 */
export function trackDelivery(res: Deliverable): void {
  if (queued.size >= MAX_QUEUED || queued.has(res)) return;
  queued.add(res);
  const gone = (): void => {
    if (!queued.delete(res) || queued.size > 0) return;
    const waiting = settled;
    settled = [];
    for (const resolve of waiting) resolve();
  };
  res.once('finish', gone);
  res.once('close', gone);
}

/**
 * Ends every held response now, in order, then waits until the answers still going out (queued
 * behind earlier ones on their connections by HTTP/1.1 pipelining, left in a slow reader's socket
 * buffer, or being written in pieces: `trackDelivery`) have gone out or closed, at most
 * `maxWaitMs` (ms). For a server about to close its connections (fastify's `preClose`, the
 * gateway's close): such an answer would otherwise be cut. The turn's own `setImmediate` then
 * finds nothing held. Never rejects.
 * @see RFC 9112 §9.3.2 (pipelining: responses in the order of the requests)
 */
export function settleAnswers(maxWaitMs = SETTLE_ANSWERS_MS): Promise<void> {
  endHeld();
  if (queued.size === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      settled = settled.filter((r) => r !== done);
      resolve();
    }, maxWaitMs);
    timer.unref();
    settled.push(done);
  });
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
 * request 0.84–0.90×, req/s 1.10–1.20× (five paired runs). At one connection nothing changes (each response is its
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
