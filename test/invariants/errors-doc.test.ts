// docs/errors.md holds the catalogue's tables exactly as generated from src/core/errors.ts.
// SWITCHYARD_UPDATE_DOCS=1 rewrites them; otherwise the test fails when they drift.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Catalogue, type CatalogueEntry } from '../../src/core/errors.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const DOC = path.join(REPO_ROOT, 'docs/errors.md');
const esc = (s: string) => s.replace(/\|/g, '\\|');

/** The two tables of docs/errors.md, one row per catalogue code. */
function tables(): string {
  let out = '\n## Wire errors\n\n| Code | HTTP status | JSON-RPC code | Fault | Message | When | What to do |\n|---|---|---|---|---|---|---|\n';
  for (const [k, e] of Object.entries(Catalogue) as Array<[string, CatalogueEntry]>)
    if (e.wire !== false) out += `| \`${k}\` | ${e.status} | ${e.rpc} | ${e.fault} | ${esc(e.message)} | ${esc(e.when)} | ${esc(e.action)} |\n`;
  out += '\n## Local errors (never sent to a peer)\n\n| Code | Fault | Message | When | What to do |\n|---|---|---|---|---|\n';
  for (const [k, e] of Object.entries(Catalogue) as Array<[string, CatalogueEntry]>)
    if (e.wire === false) out += `| \`${k}\` | ${e.fault} | ${esc(e.message)} | ${esc(e.when)} | ${esc(e.action)} |\n`;
  return out + '\n';
}

test('docs/errors.md lists every catalogue entry, in step with src/core/errors.ts', () => {
  const doc = readFileSync(DOC, 'utf8');
  const m = /(<!-- catalogue:start[^>]*-->)([\s\S]*)(<!-- catalogue:end -->)/.exec(doc);
  assert.ok(m, 'docs/errors.md lacks the catalogue markers');
  const want = tables();
  if (process.env.SWITCHYARD_UPDATE_DOCS === '1' && m[2] !== want) writeFileSync(DOC, doc.replace(m[0], m[1] + want + m[3]));
  else assert.equal(m[2], want);
});

test('catalogue codes follow SWY_ERR_<AREA>_<WHAT> and messages are unique', () => {
  const seen = new Set<string>();
  for (const [code, e] of Object.entries(Catalogue)) {
    assert.match(code, /^SWY_ERR_[A-Z]+_[A-Z0-9_]+$/);
    assert.ok(!seen.has(e.message), `duplicate message ${e.message}`);
    seen.add(e.message);
  }
});
