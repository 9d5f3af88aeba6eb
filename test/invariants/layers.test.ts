// Dependencies point toward the core (STYLE §1): each layer imports only what it may.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Imports of our own code in `file`, as repo-relative paths. */
function ownImports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)) {
    const spec = m[1] ?? m[2];
    out.push(path.relative(REPO_ROOT, path.resolve(path.dirname(file), spec)));
  }
  return out;
}

const rules: Array<{ layer: string; may: string[] }> = [
  { layer: 'src/core', may: ['src/core'] },
  { layer: 'dialects/2026-07-28', may: ['src/core', 'dialects/2026-07-28'] },
  { layer: 'dialects/2025-03-26', may: ['src/core', 'dialects/2025-03-26'] },
  { layer: 'dialects/2024-11-05', may: ['src/core', 'dialects/2024-11-05'] },
  { layer: 'src/transports', may: ['src/core', 'src/log', 'src/transports'] },
  { layer: 'src/upstreams', may: ['src/core', 'src/log', 'src/io', 'src/upstreams'] },
  { layer: 'src/io', may: ['src/io'] },
  { layer: 'src/log', may: ['src/log'] },
  { layer: 'src/strict', may: ['src/core', 'src/strict'] },
];

for (const { layer, may } of rules) {
  test(`${layer} imports only ${may.join(', ')}`, () => {
    const dir = path.join(REPO_ROOT, layer);
    const bad: string[] = [];
    for (const f of files(dir)) {
      for (const imp of ownImports(f)) if (!may.some((m) => imp === m || imp.startsWith(m + '/'))) bad.push(`${path.relative(REPO_ROOT, f)} -> ${imp}`);
    }
    assert.deepEqual(bad, []);
  });
}

test('only the CLI and the stdio message writer touch stdout', () => {
  const bad: string[] = [];
  for (const f of [...files(path.join(REPO_ROOT, 'src')), ...files(path.join(REPO_ROOT, 'dialects'))]) {
    if (f.includes(`${path.sep}cli${path.sep}`)) continue;
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/console\.(log|info)\(|process\.stdout\.write/.test(line) && !line.includes('// stdout-ok')) bad.push(`${path.relative(REPO_ROOT, f)}:${i + 1}`);
      });
  }
  assert.deepEqual(bad, []);
});
