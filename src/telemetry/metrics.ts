// Prometheus metrics fed by the diagnostics channels, on a registry of their own, with every label
// value drawn from a bounded set (never a client-supplied string).

import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { UPSTREAM_FAULT_KINDS, type RequestEndMessage, type UpstreamCallMessage, type UpstreamStateMessage } from '../core/diagnostics.js';
import type { Component } from '../core/interceptor.js';
import type { RequestContext } from '../core/request.js';
import type { Logger } from '../log/logger.js';
import { createHistogram, type HistogramChild } from './histogram.js';
import {
  OTHER,
  STREAM_KINDS,
  clientErrorType,
  codeLabel,
  createLabelBound,
  MAX_LABEL_VALUE_CHARS,
  isErrorOutcome,
  networkTransport,
  methodLabel,
  revisionLabel,
  rpcCodeLabel,
  rpcCodeOf,
  serverErrorType,
} from './names.js';
import { subscribeChannels } from './subscribe.js';

/**
 * Histogram buckets of the four MCP duration metrics, seconds (the conventions' advisory
 * `ExplicitBucketBoundaries`).
 * @see telemetry digest §4; OTel semconv model/mcp/metrics.yaml
 */
export const MCP_DURATION_BUCKETS_SECONDS: readonly number[] = Object.freeze([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);

/** Admission state of one executor at scrape time. */
export interface AdmissionSample {
  /** The mount the executor serves; omitted for a gateway with one executor. */
  mount?: string;
  /** Requests running now. */
  inFlight: number;
  /** Requests waiting for a slot. */
  queued: number;
}

/** One upstream's state as its supervisor knows it at scrape time. */
export interface UpstreamStateSample {
  /** Its config name. */
  upstream: string;
  /** `starting` (first attempt), `up`, or anything else (`down`, `draining`, `stopped`), which counts as `down`. */
  state: string;
}

/** A fixed list, or a function returning the current one (config reloads may change it). */
export type NameList = readonly string[] | (() => readonly string[]);

/** Inputs of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * The tool and prompt names `upstream` listed (its last tools/list and prompts/list), as a Set
   * the gateway keeps (called per request, so it must not build one per call). Names outside it
   * become `_other` on the `gen_ai_tool_name` / `gen_ai_prompt_name` labels.
   */
  knownNames?: (upstream: string) => ReadonlySet<string> | undefined;
  /** Configured mount names; the `mount` label takes only these (else `_other`). */
  mounts: NameList;
  /**
   * Configured upstream names; the `upstream` label takes only these (else `_other`). When
   * omitted, the first `maxUpstreamLabelValues` names seen pass.
   */
  upstreams?: NameList;
  /** Called at each scrape for the admission gauges; omitted: the gauges stay empty. */
  collect?: () => readonly AdmissionSample[];
  /**
   * Called at each scrape for `switchyard_upstream_state`: the state of every upstream there is
   * now. Omitted: the upstream-state channels set the gauge. The channels cannot tell two instances
   * of one name apart (a reload's new instance and the old one it stops), and an upstream a reload
   * adds reports before the config lists it; the supervisors know.
   */
  upstreamStates?: () => Iterable<UpstreamStateSample>;
  /**
   * Called at each scrape for `switchyard_cluster_info`, `switchyard_cluster_redis_up` and
   * `switchyard_cluster_redis_writes_refused`: this replica's id, its sealing key id and its Redis state. Omitted or undefined (no `cluster`
   * section): neither has a series.
   */
  cluster?: () => { replicaId: string; keyId: string; redis: 'off' | 'up' | 'down'; writes?: 'refused' } | undefined;
  /** Register prom-client's default process metrics on this registry (default true). */
  defaultMetrics?: boolean;
  /** Distinct tool and prompt label values, all upstreams together (default 1000); later ones are `_other`. */
  maxNameLabelValues?: number;
  /** Distinct upstream label values when `upstreams` is omitted (default 256). */
  maxUpstreamLabelValues?: number;
  /** Where a failing observer reports (it never throws into the publisher). */
  log?: Logger;
}

/** The metrics of one gateway. */
export interface Metrics {
  /** The registry every metric here is registered on (not prom-client's global one). */
  readonly registry: Registry;
  /** The exposition's `Content-Type` (`text/plain; version=0.0.4; charset=utf-8`). */
  readonly contentType: string;
  /** The Prometheus text exposition of every metric. */
  metrics(): Promise<string>;
  /** Unsubscribes from the channels and empties the registry. */
  close(): void;
}

type Labels = Record<string, string>;

/** Bound children kept per operation histogram (the histograms' own series bound): past it, observations look their series up by labels. */
const MAX_CACHED_CHILDREN = 10_000;

/**
 * Bound histogram children by the four label values of a successful request (method, and three
 * of revision, mount or upstream, tool or prompt name), each from a bounded set: the common
 * observation then builds no label object and walks four map levels instead of the histogram's
 * eight (prom-client's advice for hot paths, `labels()` kept per label tuple). At most `max`
 * children; past it `add` keeps none, and the caller's child is used once.
 */
export class ChildCache {
  private readonly root = new Map<string, Map<string, Map<string, Map<string, HistogramChild>>>>();
  private size = 0;

  /** @param max children kept at most */
  constructor(private readonly max: number) {}

  /** The child kept under the four values, if any. */
  get(a: string, b: string, c: string, d: string): HistogramChild | undefined {
    return this.root.get(a)?.get(b)?.get(c)?.get(d);
  }

  /** Keeps `child` under the four values (unless full) and returns it. */
  add(a: string, b: string, c: string, d: string, child: HistogramChild): HistogramChild {
    if (this.size >= this.max) return child;
    let l1 = this.root.get(a);
    if (!l1) this.root.set(a, (l1 = new Map<string, Map<string, Map<string, HistogramChild>>>()));
    let l2 = l1.get(b);
    if (!l2) l1.set(b, (l2 = new Map<string, Map<string, HistogramChild>>()));
    let l3 = l2.get(c);
    if (!l3) l2.set(c, (l3 = new Map<string, HistogramChild>()));
    if (!l3.has(d)) this.size++;
    l3.set(d, child);
    return child;
  }

  /** Children kept (for tests). */
  get count(): number {
    return this.size;
  }
}

/**
 * What an upstream's client-operation series carry beside the call's own labels, from its
 * lifecycle messages (never per request): its revision, `network_transport` (`pipe` for a stdio
 * child, `tcp` for an HTTP upstream) and, for an HTTP upstream, `server_address` and `server_port`
 * of its URL. Each takes one value per upstream at a time, from its config.
 * @see telemetry digest §4 (mcp.client.operation.duration: network.*, server.address, server.port Recommended), §6 and §8
 */
interface UpstreamLabels {
  revision: string | undefined;
  transport: string | undefined;
  network: string | undefined;
  address: string | undefined;
  port: string | undefined;
  /** All of the above as one string, for {@link ChildCache}. */
  key: string;
}

/** `m`'s news merged over what an upstream's earlier messages said (`was`). */
function upstreamLabels(m: UpstreamStateMessage, was: UpstreamLabels | undefined): UpstreamLabels {
  const revision = m.revision !== undefined ? revisionLabel(m.revision) : was?.revision;
  const transport = m.transport ?? was?.transport;
  const http = transport === 'http';
  // A host name is the config's; the bound of learnt values applies all the same (longer: no address).
  const fresh = http && m.serverAddress !== undefined && m.serverPort !== undefined && m.serverAddress.length <= MAX_LABEL_VALUE_CHARS;
  const address = fresh ? m.serverAddress : http ? was?.address : undefined;
  const port = fresh ? String(m.serverPort) : http ? was?.port : undefined;
  const network = networkTransport(transport);
  return { revision, transport, network, address, port, key: `${revision ?? ''}\u0001${network ?? ''}\u0001${address ?? ''}\u0001${port ?? ''}` };
}

/** Upstream states as the channels report them, and as the `state` label names them. */
const STATE_OF: Readonly<Record<UpstreamStateMessage['state'], string>> = { spawn: 'starting', ready: 'up', down: 'down' };
const STATES = ['starting', 'up', 'down'] as const;

function listOf(list: NameList | undefined): readonly string[] | undefined {
  return typeof list === 'function' ? list() : list;
}

/**
 * Creates the gateway's Prometheus metrics and subscribes them to the diagnostics channels:
 * - `mcp_server_operation_duration_seconds` (histogram; `mcp_method_name`, `mcp_protocol_version`,
 *   `mount`, and when they apply `error_type`, `rpc_response_status_code`, `gen_ai_tool_name`,
 *   `gen_ai_prompt_name`, `gen_ai_operation_name`) from `requestEnd`;
 * - `mcp_client_operation_duration_seconds` (histogram; `mcp_method_name`, `upstream`,
 *   `mcp_protocol_version` of the upstream, `network_transport`, `server_address` and `server_port`
 *   as its lifecycle messages give them ({@link UpstreamLabels}), and the same optional labels)
 *   from `upstreamCallEnd`;
 * - `switchyard_sessions` and `switchyard_streams` (gauges per `mount`, `dialect`, stream `kind`);
 * - `switchyard_stream_events_dropped_total` (counter per `mount`, `dialect`, stream `kind`: events
 *   a resumable stream dropped from its buffer before any connection carried them) from `streamDrop`;
 * - `switchyard_admission_in_flight`, `switchyard_admission_queue_depth` (gauges, from `collect`);
 * - `switchyard_refusals_total` (counter per catalogue `code`, `mount`, `dialect`: refusals before the
 *   executor, at its admission, by a rate limit, and for an HTTP upstream's full session pool);
 * - `switchyard_upstream_protocol_faults_total` (counter per `upstream` and `kind`, one of
 *   `UPSTREAM_FAULT_KINDS`: protocol faults an upstream committed that no call saw) from `upstreamFault`;
 * - `switchyard_upstream_state` (gauge, 1 for the current `state` of each `upstream`, 0 for the others; an upstream a reload removed loses its series),
 *   from `upstreamStates` at scrape time when given, else from the upstream-state channels;
 * - `switchyard_config_reloads_total` (counter per `result`: `success`, `partial` (applied, but an upstream whose new settings did not start was kept as it ran), `failure`);
 * - `switchyard_cluster_info` (gauge, 1, labels `replica` and `key_id`) and `switchyard_cluster_redis_up`
 *   (gauge per `replica`, 1 up, 0 down; no series without Redis) and `switchyard_cluster_redis_writes_refused`
 *   (gauge per `replica`, 1 while Redis answers but refuses writes, e.g. full; no series without Redis),
 *   from `cluster` at scrape time, with a `cluster` section only;
 * - prom-client's default process metrics.
 *
 * prom-client's default metrics install a GC observer per call that no API removes: create the
 * metrics once per process.
 * @see telemetry digest §4 (instruments, buckets) and §7 (Prometheus names)
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const names = createLabelBound(options.maxNameLabelValues ?? 1000);
  const seenUpstreams = createLabelBound(options.maxUpstreamLabelValues ?? 256);
  const upstreamInfo = new Map<string, UpstreamLabels>();

  const mountLabel = (mount: unknown): string => (typeof mount === 'string' && (listOf(options.mounts) ?? []).includes(mount) ? mount : OTHER);
  const upstreamLabel = (upstream: unknown): string => {
    if (typeof upstream !== 'string') return OTHER;
    const list = listOf(options.upstreams);
    if (list) return list.includes(upstream) ? upstream : OTHER;
    return seenUpstreams.admit(upstream);
  };
  /**
   * The `gen_ai_tool_name` / `gen_ai_prompt_name` value of a tools/call or prompts/get: a name the
   * component's upstream listed, else `_other`. With `asCalled` (the server histogram) the value is
   * the name the client called: on the aggregate mount the client calls `a__echo` where member `a`
   * listed `echo` (src/upstreams/aggregate.ts `servedBy`), and the server series says `a__echo`
   * while the client series, per upstream, says `echo`.
   */
  const componentValue = (component: Component | undefined, ctx: RequestContext, upstream: string | undefined, asCalled = false): string => {
    const called = typeof ctx.params?.name === 'string' ? ctx.params.name : undefined;
    const name = component?.name ?? called;
    const owner = component?.upstream ?? upstream;
    if (name === undefined || owner === undefined || !options.knownNames?.(owner)?.has(name)) return OTHER;
    return names.admit(asCalled && called !== undefined ? called : name);
  };
  const hasComponent = (method: string): boolean => method === 'tools/call' || method === 'prompts/get';
  /** `gen_ai_tool_name` / `gen_ai_prompt_name` (and `gen_ai_operation_name`) for a tools/call or prompts/get. */
  const componentLabels = (
    labels: Labels,
    method: string,
    component: Component | undefined,
    ctx: RequestContext,
    upstream: string | undefined,
    asCalled = false,
  ): void => {
    if (hasComponent(method)) componentLabel(labels, method, componentValue(component, ctx, upstream, asCalled));
  };
  /** The same, from the label value `componentValue` gave (nothing for other methods). */
  const componentLabel = (labels: Labels, method: string, value: string): void => {
    if (!hasComponent(method)) return;
    if (method === 'tools/call') {
      labels.gen_ai_tool_name = value;
      // @see telemetry digest §2: gen_ai.operation.name is execute_tool for tool calls only
      labels.gen_ai_operation_name = 'execute_tool';
    } else labels.gen_ai_prompt_name = value;
  };
  const outcomeLabels = (labels: Labels, errorType: string | undefined, o: RequestEndMessage | UpstreamCallMessage): void => {
    if (errorType !== undefined) labels.error_type = errorType;
    const rpc = isErrorOutcome(o) ? rpcCodeOf(o) : undefined;
    if (rpc !== undefined) labels.rpc_response_status_code = rpcCodeLabel(rpc);
  };

  /** A client operation's first labels: the method, the upstream, and what its lifecycle messages told of it. */
  const clientLabels = (method: string, upstream: string, info: UpstreamLabels | undefined): Labels => {
    const labels: Labels = { mcp_method_name: method, upstream };
    if (info === undefined) return labels;
    if (info.revision !== undefined) labels.mcp_protocol_version = info.revision;
    if (info.network !== undefined) labels.network_transport = info.network;
    if (info.address !== undefined && info.port !== undefined) {
      labels.server_address = info.address;
      labels.server_port = info.port;
    }
    return labels;
  };

  const opLabels = [
    'mcp_method_name',
    'mcp_protocol_version',
    'error_type',
    'rpc_response_status_code',
    'gen_ai_tool_name',
    'gen_ai_prompt_name',
    'gen_ai_operation_name',
  ];
  // The two per-request histograms are our own (src/telemetry/histogram.ts): prom-client's observe
  // validates and hashes its labels on every call. Their label values are bounded above.
  const serverOps = createHistogram({
    name: 'mcp_server_operation_duration_seconds',
    help: 'MCP request duration as observed by Switchyard serving its client, from admission to the answer.',
    labelNames: [...opLabels, 'mount'],
    buckets: MCP_DURATION_BUCKETS_SECONDS,
    registers,
    overflowValue: OTHER,
  });
  const clientOps = createHistogram({
    name: 'mcp_client_operation_duration_seconds',
    help: 'MCP request duration as observed by Switchyard calling an upstream, from send to response.',
    labelNames: [...opLabels, 'upstream', 'network_transport', 'server_address', 'server_port'],
    buckets: MCP_DURATION_BUCKETS_SECONDS,
    registers,
    overflowValue: OTHER,
  });
  const serverChildren = new ChildCache(MAX_CACHED_CHILDREN);
  const clientChildren = new ChildCache(MAX_CACHED_CHILDREN);
  // A mount a reload removed has no series (as /status.json no longer lists it): at each scrape,
  // and at each close of its sessions and streams while they drain.
  const hideRemovedMounts = (gauge: Gauge) => {
    for (const [key, s] of series) {
      if (s.gauge !== gauge || !removedMount(s.labels.mount)) continue;
      gauge.remove(s.labels);
      if (!open.has(key)) series.delete(key);
    }
  };
  const sessions = new Gauge({
    name: 'switchyard_sessions',
    help: 'Open client sessions.',
    labelNames: ['mount', 'dialect'],
    registers,
    collect() {
      hideRemovedMounts(this);
    },
  });
  const streams = new Gauge({
    name: 'switchyard_streams',
    help: 'Open client streams.',
    labelNames: ['mount', 'dialect', 'kind'],
    registers,
    collect() {
      hideRemovedMounts(this);
    },
  });
  const sample = (): readonly AdmissionSample[] => {
    try {
      return options.collect?.() ?? [];
    } catch (err) {
      options.log?.error({ err }, 'metrics collect failed');
      return [];
    }
  };
  const admissionGauge = (name: string, help: string, pick: (s: AdmissionSample) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['mount'],
      registers,
      collect() {
        this.reset();
        for (const s of sample()) {
          const v = pick(s);
          if (!Number.isFinite(v)) continue;
          if (s.mount === undefined) this.set(v);
          else this.set({ mount: mountLabel(s.mount) }, v);
        }
      },
    });
  admissionGauge('switchyard_admission_in_flight', 'Client requests running now.', (s) => s.inFlight);
  admissionGauge('switchyard_admission_queue_depth', 'Client requests waiting for an admission slot.', (s) => s.queued);
  const dropped = new Counter({
    name: 'switchyard_stream_events_dropped_total',
    help: 'Events a resumable SSE stream dropped from its Last-Event-ID buffer (oldest first, at its bounds) before any connection carried them.',
    labelNames: ['mount', 'dialect', 'kind'],
    registers,
  });
  const refusals = new Counter({
    name: 'switchyard_refusals_total',
    help: 'Requests refused before they reached the executor, at its admission, by a rate limit, or for want of an upstream session, by catalogue code.',
    labelNames: ['code', 'mount', 'dialect'],
    registers,
  });
  const upstreamFaults = new Counter({
    name: 'switchyard_upstream_protocol_faults_total',
    help: 'Protocol faults an upstream committed that no call saw (a dropped batch, a batched or second response, a response to an id never sent, an unparsable message, an SSE event over the bound), by upstream and kind.',
    labelNames: ['upstream', 'kind'],
    registers,
  });
  const upstreamState = new Gauge({
    name: 'switchyard_upstream_state',
    help: 'Upstream state: 1 for the current state, 0 for the others.',
    labelNames: ['upstream', 'state'],
    registers,
    collect: options.upstreamStates
      ? function (this: Gauge) {
          let states: Iterable<UpstreamStateSample>;
          try {
            states = options.upstreamStates!();
          } catch (err) {
            options.log?.error({ err }, 'metrics collect failed');
            return;
          }
          this.reset();
          for (const s of states) {
            const upstream = upstreamLabel(s.upstream);
            if (upstream === OTHER) continue;
            const current = s.state === 'starting' || s.state === 'up' ? s.state : 'down';
            for (const st of STATES) this.set({ upstream, state: st }, st === current ? 1 : 0);
          }
        }
      : undefined,
  });
  const clusterNow = () => {
    try {
      return options.cluster?.();
    } catch (err) {
      options.log?.error({ err }, 'metrics collect failed');
      return undefined;
    }
  };
  new Gauge({
    name: 'switchyard_cluster_info',
    help: "This replica of a cluster: 1, labelled with its replica id and the id of the key it seals with (replicas with different key_id cannot open each other's session ids).",
    labelNames: ['replica', 'key_id'],
    registers,
    collect() {
      this.reset();
      const c = clusterNow();
      if (c) this.set({ replica: c.replicaId, key_id: c.keyId }, 1);
    },
  });
  new Gauge({
    name: 'switchyard_cluster_redis_up',
    help: "The cluster's Redis as this replica sees it: 1 up, 0 down.",
    // Labelled, so that there is no series at all without Redis (an unlabelled gauge always has one, 0).
    labelNames: ['replica'],
    registers,
    collect() {
      this.reset();
      const c = clusterNow();
      if (c && c.redis !== 'off') this.set({ replica: c.replicaId }, c.redis === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchyard_cluster_redis_writes_refused',
    help: "The cluster's Redis refuses this replica's writes though it answers (an OOM reply: maxmemory reached; a READONLY reply: a read-only replica): 1 refused, 0 not seen refused since the last write it accepted.",
    labelNames: ['replica'],
    registers,
    collect() {
      this.reset();
      const c = clusterNow();
      if (c && c.redis !== 'off') this.set({ replica: c.replicaId }, c.writes === 'refused' ? 1 : 0);
    },
  });
  const reloads = new Counter({ name: 'switchyard_config_reloads_total', help: 'Config reloads, by result.', labelNames: ['result'], registers });
  reloads.inc({ result: 'success' }, 0);
  reloads.inc({ result: 'failure' }, 0);
  reloads.inc({ result: 'partial' }, 0);
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  // Counts behind the session and stream gauges, so a close without a matching open (an observer
  // subscribed mid-flight) never drives a gauge below zero. Keys are bounded label tuples: a
  // configured mount's, or one a reload removed while it still had some open (until they close).
  const open = new Map<string, number>();
  /** Every session and stream series set, by key (the same bound), for hideRemovedMounts. */
  const series = new Map<string, { gauge: Gauge; labels: Labels }>();
  /** Sessions and streams open per mount name, so that a close is counted under its open's mount after a reload removed it. */
  const openPerMount = new Map<string, number>();
  const removedMount = (mount: string | undefined) => mount !== undefined && mount !== OTHER && mountLabel(mount) === OTHER;
  const gaugeMount = (mount: unknown): string => (typeof mount === 'string' && openPerMount.has(mount) ? mount : mountLabel(mount));
  const move = (gauge: Gauge, labels: Labels, delta: 1 | -1): void => {
    const key = `${gauge === sessions ? 's' : 't'}\0${Object.values(labels).join('\0')}`;
    const before = open.get(key) ?? 0;
    const n = Math.max(0, before + delta);
    if (n > 0) open.set(key, n);
    else open.delete(key);
    const perMount = (openPerMount.get(labels.mount) ?? 0) + n - before;
    if (perMount > 0) openPerMount.set(labels.mount, perMount);
    else openPerMount.delete(labels.mount);
    series.set(key, { gauge, labels });
    if (removedMount(labels.mount)) hideRemovedMounts(gauge);
    else gauge.set(labels, n);
  };
  // The upstreams with state series, so that a reload that removes one removes its series.
  const stateSeries = new Set<string>();
  const setState = (m: UpstreamStateMessage): void => {
    const list = listOf(options.upstreams);
    // An upstream a reload adds reports its revision before the config lists it: kept by name
    // (bounded like the learnt upstream names), so that its calls carry it once it is listed.
    if (list && typeof m.upstream === 'string' && m.upstream.length <= MAX_LABEL_VALUE_CHARS) {
      if (upstreamInfo.has(m.upstream) || upstreamInfo.size < (options.maxUpstreamLabelValues ?? 256))
        upstreamInfo.set(m.upstream, upstreamLabels(m, upstreamInfo.get(m.upstream)));
    }
    const upstream = upstreamLabel(m.upstream);
    // A configured list names every upstream there is: a state of one outside it (one a reload
    // just removed, stopping) is no upstream's, and would stay on `_other` for good.
    if (upstream === OTHER && list !== undefined) return;
    if (!list && upstream !== OTHER) upstreamInfo.set(upstream, upstreamLabels(m, upstreamInfo.get(upstream)));
    if (options.upstreamStates) return;
    const current = STATE_OF[m.state];
    if (current === undefined) return;
    stateSeries.add(upstream);
    for (const s of STATES) upstreamState.set({ upstream, state: s }, s === current ? 1 : 0);
  };
  /** After a reload: the state series of upstreams no longer configured are removed. */
  const pruneStates = (): void => {
    const list = listOf(options.upstreams);
    if (!list) return;
    for (const upstream of [...stateSeries]) {
      if (list.includes(upstream)) continue;
      for (const s of STATES) upstreamState.remove({ upstream, state: s });
      stateSeries.delete(upstream);
      upstreamInfo.delete(upstream);
    }
    for (const upstream of [...upstreamInfo.keys()]) if (!list.includes(upstream)) upstreamInfo.delete(upstream);
  };
  const onError = (err: unknown, channel: string) => options.log?.error({ err, channel }, 'metrics observer failed');

  const unsubscribe = subscribeChannels(
    {
      requestEnd(m) {
        const method = methodLabel(m.ctx.method);
        if (!isErrorOutcome(m)) {
          // The common case: a bound child per label tuple, no label object (see ChildCache).
          const revision = revisionLabel(m.ctx.protocolVersion);
          const mount = mountLabel(m.ctx.mount);
          const component = hasComponent(method) ? componentValue(m.ctx.component, m.ctx, m.ctx.upstream, true) : '';
          let child = serverChildren.get(method, revision, mount, component);
          if (child === undefined) {
            const labels: Labels = { mcp_method_name: method, mcp_protocol_version: revision, mount };
            componentLabel(labels, method, component);
            child = serverChildren.add(method, revision, mount, component, serverOps.child(labels));
          }
          return child.observe(m.durationMs / 1000);
        }
        const labels: Labels = { mcp_method_name: method, mcp_protocol_version: revisionLabel(m.ctx.protocolVersion), mount: mountLabel(m.ctx.mount) };
        outcomeLabels(labels, serverErrorType(m), m);
        componentLabels(labels, method, m.ctx.component, m.ctx, m.ctx.upstream, true);
        serverOps.observe(labels, m.durationMs / 1000);
      },
      upstreamCallEnd(m) {
        if (m.durationMs === undefined) return;
        const method = methodLabel(m.ctx.method);
        const upstream = upstreamLabel(m.upstream);
        const info = upstreamInfo.get(upstream);
        if (!isErrorOutcome(m)) {
          // The common case, as in requestEnd; the upstream's own labels are one key, made when they changed.
          const component = hasComponent(method) ? componentValue(m.ctx.component, m.ctx, m.upstream) : '';
          const key = info?.key ?? '';
          let child = clientChildren.get(method, upstream, key, component);
          if (child === undefined) {
            const labels = clientLabels(method, upstream, info);
            componentLabel(labels, method, component);
            child = clientChildren.add(method, upstream, key, component, clientOps.child(labels));
          }
          return child.observe(m.durationMs / 1000);
        }
        const labels = clientLabels(method, upstream, info);
        outcomeLabels(labels, clientErrorType(m), m);
        componentLabels(labels, method, m.ctx.component, m.ctx, m.upstream);
        clientOps.observe(labels, m.durationMs / 1000);
      },
      sessionOpen: (m) => move(sessions, { mount: mountLabel(m.mount), dialect: revisionLabel(m.dialect) }, 1),
      sessionClose: (m) => move(sessions, { mount: gaugeMount(m.mount), dialect: revisionLabel(m.dialect) }, -1),
      streamOpen: (m) => move(streams, { mount: mountLabel(m.mount), dialect: revisionLabel(m.dialect), kind: STREAM_KINDS.has(m.kind) ? m.kind : OTHER }, 1),
      streamClose: (m) => move(streams, { mount: gaugeMount(m.mount), dialect: revisionLabel(m.dialect), kind: STREAM_KINDS.has(m.kind) ? m.kind : OTHER }, -1),
      streamDrop(m) {
        if (!(Number.isSafeInteger(m.events) && m.events > 0)) return;
        dropped.inc({ mount: mountLabel(m.mount), dialect: revisionLabel(m.dialect), kind: STREAM_KINDS.has(m.kind) ? m.kind : OTHER }, m.events);
      },
      refusal(m) {
        const labels: Labels = { code: codeLabel(m.code) };
        if (m.mount !== undefined) labels.mount = mountLabel(m.mount);
        if (m.dialect !== undefined) labels.dialect = revisionLabel(m.dialect);
        refusals.inc(labels);
      },
      upstreamFault(m) {
        if (!(UPSTREAM_FAULT_KINDS as readonly string[]).includes(m.kind)) return;
        upstreamFaults.inc({ upstream: upstreamLabel(m.upstream), kind: m.kind });
      },
      upstreamSpawn: setState,
      upstreamReady: setState,
      upstreamDown: setState,
      reload(m) {
        const ok = m?.ok ?? m?.error === undefined;
        // `partial`: it took effect, but kept an upstream whose new settings did not start (docs/operations.md, "Hot reload").
        reloads.inc({ result: !ok ? 'failure' : m?.kept && m.kept.length > 0 ? 'partial' : 'success' });
        if (ok) pruneStates();
      },
    },
    onError,
  );

  let closed = false;
  return {
    registry,
    contentType: registry.contentType,
    metrics: () => registry.metrics(),
    close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      registry.clear();
    },
  };
}
