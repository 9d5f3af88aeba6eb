// Keeps the conformance counts from falling (docs/conformance.md).
// Always: a representative subset of the official suite's server scenarios (content, progress,
// elicitation through the shim, resources, prompts, input_required, caching), run directly against
// the conformance fixture and through the gateway over stdio and 2026-07-28 HTTP, in ~20 s. The run
// must report no unexpected failure (test/fixtures/conformance-expected-failures.yaml).
// With CONFORMANCE_FULL=1: the whole matrix (`npm run conformance`, ~2–4 min), whose pass counts
// must not fall below test/fixtures/conformance-baseline.json.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

const RUNNER = path.join(REPO_ROOT, 'test/conformance/run.mjs');

interface Summary {
  counts: Record<string, Record<string, { passed: number; of: number }>>;
  problems: string[];
  errors: string[];
  results: Record<string, Record<string, Record<string, { pass: boolean }>>>;
}

/** Runs the conformance runner with `args` into a new temp directory, removed at `t`'s teardown whatever the outcome. */
function run(t: { after(fn: () => void): void }, args: string[], timeoutMs: number): Promise<{ code: number | null; out: string; summary: Summary }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-conformance-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, '--no-build', '--out', dir, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const buf: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => buf.push(c));
    child.stderr.on('data', (c: Buffer) => buf.push(c));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const out = Buffer.concat(buf).toString('utf8');
      try {
        const summary = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')) as Summary;
        resolve({ code, out, summary });
      } catch (e) {
        reject(new Error(`no summary.json (exit ${code}):\n${out}\n${String(e)}`));
      }
    });
  });
}

const SUBSET_01 = [
  'tools-call-simple-text',
  'tools-call-with-progress',
  'tools-call-elicitation',
  'tools-call-sampling',
  'resources-read-text',
  'prompts-get-with-args',
];
const SUBSET_2026 = [
  'tools-call-simple-text',
  'input-required-result-basic-elicitation',
  'input-required-result-multi-round',
  'caching',
  'resources-read-binary',
];

test('conformance subset: direct, and through the gateway over stdio and 2026-07-28 HTTP', { timeout: 120_000 }, async (t) => {
  const paths = 'direct,gw-stdio,gw-http-2026';
  // The two suites at once: each run starts its own fixture and gateways on their own ports.
  const [a, b] = await Promise.all([
    run(t, ['--paths', paths, '--suites', '0.1', ...SUBSET_01.flatMap((s) => ['--scenario', s])], 90_000),
    run(t, ['--paths', paths, '--suites', '0.2@2026-07-28', ...SUBSET_2026.flatMap((s) => ['--scenario', s])], 90_000),
  ]);
  for (const r of [a, b]) {
    assert.deepEqual(r.summary.errors, [], r.out);
    assert.deepEqual(r.summary.problems, [], r.out);
    assert.equal(r.code, 0, r.out);
  }
  for (const p of paths.split(',')) {
    assert.equal(a.summary.counts['0.1'][p].passed, SUBSET_01.length, `0.1 via ${p}\n${a.out}`);
    assert.equal(b.summary.counts['0.2@2026-07-28'][p].passed, SUBSET_2026.length, `0.2@2026-07-28 via ${p}\n${b.out}`);
  }
});

test('conformance, full matrix: counts at or above the committed baseline', { skip: process.env.CONFORMANCE_FULL !== '1', timeout: 600_000 }, async (t) => {
  const baseline = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/fixtures/conformance-baseline.json'), 'utf8')) as Summary['counts'];
  const r = await run(t, [], 540_000);
  for (const [suite, byPath] of Object.entries(baseline))
    for (const [p, want] of Object.entries(byPath)) {
      const got = r.summary.counts[suite]?.[p];
      assert.ok(got && got.passed >= want.passed, `${suite} via ${p}: ${got?.passed ?? 'no result'} passed, baseline ${want.passed}\n${r.out}`);
    }
});
