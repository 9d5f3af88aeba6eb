// Every temp directory a test makes is removed whatever the test's outcome: a `mkdtemp` is bound
// to a name, and that name is removed (`rm`/`rmSync`) in the same top-level block, registered
// with `t.after` or reached through `finally`. Two tests removed theirs on no path at all, and
// every CI run left one more in the OS temp dir (thousands over a machine's life).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

/** The TypeScript sources under test/, relative to the repository. */
function testSources(dir = 'test'): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return testSources(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/**
 * The `mkdtemp` calls of `text` whose directory is not surely removed, as `file:line reason`
 * (a line-based reading of the source, not a parser: enough for the tests' own style). A
 * call's block runs from its line to the next line that starts a top-level statement or closes one
 * (`}` at column 0); within it, an `rm(NAME` or `rmSync(NAME` must appear, and the block must
 * register a teardown (`after(`) or hold the removal after a `finally`.
 */
export function unremovedTempDirs(file: string, text: string): string[] {
  // Template literals blanked (lines kept): generated code in them is not the test's own.
  const lines = text.replace(/`[^`]*`/g, (m) => m.replace(/[^\n]/g, ' ')).split('\n');
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (!/\bmkdtemp(Sync)?\(/.test(line)) return;
    const bound = /(?:const|let)\s+(\w+)\s*=\s*(?:await\s+)?(?:\w+\.)?mkdtemp(?:Sync)?\(/.exec(line);
    if (!bound) return void out.push(`${file}:${i + 1} the directory is not bound to a name`);
    let end = i + 1;
    while (end < lines.length && !/^(\}|test\(|function |async function |export |const |let )/.test(lines[end])) end++;
    const block = lines.slice(i, end);
    const removal = new RegExp(`\\brm(?:Sync)?\\(\\s*${bound[1]}\\b`);
    const at = block.findIndex((l) => removal.test(l));
    if (at < 0) return void out.push(`${file}:${i + 1} ${bound[1]} is never removed`);
    const guarded = block.some((l) => /\bafter\(/.test(l)) || block.slice(0, at).some((l) => /\bfinally\b/.test(l));
    if (!guarded) out.push(`${file}:${i + 1} ${bound[1]} is removed only when the test passes (use t.after or finally)`);
  });
  return out;
}

test('every temp directory a test makes is removed in t.after or finally', () => {
  // This file's own examples are strings, not calls.
  const files = testSources().filter((f) => f !== 'test/invariants/temp-dirs.test.ts');
  const found = files.flatMap((f) => unremovedTempDirs(f, readFileSync(path.join(REPO_ROOT, f), 'utf8')));
  assert.deepEqual(found, []);
});

test('the check tells a removal on every path from one on the passing path alone, and from none', () => {
  const of = (body: string) => unremovedTempDirs('x.ts', `test('t', (t) => {\n${body}\n});\n`);
  assert.deepEqual(of("  const d = mkdtempSync('p');\n  t.after(() => rmSync(d, { recursive: true }));"), []);
  assert.deepEqual(of("  const d = mkdtempSync('p');\n  try {\n    work(d);\n  } finally {\n    rmSync(d, { recursive: true });\n  }"), []);
  assert.deepEqual(of("  const d = mkdtempSync('p');\n  work(d);\n  rmSync(d, { recursive: true });"), [
    'x.ts:2 d is removed only when the test passes (use t.after or finally)',
  ]);
  assert.deepEqual(of("  const d = mkdtempSync('p');\n  work(d);"), ['x.ts:2 d is never removed']);
  assert.deepEqual(of("  work(mkdtempSync('p'));"), ['x.ts:2 the directory is not bound to a name']);
});
