// Connection guards for a listening server (the MCP listener, the admin listener): a total and per-address cap, and a first-byte deadline.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';
import { SwitchyardError, type ErrorCode } from '../core/errors.js';
import { DEFAULT_STREAM_RESERVE_DIVISOR, streamReserve } from '../core/limits.js';

/** Options of `guardConnections`. */
export interface ConnectionGuardOptions {
  /** Open TCP connections in all; Node closes one more at accept (`server.maxConnections`). */
  maxConnections: number;
  /** Open TCP connections from one remote address; one more is closed at accept. */
  maxPerAddress: number;
  /** Time a new connection has to send its first byte, ms (default 2,000); then it is closed. */
  firstByteTimeoutMs?: number;
  /**
   * 1/this of each bound is kept free of long-lived streams (default 16, `streamReserveDivisor`);
   * see `ConnectionGuard.roomForStream`.
   */
  streamReserveDivisor?: number;
  /**
   * For an `http.Server` whose requests are all short (the admin listener): with `maxConnections`
   * open, a new connection is not refused while one of them is idle, with no request under way
   * (none received yet, a request head not finished, or between keep-alive requests); the one idle
   * longest is closed to make room (reason `evicted-idle`) and the new one is accepted. Only when
   * every open connection has a request under way is the new one refused (`at-limit`). So peers
   * that hold connections without using them, from however many addresses, cannot keep a new
   * one (an orchestrator's probe) out. Default false: the total refuses at accept (the MCP
   * listener, whose streams are long-lived requests).
   * @see RFC 9112 §9.6 (a server may close an idle connection at any time)
   */
  evictIdleAtLimit?: boolean;
  /**
   * Called for each connection the guard closes, with the catalogue code
   * (`SWY_ERR_HTTP_CONNECTION_LIMIT` or `SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT`), which bound closed
   * it (`per-address`, `at-limit`, `evicted-idle` or `first-byte`) and the remote address, for logs and metrics.
   */
  onClose?: (event: ConnectionCloseEvent) => void;
}

/** What `ConnectionGuardOptions.onClose` is told of a connection the guard closed. */
export interface ConnectionCloseEvent {
  /** `SWY_ERR_HTTP_CONNECTION_LIMIT` (refused at accept) or `SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT`. */
  code: ErrorCode;
  /**
   * `per-address`: its address had `maxPerAddress` open; `at-limit`: `maxConnections` were open
   * (and, with `evictIdleAtLimit`, each had a request under way); `evicted-idle`: an idle
   * connection closed at `maxConnections` to make room for a new one (`evictIdleAtLimit`);
   * `first-byte`: nothing arrived within `firstByteTimeoutMs`.
   */
  reason: 'per-address' | 'at-limit' | 'evicted-idle' | 'first-byte';
  /** The peer's address as the socket gives it (`::ffff:` form included); undefined when unknown. */
  remoteAddress: string | undefined;
}

/** Counts a guard reports. */
export interface ConnectionStats {
  /** Connections open now (accepted and not yet closed). */
  open: number;
  /** Distinct remote addresses with an open connection. */
  addresses: number;
  /** Connections closed at accept because their address had `maxPerAddress` open. */
  refusedPerAddress: number;
  /** Connections closed at accept because `maxConnections` were open (with `evictIdleAtLimit`: none of them idle). */
  refusedAtLimit: number;
  /** Idle connections closed at `maxConnections` to make room for a new one (`evictIdleAtLimit`). */
  evictedIdle: number;
  /** Connections closed because no byte arrived within `firstByteTimeoutMs`. */
  closedNoFirstByte: number;
}

/** A guard installed on one server. */
export interface ConnectionGuard {
  stats(): ConnectionStats;
  /**
   * True when a request from `remoteAddress` may hold its connection open for a long-lived
   * stream: open connections stay below `maxConnections` minus a reserve, and that address's
   * below `maxPerAddress` minus a reserve (each reserve 1/`streamReserveDivisor` of its bound,
   * at least 1), so that streams never take the connections that POSTs need.
   */
  roomForStream(remoteAddress: string | undefined): boolean;
  /** Removes the guard's listeners and timers; open connections are left as they are. */
  close(): void;
}

/** Default first-byte deadline, ms. */
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 2_000;

/** Where a guarded socket keeps its address key and its first-byte timer (until it fires). */
const kAddressKey = Symbol('switchyard.addressKey');
const kFirstByteTimer = Symbol('switchyard.firstByteTimer');
/** Set on a socket the guard closed to make room: already uncounted when its 'close' comes. */
const kEvicted = Symbol('switchyard.evicted');
type GuardedSocket = Socket & { [kAddressKey]?: string; [kFirstByteTimer]?: NodeJS.Timeout; [kEvicted]?: boolean };

/**
 * With `evictIdleAtLimit`, Node's own cap (`server.maxConnections`) is this many times the guard's:
 * an evicted socket is uncounted by the guard at once, but by Node only once it has closed, so a
 * burst of connections at the limit must not meet Node's refusal first. It still bounds the open
 * sockets if closes lag.
 */
const EVICTION_HEADROOM = 2;

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client on a dual-stack listener. */
function addressKey(addr: string | undefined): string {
  if (addr === undefined) return '';
  return addr.startsWith('::ffff:') && addr.includes('.') ? addr.slice(7) : addr;
}

/**
 * Guards a listening (or about to listen) `net.Server`, `http.Server` or `https.Server`:
 * - sets `server.maxConnections`, so Node closes a connection over the total at accept;
 * - closes at once, before any byte is read, a connection whose remote address already has
 *   `maxPerAddress` open;
 * - closes a connection that has sent no byte `firstByteTimeoutMs` after accept. Node's own
 *   `headersTimeout` is checked on an interval and counts from the first byte, so idle sockets
 *   otherwise hold their slots far longer; with every slot taken, new clients are locked out;
 * - with `evictIdleAtLimit`, at `maxConnections` closes the connection idle longest to make room
 *   for a new one, refusing the new one only when none is idle.
 * The per-address map holds one entry per address with an open connection, and the idle set one
 * per open connection, so both are bounded by `maxConnections`.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when a bound is not a positive integer
 * @see RFC 9112 §9.3 (persistent connections; servers may close idle ones), §9.6 (tear-down)
 */
export function guardConnections(server: Server, options: ConnectionGuardOptions): ConnectionGuard {
  const { maxConnections, maxPerAddress, onClose } = options;
  const evicting = options.evictIdleAtLimit === true;
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  const streamReserveDivisor = options.streamReserveDivisor ?? DEFAULT_STREAM_RESERVE_DIVISOR;
  for (const [k, v] of Object.entries({ maxConnections, maxPerAddress, firstByteTimeoutMs, streamReserveDivisor })) {
    if (!Number.isSafeInteger(v) || v < 1) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `${k} must be a positive integer, got ${v}` });
  }
  const perAddress = new Map<string, number>();
  const waiting = new Set<NodeJS.Timeout>();
  const stats: ConnectionStats = { open: 0, addresses: 0, refusedPerAddress: 0, refusedAtLimit: 0, evictedIdle: 0, closedNoFirstByte: 0 };
  const streamsInAll = maxConnections - streamReserve(maxConnections, streamReserveDivisor);
  const streamsPerAddress = maxPerAddress - streamReserve(maxPerAddress, streamReserveDivisor);
  server.maxConnections = evicting ? maxConnections * EVICTION_HEADROOM : maxConnections;
  /**
   * With `evictIdleAtLimit`: the open connections with no request under way, the one idle longest
   * first (a Set keeps insertion order; a connection done with a request goes to the end). At most
   * the open connections, so at most `maxConnections`.
   */
  const idle = new Set<GuardedSocket>();

  /** Takes `socket` out of the counts (once: an evicted socket is taken out when it is evicted). */
  const uncount = (socket: GuardedSocket) => {
    stats.open--;
    const key = socket[kAddressKey] ?? '';
    const left = (perAddress.get(key) ?? 1) - 1;
    if (left <= 0) perAddress.delete(key);
    else perAddress.set(key, left);
  };

  // Per connection: its address key and its first-byte timer on the socket itself, and one close
  // listener shared by all (a closure, a once() wrapper and a fired timer per socket were some
  // 400 bytes held for the life of every idle stream).
  const onSocketClose = function (this: GuardedSocket) {
    const timer = this[kFirstByteTimer];
    if (timer) {
      clearTimeout(timer);
      waiting.delete(timer);
      this[kFirstByteTimer] = undefined;
    }
    idle.delete(this);
    if (!this[kEvicted]) uncount(this);
  };

  const onConnection = (plain: Socket) => {
    const socket = plain as GuardedSocket;
    const key = addressKey(socket.remoteAddress);
    const n = perAddress.get(key) ?? 0;
    if (n >= maxPerAddress) {
      stats.refusedPerAddress++;
      socket.destroy();
      onClose?.({ code: 'SWY_ERR_HTTP_CONNECTION_LIMIT', reason: 'per-address', remoteAddress: socket.remoteAddress });
      return;
    }
    if (evicting && stats.open >= maxConnections) {
      const oldest = idle.values().next().value;
      if (oldest === undefined) {
        stats.refusedAtLimit++;
        socket.destroy();
        onClose?.({ code: 'SWY_ERR_HTTP_CONNECTION_LIMIT', reason: 'at-limit', remoteAddress: socket.remoteAddress });
        return;
      }
      // RFC 9112 §9.6: a connection with no request under way may be closed; its peer opens another when it has one.
      idle.delete(oldest);
      oldest[kEvicted] = true;
      uncount(oldest);
      stats.evictedIdle++;
      oldest.destroy();
      onClose?.({ code: 'SWY_ERR_HTTP_CONNECTION_LIMIT', reason: 'evicted-idle', remoteAddress: oldest.remoteAddress });
    }
    perAddress.set(key, (perAddress.get(key) ?? 0) + 1);
    stats.open++;
    socket[kAddressKey] = key;
    const timer = setTimeout(() => {
      waiting.delete(timer);
      socket[kFirstByteTimer] = undefined;
      // bytesRead counts what the socket received even when the HTTP parser reads the handle directly.
      if (socket.bytesRead === 0 && !socket.destroyed) {
        stats.closedNoFirstByte++;
        socket.destroy();
        onClose?.({ code: 'SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT', reason: 'first-byte', remoteAddress: socket.remoteAddress });
      }
    }, firstByteTimeoutMs);
    timer.unref();
    waiting.add(timer);
    socket[kFirstByteTimer] = timer;
    // 'close' is emitted once: no once() wrapper.
    socket.on('close', onSocketClose);
    if (evicting) idle.add(socket);
  };
  /** A request's head is in (`evictIdleAtLimit`): its connection is busy until the response is done, then idle again, newest. */
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as GuardedSocket;
    const done = () => {
      if (!socket.destroyed && !socket[kEvicted]) idle.add(socket);
    };
    idle.delete(socket);
    // A listener after the server's own: a response already done (none is, yet) counts at once.
    if (res.closed) done();
    else res.once('close', done);
  };
  const onDrop = (data?: { remoteAddress?: string }) => {
    stats.refusedAtLimit++;
    onClose?.({ code: 'SWY_ERR_HTTP_CONNECTION_LIMIT', reason: 'at-limit', remoteAddress: data?.remoteAddress });
  };
  // First in line, so a refused socket is gone before the HTTP server sets up a parser for it.
  server.prependListener('connection', onConnection);
  server.on('drop', onDrop);
  if (evicting) server.on('request', onRequest);
  return {
    stats: () => ({ ...stats, addresses: perAddress.size }),
    roomForStream: (remoteAddress) => stats.open <= streamsInAll && (perAddress.get(addressKey(remoteAddress)) ?? 0) <= streamsPerAddress,
    close: () => {
      server.off('connection', onConnection);
      server.off('drop', onDrop);
      server.off('request', onRequest);
      idle.clear();
      for (const t of waiting) clearTimeout(t);
      waiting.clear();
    },
  };
}
