// The hot-path histogram against prom-client's own: for any observations, the registry writes the
// same Prometheus text and the same JSON, and the series count stays bounded.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { createHistogram } from '../../src/telemetry/histogram.js';
import { MCP_DURATION_BUCKETS_SECONDS } from '../../src/telemetry/metrics.js';

const LABELS = ['mcp_method_name', 'error_type', 'mount'] as const;
const VALUES = ['tools/call', 'tools/list', '_other', ''];

const observation = fc.record({
  labels: fc.record(
    { mcp_method_name: fc.constantFrom(...VALUES), error_type: fc.constantFrom(...VALUES), mount: fc.constantFrom(...VALUES) },
    { requiredKeys: ['mcp_method_name'] },
  ),
  // Values on and beside the bucket bounds, and past the last one.
  value: fc.oneof(fc.constantFrom(0, ...MCP_DURATION_BUCKETS_SECONDS, 301, 1e6), fc.double({ min: 0, max: 400, noNaN: true })),
});

test('the registry writes the same text and JSON for it as for prom-client’s Histogram, whatever is observed', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
      const ours = new Registry();
      const theirs = new Registry();
      const help = 'h';
      const a = createHistogram({ name: 'x_seconds', help, labelNames: LABELS, buckets: MCP_DURATION_BUCKETS_SECONDS, registers: [ours] });
      const b = new Histogram({ name: 'x_seconds', help, labelNames: [...LABELS], buckets: [...MCP_DURATION_BUCKETS_SECONDS], registers: [theirs] });
      for (const o of observations) {
        a.observe(o.labels, o.value);
        b.observe(o.labels, o.value);
      }
      assert.equal(await ours.metrics(), await theirs.metrics());
      assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
    }),
    { numRuns: 200 },
  );
});

test('a series past maxSeries is recorded on the overflow series, never on a new one', async () => {
  const registry = new Registry();
  const h = createHistogram({ name: 'y_seconds', help: 'h', labelNames: ['tool'], buckets: [1], registers: [registry], maxSeries: 2, overflowValue: '_other' });
  h.observe({ tool: 'a' }, 0.5);
  h.observe({ tool: 'b' }, 0.5);
  h.observe({ tool: 'c' }, 2);
  h.observe({ tool: 'd' }, 0.5);
  h.observe({ tool: 'a' }, 0.5);
  const text = await registry.metrics();
  assert.match(text, /^y_seconds_count\{tool="a"\} 2$/m);
  assert.match(text, /^y_seconds_count\{tool="b"\} 1$/m);
  assert.match(text, /^y_seconds_count\{tool="_other"\} 2$/m);
  assert.match(text, /^y_seconds_bucket\{le="1",tool="_other"\} 1$/m);
  assert.doesNotMatch(text, /tool="[cd]"/);
  assert.equal(text.match(/^y_seconds_count/gm)?.length, 3);
});

test('a value that is not a finite number is refused, and reset() forgets every series', async () => {
  const registry = new Registry();
  const h = createHistogram({ name: 'z_seconds', help: 'h', labelNames: ['m'], buckets: [1], registers: [registry] });
  assert.throws(() => h.observe({ m: 'a' }, Number.NaN), TypeError);
  assert.throws(() => h.observe({ m: 'a' }, Number.POSITIVE_INFINITY), TypeError);
  h.observe({ m: 'a' }, 1);
  assert.match(await registry.metrics(), /^z_seconds_bucket\{le="1",m="a"\} 1$/m);
  h.reset();
  assert.equal(await registry.metrics(), '# HELP z_seconds h\n# TYPE z_seconds histogram\n');
  assert.throws(() => createHistogram({ name: 'z_seconds', help: 'h', labelNames: [], buckets: [1], registers: [registry] }), /already been registered/);
  assert.throws(() => createHistogram({ name: 'w_seconds', help: 'h', labelNames: [], buckets: [2, 1], registers: [] }), /ascend/);
});

test('the label lookup tree holds one path per series and never more, however many label sets pass', async () => {
  const registry = new Registry();
  const h = createHistogram({ name: 'v_seconds', help: 'h', labelNames: ['a', 'b'], buckets: [1], registers: [registry], maxSeries: 3 });
  h.observe({ a: 'x' }, 0.5);
  h.observe({ a: 'x', b: '' }, 0.5);
  h.observe({ b: 'x' }, 0.5);
  assert.equal(h.lookupPaths(), 3);
  // Past the bound: a thousand new label sets add the overflow series' path, and nothing else.
  for (let i = 0; i < 1000; i++) h.observe({ a: `n${i}`, b: `m${i}` }, 2);
  assert.equal(h.lookupPaths(), 4);
  // Found again through the tree: the same series, in the same label order as first seen.
  h.observe({ b: '', a: 'x' }, 0.5);
  const text = await registry.metrics();
  assert.match(text, /^v_seconds_count\{a="x",b=""\} 2$/m);
  assert.match(text, /^v_seconds_count\{a="x"\} 1$/m);
  assert.match(text, /^v_seconds_count\{b="x"\} 1$/m);
  assert.match(text, /^v_seconds_count\{a="_other",b="_other"\} 1000$/m);
  assert.equal(text.match(/^v_seconds_count/gm)?.length, 4);
  h.reset();
  assert.equal(h.lookupPaths(), 0);
  // A value that is not a string names the same series as its string form (as the key does).
  h.observe({ a: '1' }, 0.5);
  h.observe({ a: 1 as unknown as string }, 0.5);
  assert.match(await registry.metrics(), /^v_seconds_count\{a="1"\} 2$/m);
  assert.equal(h.lookupPaths(), 1);
});

test('observing through children writes the same text as observing by labels, across reset() and past the series bound', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.oneof(observation, fc.constant('reset' as const)), { maxLength: 60 }),
      fc.integer({ min: 1, max: 6 }),
      async (steps, maxSeries) => {
        const byLabels = new Registry();
        const byChild = new Registry();
        const a = createHistogram({
          name: 'c_seconds',
          help: 'h',
          labelNames: LABELS,
          buckets: MCP_DURATION_BUCKETS_SECONDS,
          registers: [byLabels],
          maxSeries,
        });
        const b = createHistogram({ name: 'c_seconds', help: 'h', labelNames: LABELS, buckets: MCP_DURATION_BUCKETS_SECONDS, registers: [byChild], maxSeries });
        // One child per label set, made at its first observation and kept for the rest (as metrics.ts keeps them).
        const children = new Map<string, ReturnType<typeof b.child>>();
        for (const s of steps) {
          if (s === 'reset') {
            a.reset();
            b.reset();
            continue;
          }
          a.observe(s.labels, s.value);
          const key = JSON.stringify(LABELS.map((n) => s.labels[n] ?? null));
          let child = children.get(key);
          if (!child) children.set(key, (child = b.child(s.labels)));
          child.observe(s.value);
        }
        assert.equal(await byChild.metrics(), await byLabels.metrics());
        assert.ok(b.lookupPaths() <= maxSeries + 1);
      },
    ),
    { numRuns: 200 },
  );
});

test('a child refuses a value that is not a finite number, and records nothing for it', async () => {
  const registry = new Registry();
  const h = createHistogram({ name: 'n_seconds', help: 'h', labelNames: ['m'], buckets: [1], registers: [registry] });
  const child = h.child({ m: 'a' });
  assert.throws(() => child.observe(Number.NaN), TypeError);
  child.observe(0.5);
  assert.match(await registry.metrics(), /^n_seconds_count\{m="a"\} 1$/m);
});
