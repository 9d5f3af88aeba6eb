// A Prometheus histogram for the per-request hot path, registered on a prom-client registry like
// prom-client's own metrics. prom-client's `Histogram.observe` validates every label value and
// hashes the label object on each call (children too), about 3 µs per observation, which made
// the two operation histograms the largest part of the metrics layer's price (docs/performance.md,
// "The layers, by their own code"). Here each series is found through a tree of the label values
// the caller already bounded, or held by a child the caller keeps per label tuple (`child()`), and
// an observation is a bucket search and three additions. The
// exposition is prom-client's: the registry formats what `getForPromString()` returns, in the same
// shape and order as prom-client's Histogram.

import type { Registry } from 'prom-client';

/** Label name → value; every value must come from a bounded set (the caller's duty). */
export type HistogramLabels = Readonly<Record<string, string>>;

/** Inputs of {@link createHistogram}. */
export interface HistogramOptions {
  /** Metric name (Prometheus syntax, without `_bucket`/`_sum`/`_count`). */
  name: string;
  /** `# HELP` text. */
  help: string;
  /** Every label a series may carry, in exposition order; a label left out of an observation is absent from its series. */
  labelNames: readonly string[];
  /** Upper bounds of the finite buckets, ascending, in the observed unit (seconds here); `+Inf` is implied. */
  buckets: readonly number[];
  /** Registries to register on. */
  registers: readonly Registry[];
  /**
   * Distinct label sets kept (default 10,000). An observation with a new label set past the bound
   * is recorded on the series whose every label is `overflowValue`, never on a new one.
   */
  maxSeries?: number;
  /** The value of every label of the overflow series (default `_other`). */
  overflowValue?: string;
}

/** One value of a metric as prom-client's registry formats it. */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  exemplar?: null;
}

/** What prom-client's registry reads of a metric (`Registry.getMetricsAsString`, `getMetricsAsJSON`). */
interface ExportedMetric {
  name: string;
  help: string;
  type: 'histogram';
  values: ExportedValue[];
  aggregator: 'sum';
}

/**
 * One series of a {@link FastHistogram}, found once: observing through it skips the label lookup.
 * It stays valid across `reset()` (it finds its series again, by its labels, on the next
 * observation). Made past the histogram's series bound, it records on the overflow series.
 */
export interface HistogramChild {
  /**
   * Records `value` on this child's series.
   * @throws TypeError when `value` is not a finite number (as prom-client does)
   */
  observe(value: number): void;
}

/** A histogram registered on prom-client registries. */
export interface FastHistogram {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly aggregator: 'sum';
  /**
   * Records `value` on the series `labels` names.
   * @throws TypeError when `value` is not a finite number (as prom-client does)
   */
  observe(labels: HistogramLabels, value: number): void;
  /**
   * The series `labels` names, as a handle to observe on without a lookup (prom-client's
   * `labels()`). It opens the series as `observe` would (bound and overflow alike), so make one
   * only to observe on it. The caller keeps the handles it makes, bounded.
   */
  child(labels: HistogramLabels): HistogramChild;
  /** The series in prom-client's exposition shape, labels kept apart (the registry's text format reads this). */
  getForPromString(): Promise<ExportedMetric>;
  /** The series with labels merged (prom-client's `get()`, for `getMetricsAsJSON`). */
  get(): Promise<ExportedMetric>;
  /** Forgets every series. */
  reset(): void;
  /**
   * Label sets the lookup tree holds (one per series, the overflow series included, so at most
   * `maxSeries` + 1): the tree never grows past the series bound. For tests.
   */
  lookupPaths(): number;
}

/** One level of {@link createHistogram}'s series tree: label value (or ABSENT) → next level; the last level holds the series under LEAF. */
type LabelTree = Map<string | symbol, LabelTree | Series>;
/** The tree key of a label an observation leaves out (distinct from every string, the empty one included). */
const ABSENT = Symbol('absent');
/** The key under which a path's last level holds its series. */
const LEAF = Symbol('series');

interface Series {
  labels: Record<string, string>;
  /** Observations per finite bucket (not cumulative); the `+Inf` count is `count`. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * Creates a histogram that prom-client's registry exposes as `NAME_bucket{le=…}`, `NAME_sum` and
 * `NAME_count`, series by series, exactly as prom-client's `Histogram` does, and registers it on
 * `options.registers`. Observing costs a walk of the label tree (none through a child) and a
 * bucket search (no label validation: the caller passes only bounded values, and `labelNames`
 * fixes which labels are read).
 * @throws Error from `Registry.registerMetric` when a metric of the same name is registered
 * @see Prometheus exposition formats (text format 0.0.4), histogram samples
 */
export function createHistogram(options: HistogramOptions): FastHistogram {
  const names = [...options.labelNames];
  const bounds = Float64Array.from(options.buckets);
  for (let i = 1; i < bounds.length; i++) if (!(bounds[i] > bounds[i - 1])) throw new Error(`${options.name}: buckets must ascend`);
  const maxSeries = options.maxSeries ?? 10_000;
  const overflowValue = options.overflowValue ?? '_other';
  let series = new Map<string, Series>();
  /** Counts `reset()` calls, so that a child knows its series is gone. */
  let epoch = 0;

  const keyOf = (labels: HistogramLabels): string => {
    let key = '';
    for (const n of names) {
      const v = labels[n];
      // \u0001 never occurs in a bounded label value; an absent label differs from an empty one.
      key += v === undefined ? '\u0002' : `${v}\u0001`;
    }
    return key;
  };
  // The series again, by label value one level per label name, so that observing a known label
  // set builds no key string (concatenating eight values, then flattening and hashing the result
  // for the Map, was most of an observation). A path is added only with its series, so the tree
  // holds at most `maxSeries` paths (plus the overflow series'): it never grows past the bound.
  let tree: LabelTree = new Map();
  let paths = 0;
  const find = (labels: HistogramLabels): Series | undefined => {
    let node = tree;
    for (let i = 0; i < names.length; i++) {
      const v = labels[names[i]];
      const next = node.get(v === undefined ? ABSENT : v);
      if (next === undefined) return undefined;
      node = next as LabelTree;
    }
    return node.get(LEAF) as Series | undefined;
  };
  const remember = (labels: HistogramLabels, s: Series): void => {
    let node = tree;
    for (let i = 0; i < names.length; i++) {
      const v = labels[names[i]];
      const k = v === undefined ? ABSENT : v;
      let next = node.get(k) as LabelTree | undefined;
      if (next === undefined) node.set(k, (next = new Map()));
      node = next;
    }
    if (!node.has(LEAF)) paths++;
    node.set(LEAF, s);
  };
  const open = (key: string, labels: HistogramLabels): Series => {
    // In the caller's order, as prom-client writes them; labels outside `labelNames` are not kept.
    const own: Record<string, string> = {};
    for (const [n, v] of Object.entries(labels)) if (v !== undefined && names.includes(n)) own[n] = v;
    const s: Series = { labels: own, counts: new Float64Array(bounds.length), sum: 0, count: 0 };
    series.set(key, s);
    remember(labels, s);
    return s;
  };
  const overflow = (): Series => {
    const labels: Record<string, string> = {};
    for (const n of names) labels[n] = overflowValue;
    const key = keyOf(labels);
    return series.get(key) ?? open(key, labels);
  };

  /** The series `labels` names, opened when new (the overflow series past the bound). */
  const resolve = (labels: HistogramLabels): Series => {
    const s = find(labels);
    if (s !== undefined) return s;
    // Not in the tree: a new label set, one past the bound (the overflow series), or a value
    // that is not a string but names the same series as its string form (`${v}` in the key).
    const key = keyOf(labels);
    return series.get(key) ?? (series.size < maxSeries ? open(key, labels) : overflow());
  };
  const check = (value: number): void => {
    if (!Number.isFinite(value)) throw new TypeError(`${options.name}: value is not a finite number: ${String(value)}`);
  };
  const record = (s: Series, value: number): void => {
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    if (i < bounds.length) s.counts[i] += 1;
    s.sum += value;
    s.count += 1;
  };

  /** prom-client's shapes: labels kept apart for the text format, merged (with `exemplar`) for `get()`. */
  const exported = (merge: boolean): ExportedMetric => {
    const values: ExportedValue[] = [];
    const bucketName = `${options.name}_bucket`;
    const push = (s: Series, own: Record<string, string | number>, value: number, metricName: string, exemplar: null | undefined): void => {
      values.push(merge ? { value, metricName, exemplar, labels: { ...own, ...s.labels } } : { labels: own, sharedLabels: s.labels, value, metricName });
    };
    for (const s of series.values()) {
      let acc = 0;
      for (let i = 0; i < bounds.length; i++) {
        acc += s.counts[i];
        push(s, { le: bounds[i] }, acc, bucketName, null);
      }
      push(s, { le: '+Inf' }, s.count, bucketName, null);
      push(s, {}, s.sum, `${options.name}_sum`, undefined);
      push(s, {}, s.count, `${options.name}_count`, undefined);
    }
    return { name: options.name, help: options.help, type: 'histogram', values, aggregator: 'sum' };
  };

  const histogram: FastHistogram = {
    name: options.name,
    help: options.help,
    type: 'histogram',
    aggregator: 'sum',
    observe(labels, value) {
      check(value);
      record(resolve(labels), value);
    },
    child(labels) {
      // A copy: the caller's object may change after this call.
      const own: Record<string, string> = { ...labels };
      let s = resolve(own);
      let at = epoch;
      return {
        observe(value) {
          check(value);
          if (at !== epoch) {
            // reset() since this child last observed: its old series is gone.
            s = resolve(own);
            at = epoch;
          }
          record(s, value);
        },
      };
    },
    getForPromString: () => Promise.resolve(exported(false)),
    get: () => Promise.resolve(exported(true)),
    reset() {
      epoch++;
      series = new Map();
      tree = new Map();
      paths = 0;
    },
    lookupPaths: () => paths,
  };
  for (const r of options.registers) r.registerMetric(histogram as never);
  return histogram;
}
