// Dependencies point toward the core (STYLE §1): each layer imports only what it may.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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

/**
 * Every folder and what it may import (STYLE §1): dependencies point toward the core. The
 * composition root (src/gateway.ts, src/index.ts) and the CLI may import anything of ours.
 * docs/architecture.md draws the same table.
 */
export const LAYERS: Array<{ layer: string; may: string[] }> = [
  { layer: 'src/core', may: ['src/core'] },
  { layer: 'dialects/2026-07-28', may: ['src/core', 'dialects/2026-07-28'] },
  { layer: 'dialects/2025-03-26', may: ['src/core', 'dialects/2025-03-26'] },
  // HTTP+SSE is the initialize era over an older transport: it reuses that era's session.
  { layer: 'dialects/2024-11-05', may: ['src/core', 'dialects/2024-11-05', 'dialects/2025-03-26'] },
  { layer: 'src/io', may: ['src/core', 'src/io'] },
  { layer: 'src/log', may: ['src/log'] },
  { layer: 'src/transports', may: ['src/core', 'src/log', 'src/io', 'src/transports'] },
  { layer: 'src/upstreams', may: ['src/core', 'src/log', 'src/io', 'src/upstreams'] },
  { layer: 'src/strict', may: ['src/core', 'src/strict'] },
  { layer: 'src/config', may: ['src/core', 'src/log', 'src/io', 'src/config', 'src/auth', 'src/policy'] },
  { layer: 'src/auth', may: ['src/core', 'src/log', 'src/auth'] },
  { layer: 'src/policy', may: ['src/core', 'src/policy'] },
  { layer: 'src/telemetry', may: ['src/core', 'src/log', 'src/telemetry'] },
  { layer: 'src/admin', may: ['src/core', 'src/log', 'src/io', 'src/telemetry', 'src/admin'] },
  { layer: 'src/cluster', may: ['src/core', 'src/log', 'src/cluster'] },
  { layer: 'src/emulate', may: ['src/core', 'src/log', 'src/config', 'src/transports', 'src/emulate', 'src/gateway.js', 'dialects/index.js'] },
  // The CLI parses flags and starts what the composition root assembled; it never reaches into an era.
  { layer: 'src/cli', may: ['src/'] },
];

for (const { layer, may } of LAYERS) {
  test(`${layer} imports only ${may.join(', ')}`, () => {
    const dir = path.join(REPO_ROOT, layer);
    const bad: string[] = [];
    if (!existsSync(dir)) return;
    for (const f of files(dir)) {
      for (const imp of ownImports(f))
        if (!may.some((m) => imp === m || imp.startsWith(m.endsWith('/') ? m : m + '/'))) bad.push(`${path.relative(REPO_ROOT, f)} -> ${imp}`);
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

test('src/core imports no Node I/O module: only node:crypto and node:diagnostics_channel', () => {
  const bad: string[] = [];
  for (const f of files(path.join(REPO_ROOT, 'src/core'))) {
    for (const m of readFileSync(f, 'utf8').matchAll(/from\s+'(node:[^']+)'|import\('(node:[^']+)'\)/g)) {
      const mod = m[1] ?? m[2];
      if (mod !== 'node:crypto' && mod !== 'node:diagnostics_channel') bad.push(`${path.relative(REPO_ROOT, f)} -> ${mod}`);
    }
  }
  assert.deepEqual(bad, []);
});

test('no file under src/ holds 2026-07-28 era vocabulary (io.modelcontextprotocol/ keys live in dialects/)', () => {
  const bad: string[] = [];
  for (const f of files(path.join(REPO_ROOT, 'src')))
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.includes('io.modelcontextprotocol/')) bad.push(`${path.relative(REPO_ROOT, f)}:${i + 1}`);
      });
  assert.deepEqual(bad, []);
});

/** A unit of ours as the lint table names it (`src/gateway.ts`), from this table's import form (`src/gateway.js`). */
const unitOf = (m: string): string => m.replace(/\.js$/, '.ts');

test('the lint rules enforce this table in every folder, and the type-aware rules are on', async () => {
  const { ESLint } = await import('eslint');
  const eslint = new ESLint({ cwd: REPO_ROOT });
  const lintTable = (await import(pathToFileURL(path.join(REPO_ROOT, 'eslint.config.js')).href)) as { UNITS: string[] };
  for (const { layer, may } of LAYERS) {
    const sample = files(path.join(REPO_ROOT, layer))[0];
    assert.ok(sample, `${layer} has a file to lint`);
    const config = (await eslint.calculateConfigForFile(sample)) as { rules: Record<string, unknown[]> };
    for (const rule of [
      '@typescript-eslint/no-floating-promises',
      '@typescript-eslint/no-misused-promises',
      '@typescript-eslint/switch-exhaustiveness-check',
      '@typescript-eslint/no-unsafe-assignment',
      'import-x/no-restricted-paths',
    ]) {
      if (rule === '@typescript-eslint/no-unsafe-assignment' && layer.startsWith('test')) continue;
      assert.equal(config.rules[rule]?.[0], 2, `${rule} is an error in ${layer}`);
    }
    const zones = (config.rules['import-x/no-restricted-paths'][1] as { zones: Array<{ target: string; from: string[] }> }).zones;
    const zone = zones.find((z) => z.target === `./${layer}`);
    assert.ok(zone, `the lint has a zone for ${layer}`);
    // Everything of ours this table refuses to the layer, the lint refuses too.
    const allowed = (u: string) => u === layer || may.some((m) => unitOf(m) === u || u.startsWith(m.endsWith('/') ? m : m + '/'));
    const refused = lintTable.UNITS.filter((u) => !allowed(u)).map((u) => `./${u}`);
    assert.deepEqual([...zone.from].sort(), refused.sort(), `lint zone of ${layer}`);
  }
});

test('the import rule really refuses: a core file importing a transport is an error', async () => {
  const { ESLint } = await import('eslint');
  const eslint = new ESLint({ cwd: REPO_ROOT });
  const file = path.join(REPO_ROOT, 'src/core/executor.ts');
  const text = `import { createHttpServer } from '../transports/http.js';\nexport const x = createHttpServer;\n` + readFileSync(file, 'utf8');
  const [result] = await eslint.lintText(text, { filePath: file });
  assert.ok(
    result.messages.some((m) => m.ruleId === 'import-x/no-restricted-paths' && m.line === 1),
    JSON.stringify(result.messages.map((m) => [m.ruleId, m.line])),
  );
});
