// Prints the memory timeline `bench/lib/mem-probe.cjs` wrote into DIR (the largest file, or the
// one named): one line per sample (MiB) and per GC (ms), from FROM_MS on. Diagnostics only.
// usage: node bench/mem-report.mjs DIR [mem-<pid>.json] [--from FROM_MS]

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

// `… | head` closes the pipe early: that is the end of the report, not an error.
process.stdout.on('error', () => process.exit(0));
const argv = process.argv.slice(2);
const dir = argv[0];
if (!dir) {
  process.stderr.write('usage: node bench/mem-report.mjs DIR [mem-<pid>.json] [--from FROM_MS]\n');
  process.exit(2);
}
const named = argv[1] && !argv[1].startsWith('--') ? argv[1] : undefined;
const from = argv.includes('--from') ? Number(argv[argv.indexOf('--from') + 1]) : 0;
const file =
  named ??
  readdirSync(dir)
    .filter((f) => /^mem-\d+\.json$/.test(f))
    .sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0];
if (!file) throw new Error(`no mem-<pid>.json in ${dir}`);
const { fields, samples, gcs } = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const mib = (b) => (b / 1048576).toFixed(1).padStart(7);
const rows = [...samples.map((s) => ({ t: s[0], s })), ...gcs.map((g) => ({ t: g[0], g }))].filter((r) => r.t >= from).sort((a, b) => a.t - b.t);
process.stdout.write(`${file}: MiB\n${fields.map((f) => f.padStart(7)).join('')}\n`);
for (const r of rows) {
  if (r.g) process.stdout.write(`${r.t.toFixed(0).padStart(7)}  GC ${r.g[2]} ${r.g[1].toFixed(1)} ms\n`);
  else process.stdout.write(`${r.s[0].toFixed(0).padStart(7)}${r.s.slice(1).map(mib).join('')}\n`);
}
