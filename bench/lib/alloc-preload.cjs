// `--require` preload for a gateway under bench/ab.mjs --alloc: counts the bytes the process
// allocates on V8's heap between two marks, from V8's own GC statistics (v8.GCProfiler: the used
// heap before and after every collection). Each SIGUSR2 is a mark: the first starts the count,
// the second appends `{"allocatedBytes": N}` (bytes allocated on the JS heap since the first,
// whether freed since or not; Buffers' backing stores are not on it) as one JSON line to the file
// SWITCHYARD_ALLOC_FILE names. Unlike time, the count is not moved by other processes.
//
// With SWITCHYARD_ALLOC_PROFILE=PREFIX the same window also runs V8's sampling heap profiler,
// keeping the samples of objects collected since (one sample per 512 bytes on average), and
// writes it to PREFIX.PID.heapprofile (for Chrome DevTools or bench/alloc-sites.mjs), the
// latest window's only.
'use strict';
const { appendFileSync, writeFileSync } = require('node:fs');
const v8 = require('node:v8');
const inspector = require('node:inspector');

const out = process.env.SWITCHYARD_ALLOC_FILE;
const profileFile = process.env.SWITCHYARD_ALLOC_PROFILE;
let profiler;
let used0 = 0;
let session;

process.on('SIGUSR2', () => {
  if (profiler === undefined) {
    if (profileFile) {
      session = new inspector.Session();
      session.connect();
      session.post('HeapProfiler.enable');
      session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    }
    profiler = new v8.GCProfiler();
    profiler.start();
    used0 = v8.getHeapStatistics().used_heap_size;
    return;
  }
  const used1 = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  profiler = undefined;
  let allocated = 0;
  let after = used0;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - after;
    after = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += used1 - after;
  const write = () => {
    if (out) appendFileSync(out, `${JSON.stringify({ allocatedBytes: allocated, collections: statistics.length })}\n`);
  };
  if (!session) return write();
  session.post('HeapProfiler.stopSampling', (err, res) => {
    if (!err) writeFileSync(`${profileFile}.${process.pid}.heapprofile`, JSON.stringify(res.profile));
    session.disconnect();
    session = undefined;
    write();
  });
});
