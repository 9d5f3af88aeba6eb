// Resumption buffers for SSE streams (`Last-Event-ID`): in memory for one replica, or in Redis
// Streams so that a stream resumes on any replica with exactly the events it missed.

import { LRUCache } from 'lru-cache';
import { SwitchyardError } from '../core/errors.js';
import type { ReplayOptions } from '../core/replica.js';
import { defineRedisScript, type ClusterRedis } from './redis.js';

/** One stored SSE event: its `id` (as sent in the SSE `id` field) and its `data`. */
export interface StoredEvent {
  readonly id: string;
  readonly data: string;
}

/**
 * Events kept per SSE stream so a client that lost its connection can resume with
 * `Last-Event-ID`. Event ids are `<streamId>.<entry>`: unique across every stream of the store
 * and naming their stream (so `Last-Event-ID` maps back to it).
 * @see 2025-11-25 basic/transports#resumability-and-redelivery
 */
export interface EventStore {
  /**
   * Stores an event at the end of a stream (creating the stream), dropping the oldest past the bound.
   * @param streamId 1–128 visible ASCII characters (0x21–0x7E), unique within the session.
   * @param data the SSE `data` payload (usually one JSON-RPC message as JSON).
   * @returns the event id to send as the SSE `id`.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_EVENT_TOO_LARGE` over `maxEventBytes`;
   *   `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store) while Redis is down;
   *   `SWY_ERR_INTERNAL_FAULT` for a malformed `streamId`.
   */
  append(streamId: string, data: string): Promise<string>;
  /**
   * Stores event `seq` of a stream whose one producer numbers its events itself (0 for an SSE
   * priming event, then 1, 2, …, each higher than the last), so it can send the event id without
   * waiting for the store. The event id is `<streamId>.<seq>`. A stream is written by `append`
   * or by `put`, never both.
   * @param ttlMs time the stream is kept after this event, ms (default the store's `ttlMs`): a
   *   request's stream needs less than a session's.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_EVENT_TOO_LARGE`, `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store),
   *   `SWY_ERR_INTERNAL_FAULT` for a malformed `streamId`, or a `seq` not above the last one.
   */
  put(streamId: string, seq: number, data: string, ttlMs?: number): Promise<void>;
  /**
   * The events of `streamId` after `lastEventId`, oldest first (empty when nothing was missed).
   * @param lastEventId the client's `Last-Event-ID`: untrusted, any string.
   * @param options.allowGap an id of the stream older than its oldest kept event gives every kept
   *   event (the caller sees the gap in the ids) instead of `undefined`.
   * @returns `undefined` when the stream is unknown or expired, the id is malformed, names another
   *   stream, lies past the stream's last event, or (without `allowGap`) has already been dropped
   *   from the buffer (then the missed events cannot be replayed exactly).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` (Redis store) while Redis is down.
   * @see 2025-11-25 basic/transports#resumability-and-redelivery (replay only that stream's messages)
   */
  replayAfter(streamId: string, lastEventId: string, options?: ReplayOptions): Promise<StoredEvent[] | undefined>;
  /** Forgets a stream (it ended, or its session was deleted). */
  drop(streamId: string): Promise<void>;
}

/** Bounds shared by both stores. */
export interface EventStoreLimits {
  /** Events kept per stream (default 256, as `limits.resumeBufferEvents`); older ones are dropped. */
  readonly maxEventsPerStream?: number;
  /** Largest event stored, UTF-8 bytes of `data` (default 4 MiB); larger ones are refused. */
  readonly maxEventBytes?: number;
  /** Time a stream is kept after its last append, ms (default 30 minutes, as `limits.sessionIdleMs`). */
  readonly ttlMs?: number;
}

/** What {@link createMemoryEventStore} takes. */
export interface MemoryEventStoreOptions extends EventStoreLimits {
  /** Streams kept (default 10,000); past it the least recently appended stream is dropped. */
  readonly maxStreams?: number;
  /** Bytes kept per stream (default 8 MiB); older events are dropped to stay under it. */
  readonly maxBytesPerStream?: number;
  /** Bytes kept across all streams (default 256 MiB); past it the least recently appended streams are dropped. */
  readonly maxTotalBytes?: number;
  /** The clock, ms (default `performance.now`), for the TTL. */
  readonly now?: () => number;
}

/** What {@link createRedisEventStore} takes. */
export interface RedisEventStoreOptions extends EventStoreLimits {
  readonly redis: ClusterRedis;
  /** Key prefix (default `swy:`); keys are `<prefix>ev:<streamId>`. */
  readonly keyPrefix?: string;
}

const STREAM_ID = /^[\x21-\x7E]{1,128}$/;
const DEFAULTS = { maxEventsPerStream: 256, maxEventBytes: 4 * 1024 * 1024, ttlMs: 30 * 60_000 } as const;

function checkStreamId(streamId: string): void {
  if (typeof streamId !== 'string' || !STREAM_ID.test(streamId))
    throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'event store: streamId must be 1-128 visible ASCII characters' });
}

function checkSize(data: string, maxEventBytes: number): number {
  const bytes = Buffer.byteLength(data, 'utf8');
  if (bytes > maxEventBytes) throw new SwitchyardError('SWY_ERR_CLUSTER_EVENT_TOO_LARGE', { detail: `${bytes} bytes, limit ${maxEventBytes}` });
  return bytes;
}

/** Splits `<streamId>.<entry>` at the last dot; undefined for anything else. */
function splitEventId(eventId: unknown): { streamId: string; entry: string } | undefined {
  if (typeof eventId !== 'string' || eventId.length > 256) return undefined;
  const dot = eventId.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const streamId = eventId.slice(0, dot);
  return STREAM_ID.test(streamId) ? { streamId, entry: eventId.slice(dot + 1) } : undefined;
}

/**
 * The stream an event id belongs to (what `Last-Event-ID` resumes), or undefined for an id no
 * event store issues. Never throws.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (event ids SHOULD encode the stream)
 */
export function streamOfEventId(eventId: unknown): string | undefined {
  return splitEventId(eventId)?.streamId;
}

interface MemoryStream {
  /**
   * Events oldest first, by entry (the part of the id after the stream's): `append` numbers them
   * across the whole store so ids never repeat, even for a re-created stream; `put` takes the producer's.
   */
  events: Array<{ entry: string; data: string; bytes: number }>;
  bytes: number;
  /** The last `put` sequence number (-1 before the first). */
  lastPut: number;
}

function checkTtl(ttlMs: number | undefined): void {
  if (ttlMs !== undefined && (!Number.isSafeInteger(ttlMs) || ttlMs < 1))
    throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'event store: ttlMs must be a positive integer' });
}

function checkSeq(seq: number, after: number): void {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq <= after)
    throw new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { detail: 'event store: put needs an integer seq above the last one' });
}

/**
 * Creates an in-memory event store for one replica: bounded per stream (events and bytes), in
 * streams and in total bytes; the oldest events, and the least recently appended streams, are
 * dropped first. Async like the Redis store so callers do not depend on which one they have.
 */
export function createMemoryEventStore(options: MemoryEventStoreOptions = {}): EventStore {
  const maxEvents = options.maxEventsPerStream ?? DEFAULTS.maxEventsPerStream;
  const maxEventBytes = options.maxEventBytes ?? DEFAULTS.maxEventBytes;
  const maxBytesPerStream = options.maxBytesPerStream ?? 8 * 1024 * 1024;
  const maxTotalBytes = Math.max(options.maxTotalBytes ?? 256 * 1024 * 1024, maxBytesPerStream + 1);
  const now = options.now;
  const streams = new LRUCache<string, MemoryStream>({
    max: options.maxStreams ?? 10_000,
    ttl: options.ttlMs ?? DEFAULTS.ttlMs,
    ttlResolution: 0,
    maxSize: maxTotalBytes,
    ...(now ? { perf: { now } } : {}),
  });
  let seq = 0;

  const store = (streamId: string, entry: string, data: string, bytes: number, s: MemoryStream, ttl?: number) => {
    s.events.push({ entry, data, bytes });
    s.bytes += bytes;
    while (s.events.length > maxEvents || s.bytes > maxBytesPerStream) s.bytes -= s.events.shift()!.bytes;
    // Re-set so the stream counts as recently used, its TTL restarts and its size is re-counted.
    streams.set(streamId, s, { size: s.bytes + 1, ...(ttl !== undefined ? { ttl } : {}) });
  };

  return {
    async append(streamId, data) {
      checkStreamId(streamId);
      const bytes = checkSize(data, Math.min(maxEventBytes, maxBytesPerStream));
      const entry = String(++seq);
      store(streamId, entry, data, bytes, streams.get(streamId) ?? { events: [], bytes: 0, lastPut: -1 });
      return `${streamId}.${entry}`;
    },
    async put(streamId, n, data, ttl) {
      checkStreamId(streamId);
      checkTtl(ttl);
      const bytes = checkSize(data, Math.min(maxEventBytes, maxBytesPerStream));
      const s = streams.get(streamId) ?? { events: [], bytes: 0, lastPut: -1 };
      checkSeq(n, s.lastPut);
      s.lastPut = n;
      store(streamId, String(n), data, bytes, s, ttl);
    },
    async replayAfter(streamId, lastEventId, opts) {
      const parts = splitEventId(lastEventId);
      if (!parts || parts.streamId !== streamId || !/^(0|[1-9][0-9]{0,15})$/.test(parts.entry)) return undefined;
      const s = streams.get(streamId, { updateAgeOnGet: false });
      if (!s) return undefined;
      const at = s.events.findIndex((e) => e.entry === parts.entry);
      const all = (from: number) => s.events.slice(from).map((e) => ({ id: `${streamId}.${e.entry}`, data: e.data }));
      if (at >= 0) return all(at + 1);
      // Entries only grow within a stream: one below the oldest kept was there and was dropped.
      if (opts?.allowGap && s.events.length > 0 && Number(parts.entry) < Number(s.events[0].entry)) return all(0);
      return undefined;
    },
    async drop(streamId) {
      streams.delete(streamId);
    },
  };
}

/**
 * XADD with approximate trimming and the key's TTL renewed, in one atomic step.
 * KEYS[1] stream; ARGV[1] MAXLEN, ARGV[2] data, ARGV[3] TTL ms.
 */
const APPEND = defineRedisScript(
  `local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id`,
  () => true,
);

/** As APPEND at an explicit entry id. KEYS[1] stream; ARGV[1] MAXLEN, ARGV[2] entry id, ARGV[3] data, ARGV[4] TTL ms. */
const PUT = defineRedisScript(
  `redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`,
  () => true,
);

/** Redis stream entry ids: `<ms>-<seq>`. */
const ENTRY_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;
/** A `put` sequence number as it appears in an event id. */
const PUT_SEQ = /^(0|[1-9][0-9]{0,15})$/;

/**
 * `put` events are stored at entry `0-<seq + 1>`: the time part 0 never comes from `XADD *`, so
 * the two kinds of stream never read alike, and seq 0 (a priming event) still has a valid id.
 */
const putEntry = (seq: number) => `0-${seq + 1}`;
/** The event id part for a stored entry. */
function entryOfRedis(id: string): string {
  return id.startsWith('0-') ? String(Number(id.slice(2)) - 1) : id;
}

/** How far past MAXLEN a `~`-trimmed stream may run: Redis trims whole nodes (`stream-node-max-entries`, default 100). */
const APPROX_SLACK = 128;

/**
 * Creates an event store in Redis Streams: one stream key per SSE stream, appended with
 * `XADD … MAXLEN ~ N` (Redis trims whole nodes, so a stream holds N to about N + 100 events) and a
 * TTL renewed on every append; replay reads `XRANGE key <id> +` and requires the first entry to be
 * `<id>` itself, so a trimmed or unknown id is refused instead of replaying with a gap.
 * @see https://redis.io/docs/latest/commands/xadd/ (MAXLEN ~); https://redis.io/docs/latest/commands/xrange/
 */
export function createRedisEventStore(options: RedisEventStoreOptions): EventStore {
  const { redis } = options;
  const maxEvents = options.maxEventsPerStream ?? DEFAULTS.maxEventsPerStream;
  const maxEventBytes = options.maxEventBytes ?? DEFAULTS.maxEventBytes;
  const ttlMs = options.ttlMs ?? DEFAULTS.ttlMs;
  const prefix = `${options.keyPrefix ?? 'swy:'}ev:`;

  return {
    async append(streamId, data) {
      checkStreamId(streamId);
      checkSize(data, maxEventBytes);
      const id = await redis.evalScript(APPEND, [prefix + streamId], [String(maxEvents), data, String(ttlMs)]);
      return `${streamId}.${String(id)}`;
    },
    async put(streamId, n, data, ttl) {
      checkStreamId(streamId);
      checkTtl(ttl);
      checkSeq(n, -1);
      checkSize(data, maxEventBytes);
      await redis.evalScript(PUT, [prefix + streamId], [String(maxEvents), putEntry(n), data, String(ttl ?? ttlMs)]);
    },
    async replayAfter(streamId, lastEventId, opts) {
      const parts = splitEventId(lastEventId);
      if (!parts || parts.streamId !== streamId) return undefined;
      const from = PUT_SEQ.test(parts.entry) ? putEntry(Number(parts.entry)) : ENTRY_ID.test(parts.entry) ? parts.entry : undefined;
      if (from === undefined) return undefined;
      const limit = maxEvents + APPROX_SLACK;
      const reply = (await redis.command(['XRANGE', prefix + streamId, from, '+', 'COUNT', String(limit + 1)])) as Array<[string, string[]]> | null;
      const events = (entries: Array<[string, string[]]>) =>
        entries.map(([id, fields]) => ({ id: `${streamId}.${entryOfRedis(id)}`, data: fields[fields.indexOf('d') + 1] ?? '' }));
      if (!reply || reply.length === 0) return undefined;
      // Inclusive range: the first entry must be the client's last event, or events between were trimmed.
      if (reply[0][0] === from && reply.length <= limit) return events(reply.slice(1));
      // With a gap allowed: the client's event was trimmed (an older entry of the same kind of
      // stream), so every entry the range found is after it. Never more than the stream holds.
      if (opts?.allowGap && reply[0][0] !== from && from.startsWith('0-') === reply[0][0].startsWith('0-')) return events(reply.slice(0, limit));
      return undefined;
    },
    async drop(streamId) {
      checkStreamId(streamId);
      await redis.command(['DEL', prefix + streamId]);
    },
  };
}
