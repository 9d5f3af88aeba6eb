// Preloaded (--require) into the gateway when SWITCHYARD_MEM_PROBE names a directory: samples
// its memory every 1 ms (RSS, heap used, external, array buffers, and V8's new, old, large-object
// and new-large-object spaces, bytes) with every GC (kind, ms), and writes them to
// DIR/mem-<pid>.json when the process exits; `node bench/mem-report.mjs DIR` prints the timeline.
// A sample is kept only when a figure moved 256 KiB or more, at most 200,000 of them (bounded).
// Other processes (the bench itself, upstream children) load it and do nothing.
'use strict';
const dir = process.env.SWITCHYARD_MEM_PROBE;
if (dir && /dist[\\/]src[\\/]cli[\\/]main\.js$/.test(process.argv[1] ?? '')) {
  const v8 = require('node:v8');
  const { writeFileSync } = require('node:fs');
  const { join } = require('node:path');
  const { PerformanceObserver, performance } = require('node:perf_hooks');
  // rss, heap used, external, array buffers; then V8's new, old, large-object and new-large-object spaces.
  const FIELDS = ['ms', 'rss', 'heap', 'ext', 'ab', 'new', 'old', 'lo', 'nlo'];
  const SPACES = { new_space: 5, old_space: 6, large_object_space: 7, new_large_object_space: 8 };
  const MAX_SAMPLES = 200_000;
  const MOVED = 256 * 1024;
  const samples = [];
  const gcs = [];
  let last;
  const sample = () => {
    if (samples.length >= MAX_SAMPLES) return;
    const m = process.memoryUsage();
    const row = [performance.now(), m.rss, m.heapUsed, m.external, m.arrayBuffers, 0, 0, 0, 0];
    for (const s of v8.getHeapSpaceStatistics()) if (SPACES[s.space_name] !== undefined) row[SPACES[s.space_name]] = s.space_used_size;
    if (last === undefined || row.some((v, i) => i > 0 && Math.abs(v - last[i]) >= MOVED)) {
      samples.push(row);
      last = row;
    }
  };
  setInterval(sample, 1).unref();
  const kinds = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental', 8: 'weak-callbacks' };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (gcs.length < MAX_SAMPLES) gcs.push([e.startTime, e.duration, kinds[e.detail?.kind] ?? String(e.detail?.kind)]);
  }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => {
    writeFileSync(join(dir, `mem-${process.pid}.json`), JSON.stringify({ fields: FIELDS, samples, gcs }));
  });
}
