// Connection guards for a listening server (the MCP listener, the admin listener): a total and per-address cap, and a first-byte deadline.

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
   * Called for each connection the guard closes, with the catalogue code
   * (`SWY_ERR_HTTP_CONNECTION_LIMIT` or `SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT`), which bound closed
   * it (`per-address`, `at-limit` or `first-byte`) and the remote address, for logs and metrics.
   */
  onClose?: (event: ConnectionCloseEvent) => void;
}

/** What `ConnectionGuardOptions.onClose` is told of a connection the guard closed. */
export interface ConnectionCloseEvent {
  /** `SWY_ERR_HTTP_CONNECTION_LIMIT` (refused at accept) or `SWY_ERR_HTTP_FIRST_BYTE_TIMEOUT`. */
  code: ErrorCode;
  /**
   * `per-address`: its address had `maxPerAddress` open; `at-limit`: `maxConnections` were open
   * (Node closed it); `first-byte`: nothing arrived within `firstByteTimeoutMs`.
   */
  reason: 'per-address' | 'at-limit' | 'first-byte';
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
  /** Connections Node closed at accept because `maxConnections` were open. */
  refusedAtLimit: number;
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
type GuardedSocket = Socket & { [kAddressKey]?: string; [kFirstByteTimer]?: NodeJS.Timeout };

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
 *   otherwise hold their slots far longer; with every slot taken, new clients are locked out.
 * The per-address map holds one entry per address with an open connection, so it is bounded
 * by `maxConnections`.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID when a bound is not a positive integer
 * @see RFC 9112 §9.3 (persistent connections; servers may close idle ones), §9.6 (tear-down)
 */
export function guardConnections(server: Server, options: ConnectionGuardOptions): ConnectionGuard {
  const { maxConnections, maxPerAddress, onClose } = options;
  const firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  const streamReserveDivisor = options.streamReserveDivisor ?? DEFAULT_STREAM_RESERVE_DIVISOR;
  for (const [k, v] of Object.entries({ maxConnections, maxPerAddress, firstByteTimeoutMs, streamReserveDivisor })) {
    if (!Number.isSafeInteger(v) || v < 1) throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: `${k} must be a positive integer, got ${v}` });
  }
  const perAddress = new Map<string, number>();
  const waiting = new Set<NodeJS.Timeout>();
  const stats: ConnectionStats = { open: 0, addresses: 0, refusedPerAddress: 0, refusedAtLimit: 0, closedNoFirstByte: 0 };
  const streamsInAll = maxConnections - streamReserve(maxConnections, streamReserveDivisor);
  const streamsPerAddress = maxPerAddress - streamReserve(maxPerAddress, streamReserveDivisor);
  server.maxConnections = maxConnections;

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
    stats.open--;
    const key = this[kAddressKey] ?? '';
    const left = (perAddress.get(key) ?? 1) - 1;
    if (left <= 0) perAddress.delete(key);
    else perAddress.set(key, left);
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
    perAddress.set(key, n + 1);
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
  };
  const onDrop = (data?: { remoteAddress?: string }) => {
    stats.refusedAtLimit++;
    onClose?.({ code: 'SWY_ERR_HTTP_CONNECTION_LIMIT', reason: 'at-limit', remoteAddress: data?.remoteAddress });
  };
  // First in line, so a refused socket is gone before the HTTP server sets up a parser for it.
  server.prependListener('connection', onConnection);
  server.on('drop', onDrop);
  return {
    stats: () => ({ ...stats, addresses: perAddress.size }),
    roomForStream: (remoteAddress) => stats.open <= streamsInAll && (perAddress.get(addressKey(remoteAddress)) ?? 0) <= streamsPerAddress,
    close: () => {
      server.off('connection', onConnection);
      server.off('drop', onDrop);
      for (const t of waiting) clearTimeout(t);
      waiting.clear();
    },
  };
}
