// The official schemas strict mode uses live under src/ (not test/fixtures), are the verbatim
// files PROVENANCE.md names, and are emitted beside the compiled validator.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';
import { SCHEMAS_DIR } from '../../src/strict/validator.js';

const SRC = path.join(REPO_ROOT, 'src/strict/schemas');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

test('every vendored schema matches the SHA-256 PROVENANCE.md records, and every recorded file is there', () => {
  const rows = [
    ...readFileSync(path.join(SRC, 'PROVENANCE.md'), 'utf8').matchAll(/^\| `([\d-]+\.schema\.json)` \| ([\d-]+) \| [^|]+ \| `([0-9a-f]{64})` \|$/gm),
  ];
  const recorded = Object.fromEntries(rows.map((m) => [m[1], m[3]]));
  const files = readdirSync(SRC).filter((f) => f.endsWith('.json'));
  assert.deepEqual(Object.keys(recorded).sort(), files.sort());
  assert.deepEqual(
    Object.keys(recorded).sort(),
    ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'].map((r) => `${r}.schema.json`),
  );
  for (const f of files) assert.equal(sha256(readFileSync(path.join(SRC, f))), recorded[f], f);
});

test('the build emits the schemas beside the compiled validator, with the same content (tsc re-indents JSON)', () => {
  for (const f of readdirSync(SRC).filter((x) => x.endsWith('.json')))
    assert.deepEqual(JSON.parse(readFileSync(new URL(f, SCHEMAS_DIR), 'utf8')), JSON.parse(readFileSync(path.join(SRC, f), 'utf8')), f);
});

test('no run-time code reads test fixtures', () => {
  const sources = ['src', 'dialects'].flatMap((d) =>
    readdirSync(path.join(REPO_ROOT, d), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(d, f)),
  );
  assert.ok(sources.length > 100);
  assert.deepEqual(
    sources.filter((f) => readFileSync(path.join(REPO_ROOT, f), 'utf8').includes('test/fixtures')),
    [],
  );
});
