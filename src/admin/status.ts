// What the admin listener reports: the StatusSource the gateway implements, and a recorder that
// keeps recent call latencies, request and error rates and refusals in fixed-size windows.

import type { Logger } from '../log/logger.js';
import { OTHER, codeLabel, isErrorOutcome, methodLabel } from '../telemetry/names.js';
import { subscribeChannels } from '../telemetry/subscribe.js';

/** An upstream's state: `starting` (spawned or connecting), `up`, `down`, `draining` (finishing its calls before a stop). */
export type UpstreamState = 'starting' | 'up' | 'down' | 'draining';

/** `{ name, version, title? }` an upstream reported (MCP Implementation). */
export interface ServerInfo {
  name: string;
  version: string;
  title?: string;
}

/** One upstream as the gateway sees it now. */
export interface UpstreamStatus {
  /** Config name. */
  name: string;
  /** The revision it speaks (`2026-07-28`, `2025-06-18`, …), or `unknown` before it answered. */
  era: string;
  /** `stdio`, `http`, `embedded`, `aggregate`. */
  transport: string;
  state: UpstreamState;
  /** Why it last failed, as text. */
  lastError?: string;
  /** Calls waiting on it now. */
  inFlight: number;
  /** What it reported about itself. */
  serverInfo?: ServerInfo;
}

/** One dialect served on a mount. */
export interface DialectStatus {
  /** Dialect id (`2026-07-28`, `2025-03-26`, `2024-11-05`). */
  id: string;
  /** Open sessions. */
  sessions: number;
  /** Open streams. */
  streams: number;
}

/** One mount. */
export interface MountStatus {
  /** Config name. */
  name: string;
  /** Where clients reach it (e.g. `http://127.0.0.1:7600/mcp`). */
  url: string;
  dialects: DialectStatus[];
}

/** Readiness: ready, or the reasons it is not; and what it serves without while ready (or not). */
export interface Readiness {
  ready: boolean;
  reasons: string[];
  /**
   * Shared dependencies that are down but do not make this replica unready (a cluster's Redis):
   * reported, never a reason. Absent or empty: nothing is degraded.
   */
  degraded?: string[];
}

/** A replica of a cluster (docs/scaling.md): which one, which key it seals with, and its Redis. */
export interface ClusterStatus {
  /** `cluster.replicaId` (or `SWITCHYARD_REPLICA_ID`, or the default host name and random bytes). */
  replicaId: string;
  /** The id of its current cluster key (8 characters derived from the key); replicas that differ here cannot open each other's session ids. */
  keyId: string;
  /** `off` without `cluster.redis`. */
  redis: 'off' | 'up' | 'down';
  /** Only while Redis is up but refuses writes (full: an `OOM` reply; a read-only replica: `READONLY`); `degraded` says why. */
  writes?: 'refused';
  /** With `writes`: when the first refused write of this spell came, ISO 8601. */
  writesRefusedAt?: string;
}

/** What the gateway exposes to the admin listener; every call returns the state now. */
export interface StatusSource {
  upstreams(): readonly UpstreamStatus[];
  mounts(): readonly MountStatus[];
  ready(): Readiness;
  /** True from the moment shutdown began (then /readyz answers 503). */
  draining(): boolean;
  /** The replica, with a `cluster` section; absent or undefined without one. */
  cluster?(): ClusterStatus | undefined;
}

/** An upstream in `/status.json`: the source's view plus the recorder's last five minutes. */
export interface UpstreamReport extends UpstreamStatus {
  calls: {
    /** Window, ms (300000). */
    windowMs: number;
    /** Calls that ended in the window. */
    count: number;
    /** Of them, calls that ended in an error. */
    errors: number;
    /** Median duration, ms (within 5 %); null without calls. */
    p50Ms: number | null;
    /** 99th percentile duration, ms (within 5 %); null without calls. */
    p99Ms: number | null;
  };
}

/** Request and error counts of one method, one entry per slot, oldest first. */
export interface MethodSeries {
  /** An MCP method name, or `_other`. */
  method: string;
  requests: number[];
  errors: number[];
}

/** One refusal. */
export interface RefusalReport {
  /** When, ISO 8601. */
  at: string;
  code: string;
  /** HTTP status sent. */
  status: number;
  mount?: string;
  dialect?: string;
}

/** The `/status.json` document (docs/operations.md describes it). */
export interface StatusDocument {
  /** When it was made, ISO 8601. */
  generatedAt: string;
  ready: boolean;
  /** Why it is not ready (empty when ready). */
  reasons: string[];
  /** Shared dependencies that are down without making it unready, e.g. `cluster: redis down (…)` (empty when none). */
  degraded: string[];
  draining: boolean;
  /** With a `cluster` section only: this replica's id, its key id and its Redis state. */
  cluster?: ClusterStatus;
  upstreams: UpstreamReport[];
  mounts: MountStatus[];
  requests: {
    /** Slot width, ms (10000). */
    slotMs: number;
    /** Window, ms (600000): `windowMs / slotMs` slots. */
    windowMs: number;
    /** Start of the oldest slot, ms since the epoch. */
    startMs: number;
    /** Methods with at least one request in the window. */
    methods: MethodSeries[];
  };
  /** The last refusals, newest first (at most 100). */
  refusals: RefusalReport[];
}

/** Inputs of {@link createStatusRecorder}. */
export interface StatusRecorderOptions {
  /** The clock, ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Upstreams whose calls are recorded (default 256); calls to further ones are not. */
  maxUpstreams?: number;
  /** Where a failing observer reports. */
  log?: Logger;
}

/** A running recorder. */
export interface StatusRecorder {
  /** The `/status.json` document: `source` now, merged with the recorded windows. */
  snapshot(source: StatusSource): StatusDocument;
  /** Unsubscribes from the channels. */
  close(): void;
}

/** Slot width of every window, ms. */
export const SLOT_MS = 10_000;
/** Window of the per-upstream latency quantiles, ms. */
export const CALL_WINDOW_MS = 300_000;
/** Window of the per-method request and error counts, ms. */
export const REQUEST_WINDOW_MS = 600_000;
/** Refusals kept. */
export const REFUSALS_KEPT = 100;

const CALL_SLOTS = CALL_WINDOW_MS / SLOT_MS;
const REQUEST_SLOTS = REQUEST_WINDOW_MS / SLOT_MS;
/** Longest text taken from the source or a channel into the document, characters. */
const MAX_TEXT_CHARS = 1000;

// Latencies go into log-spaced bins: bin 0 holds ≤ 0.1 ms, bin b ≥ 1 holds (0.1·1.1^(b-1), 0.1·1.1^b]
// ms, the last bin everything above (0.1·1.1^168 ms ≈ 15 min). A bin's geometric middle is within
// 5 % of every value in it, and a slot's min and max clamp the estimate.
const BIN_BASE_MS = 0.1;
const BIN_RATIO = 1.1;
const BINS = 170;
const LOG_RATIO = Math.log(BIN_RATIO);

function binOf(ms: number): number {
  if (!(ms > BIN_BASE_MS)) return 0;
  return Math.min(BINS - 1, 1 + Math.floor(Math.log(ms / BIN_BASE_MS) / LOG_RATIO - 1e-9));
}

function binMiddle(bin: number): number {
  return bin === 0 ? BIN_BASE_MS : BIN_BASE_MS * Math.pow(BIN_RATIO, bin - 0.5);
}

/** Five minutes of one upstream's calls: a histogram, count, errors, min and max per slot. */
class CallWindow {
  private readonly slotIds = new Float64Array(CALL_SLOTS).fill(-1);
  private readonly bins = new Uint32Array(CALL_SLOTS * BINS);
  private readonly counts = new Uint32Array(CALL_SLOTS);
  private readonly errors = new Uint32Array(CALL_SLOTS);
  private readonly mins = new Float64Array(CALL_SLOTS);
  private readonly maxs = new Float64Array(CALL_SLOTS);

  record(slot: number, ms: number, error: boolean): void {
    const i = slot % CALL_SLOTS;
    if (this.slotIds[i] !== slot) {
      this.slotIds[i] = slot;
      this.bins.fill(0, i * BINS, (i + 1) * BINS);
      this.counts[i] = 0;
      this.errors[i] = 0;
      this.mins[i] = Infinity;
      this.maxs[i] = -Infinity;
    }
    this.bins[i * BINS + binOf(ms)]++;
    this.counts[i]++;
    if (error) this.errors[i]++;
    if (ms < this.mins[i]) this.mins[i] = ms;
    if (ms > this.maxs[i]) this.maxs[i] = ms;
  }

  report(slot: number): UpstreamReport['calls'] {
    const sum = new Uint32Array(BINS);
    let count = 0;
    let errors = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < CALL_SLOTS; i++) {
      const id = this.slotIds[i];
      if (id < 0 || id <= slot - CALL_SLOTS || id > slot) continue;
      for (let b = 0; b < BINS; b++) sum[b] += this.bins[i * BINS + b];
      count += this.counts[i];
      errors += this.errors[i];
      min = Math.min(min, this.mins[i]);
      max = Math.max(max, this.maxs[i]);
    }
    const quantile = (q: number): number | null => {
      if (count === 0) return null;
      const rank = Math.max(1, Math.ceil(q * count));
      let seen = 0;
      for (let b = 0; b < BINS; b++) {
        seen += sum[b];
        if (seen >= rank) return Math.round(Math.min(max, Math.max(min, binMiddle(b))) * 1000) / 1000;
      }
      return max;
    };
    return { windowMs: CALL_WINDOW_MS, count, errors, p50Ms: quantile(0.5), p99Ms: quantile(0.99) };
  }
}

function text(s: unknown): string | undefined {
  return typeof s === 'string' ? s.slice(0, MAX_TEXT_CHARS) : undefined;
}

/**
 * Creates a recorder subscribed to the channels. It keeps, each in a bounded structure:
 * per-upstream call durations (10-second slots over five minutes, log-spaced bins) for p50 and
 * p99; per-method request and error counts (an error is any error answer) in 10-second slots over
 * ten minutes, methods outside the MCP set counted as `_other`; and the last
 * {@link REFUSALS_KEPT} refusals in a ring.
 */
export function createStatusRecorder(options: StatusRecorderOptions = {}): StatusRecorder {
  const now = options.now ?? Date.now;
  const maxUpstreams = options.maxUpstreams ?? 256;
  const calls = new Map<string, CallWindow>();
  const requestSlotIds = new Float64Array(REQUEST_SLOTS).fill(-1);
  const perMethod = new Map<string, { requests: Uint32Array; errors: Uint32Array }>();
  const refusals: Array<RefusalReport | undefined> = new Array<RefusalReport | undefined>(REFUSALS_KEPT);
  let refusalHead = 0;

  const requestColumn = (slot: number): number => {
    const i = slot % REQUEST_SLOTS;
    if (requestSlotIds[i] !== slot) {
      requestSlotIds[i] = slot;
      for (const m of perMethod.values()) {
        m.requests[i] = 0;
        m.errors[i] = 0;
      }
    }
    return i;
  };

  const close = subscribeChannels(
    {
      requestEnd(m) {
        const i = requestColumn(Math.floor(now() / SLOT_MS));
        // Bounded: methodLabel maps every method outside the MCP set to `_other`.
        const method = methodLabel(m.ctx.method);
        let series = perMethod.get(method);
        if (!series) {
          series = { requests: new Uint32Array(REQUEST_SLOTS), errors: new Uint32Array(REQUEST_SLOTS) };
          perMethod.set(method, series);
        }
        series.requests[i]++;
        if (isErrorOutcome(m)) series.errors[i]++;
      },
      upstreamCallEnd(m) {
        if (m.durationMs === undefined || !Number.isFinite(m.durationMs)) return;
        let w = calls.get(m.upstream);
        if (!w) {
          if (calls.size >= maxUpstreams) return;
          w = new CallWindow();
          calls.set(m.upstream, w);
        }
        w.record(Math.floor(now() / SLOT_MS), Math.max(0, m.durationMs), isErrorOutcome(m));
      },
      refusal(m) {
        const r: RefusalReport = { at: new Date(now()).toISOString(), code: codeLabel(m.code), status: m.status };
        if (m.mount !== undefined) r.mount = text(m.mount);
        if (m.dialect !== undefined) r.dialect = text(m.dialect);
        refusals[refusalHead] = r;
        refusalHead = (refusalHead + 1) % REFUSALS_KEPT;
      },
    },
    (err, channel) => options.log?.error({ err, channel }, 'status observer failed'),
  );

  return {
    close,
    snapshot(source) {
      const t = now();
      const slot = Math.floor(t / SLOT_MS);
      const readiness = source.ready();
      const draining = source.draining();
      const upstreams = source.upstreams().map((u): UpstreamReport => {
        const out: UpstreamReport = {
          name: u.name,
          era: u.era,
          transport: u.transport,
          state: u.state,
          inFlight: u.inFlight,
          calls: calls.get(u.name)?.report(slot) ?? { windowMs: CALL_WINDOW_MS, count: 0, errors: 0, p50Ms: null, p99Ms: null },
        };
        if (u.lastError !== undefined) out.lastError = text(u.lastError);
        if (u.serverInfo !== undefined) {
          out.serverInfo = { name: text(u.serverInfo.name) ?? '', version: text(u.serverInfo.version) ?? '' };
          if (u.serverInfo.title !== undefined) out.serverInfo.title = text(u.serverInfo.title);
        }
        return out;
      });
      const methods: MethodSeries[] = [];
      const first = slot - REQUEST_SLOTS + 1;
      for (const [method, series] of perMethod) {
        const requests: number[] = [];
        const errors: number[] = [];
        let any = false;
        for (let s = first; s <= slot; s++) {
          const i = s % REQUEST_SLOTS;
          const live = requestSlotIds[i] === s;
          requests.push(live ? series.requests[i] : 0);
          errors.push(live ? series.errors[i] : 0);
          if (live && series.requests[i] > 0) any = true;
        }
        if (any) methods.push({ method, requests, errors });
      }
      methods.sort((a, b) => (a.method === OTHER ? 1 : b.method === OTHER ? -1 : a.method.localeCompare(b.method)));
      const recent: RefusalReport[] = [];
      for (let k = 1; k <= REFUSALS_KEPT; k++) {
        const r = refusals[(refusalHead - k + REFUSALS_KEPT) % REFUSALS_KEPT];
        if (r) recent.push(r);
      }
      const cluster = source.cluster?.();
      return {
        generatedAt: new Date(t).toISOString(),
        ready: readiness.ready && !draining,
        reasons: draining && !readiness.reasons.includes('draining') ? [...readiness.reasons, 'draining'] : [...readiness.reasons],
        degraded: [...(readiness.degraded ?? [])],
        draining,
        ...(cluster
          ? {
              cluster: {
                replicaId: cluster.replicaId,
                keyId: cluster.keyId,
                redis: cluster.redis,
                ...(cluster.writes ? { writes: cluster.writes, writesRefusedAt: cluster.writesRefusedAt } : {}),
              },
            }
          : {}),
        upstreams,
        mounts: source
          .mounts()
          .map((m) => ({ name: m.name, url: m.url, dialects: m.dialects.map((d) => ({ id: d.id, sessions: d.sessions, streams: d.streams })) })),
        requests: { slotMs: SLOT_MS, windowMs: REQUEST_WINDOW_MS, startMs: first * SLOT_MS, methods },
        refusals: recent,
      };
    },
  };
}
